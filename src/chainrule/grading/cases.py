"""Test cases for the graded exercises, as data, with expected numbers computed by chainrule's engine.

The checked-in file `cases.json` is what the grader reads. This module regenerates it:

    python -m chainrule.grading.cases            # rewrite cases.json from the engine
    python -m chainrule.grading.cases --check    # exit 1 if cases.json has drifted from the engine

Four expressions (built in `chainrule.grading.expressions`), each over a list of input values `vals`
(the leaves, in this order):

    neuron:  vals = [x1, w1, x2, w2, b],  out = tanh(x1*w1 + x2*w2 + b)
    reuse:   vals = [a, b],               out = a*b + a*a          (a is used three times)
    chain:   vals = [x, w],               out = x, then ten times  out = tanh(out * w)
    shared:  vals = [x, w],               h = tanh(x*w), out = h + h*h   (the interior value h is used three times)

For each value set the file stores `out` (the forward value) and `grads` (d out / d vals[i]) exactly as
the engine's floats. The "neuron-grads" exercise reuses the neuron sets: it is given x = [x1, x2],
w = [w1, w2], b and out, and must return [d out/d w1, d out/d w2, d out/d b].
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from chainrule.grading.expressions import INPUT_NAMES, build

CASES_PATH = Path(__file__).with_name("cases.json")
SCHEMA = "chainrule.grading.cases/1"

# The input value sets: the spec's neuron (section 04), then negative, zero and large inputs.
VALUE_SETS: dict[str, list[tuple[str, list[float]]]] = {
    "neuron": [
        ("spec values", [2.0, -3.0, 0.0, 1.0, 6.8813735870195432]),
        ("negative values", [-1.5, 0.8, -0.5, -2.0, -0.25]),
        ("zero values", [0.0, 0.5, 1.5, 0.0, 0.0]),
        ("large values", [150.0, 0.01, -80.0, 0.02, 0.3]),
    ],
    "reuse": [
        ("small values", [3.0, -2.0]),
        ("negative values", [-1.5, -4.0]),
        ("zero values", [0.0, 2.5]),
        ("large values", [1234.5, -987.25]),
    ],
    "chain": [
        ("small values", [0.5, 0.8]),
        ("negative values", [-1.2, -0.7]),
        ("zero values", [0.0, 1.3]),
        ("large values", [40.0, 0.9]),
    ],
    "shared": [
        ("small values", [0.5, 0.8]),
        ("negative values", [-1.2, 0.7]),
        ("zero values", [0.0, 1.3]),
        ("large values", [250.0, -0.006]),
    ],
}

def engine_case(expr: str, vals: list[float]) -> dict[str, Any]:
    """Forward and backward through chainrule's engine: out and d out / d vals[i] for every input."""
    leaves, out = build(expr, vals)
    out.backward()
    return {"out": out.data, "grads": [leaf.grad for leaf in leaves]}


def generate() -> dict[str, Any]:
    """The whole cases document, computed now from the engine."""
    expressions: dict[str, Any] = {}
    for expr, sets in VALUE_SETS.items():
        rows = []
        for name, vals in sets:
            rows.append({"name": name, "vals": list(vals), **engine_case(expr, vals)})
        expressions[expr] = {"inputs": INPUT_NAMES[expr], "sets": rows}
    return {
        "schema": SCHEMA,
        "generator": "python -m chainrule.grading.cases",
        "expressions": expressions,
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


def load_cases(path: Path = CASES_PATH) -> dict[str, Any]:
    """The checked-in cases document."""
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate (or check) the exercise test cases.")
    parser.add_argument("--check", action="store_true", help="exit 1 if cases.json differs from the engine")
    args = parser.parse_args(argv)
    fresh = render(generate())
    if args.check:
        current = CASES_PATH.read_text(encoding="utf-8") if CASES_PATH.exists() else ""
        if current != fresh:
            print(f"{CASES_PATH} has drifted from the engine; run: python -m chainrule.grading.cases")
            return 1
        print("cases.json matches the engine")
        return 0
    CASES_PATH.write_text(fresh, encoding="utf-8")
    print(f"wrote {CASES_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
