"""Step traces of a graph: the forward and backward passes as data a page can animate.

`trace(output)` walks the graph that made `output` and returns a JSON-ready dict (schema
"chainrule.trace/1", see docs/trace.md): every node with its value and gradient, one forward step per
node, and one backward step per interior node. A backward step records, for each input, the chain rule
in numbers::

    contribution = local derivative x upstream gradient       (d out/d input x d output/d out)
    input's gradient += contribution                          (uses of one value add up)

Captions are plain English built from the op table (`Op.formula`, `Op.local_text`, `Op.local`), so the
words and the numbers always come from the same rule as the engine's backward pass.

The backward steps are recorded by the engine's own backward sweep (`engine.reverse_sweep`, with an
`inspect` hook), so the numbers a page shows are the ones `backward()` computes. The schema is the JSON file
`trace_schema.json` next to this module; `chainrule.explain` (explain.py) says one gradient in words.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from chainrule.engine import Value, reverse_sweep, topological_order
from chainrule.ops import Op

__all__ = ["trace", "trace_to_json", "format_number", "graph_nodes", "node_labels", "fill_template",
           "local_derivatives", "TRACE_SCHEMA", "SCHEMA_ID"]

SCHEMA_ID = "chainrule.trace/1"


# --- numbers and names -----------------------------------------------------------------------------


# Multiplication in prose: a sign that no variable is named (a "x" beside an input named x reads wrong);
# "*" stays for code and formulas.
TIMES = "\u00d7"


def format_number(x: float, digits: int = 4) -> str:
    """A float as short readable text; the one rule for every number a learner reads.

    nan, inf and -inf as words; 0 (and -0) as "0"; whole numbers below a million without a decimal point
    (-3, 6); numbers from 1e-4 up to a million with at most `digits` decimals, trailing zeros dropped
    (6.8814, 0.5, 0.7071); anything smaller or larger with `digits` significant digits in exponent form
    (1e-5, 1.235e6). The lesson page's JavaScript applies the same rule (with digits = 4).
    """
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    if 1e-4 <= abs(x) < 1e6:
        text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    mantissa, exponent = f"{x:.{max(digits - 1, 0)}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"  # 1e-05 -> 1e-5, 1.235e+06 -> 1.235e6


def _json_number(x: float) -> float | None:
    """JSON has no nan or infinity: those become null (the caption still says nan/inf)."""
    return float(x) if math.isfinite(x) else None


def graph_nodes(output: Value) -> list[Value]:
    """Every node of the graph, leaves first, then interior nodes in topological order, output last.

    Both parts keep the order of the engine's graph walk (`topological_order`, a left-first depth-first
    walk), so for e = a*b, d = e+c, L = d*f the order is a, b, c, f, e, d, L.
    """
    if not isinstance(output, Value):
        raise TypeError(f"expected a chainrule Value, not {type(output).__name__}")
    order = topological_order(output)
    return [v for v in order if v._op is None] + [v for v in order if v._op is not None]


def node_labels(nodes: list[Value]) -> list[str]:
    """A readable name per node: its label; else its value for a leaf (a constant such as 2);
    else "out" for the output and t1, t2, ... for the other interior nodes (skipping taken names)."""
    taken = {v.label for v in nodes if v.label}
    labels: list[str] = []
    counter = 0
    output = nodes[-1]
    for v in nodes:
        if v.label:
            labels.append(v.label)
        elif not v._prev:
            labels.append(format_number(v.data))
        elif v is output and "out" not in taken:
            labels.append("out")
        else:
            while True:
                counter += 1
                name = f"t{counter}"
                if name not in taken:
                    break
            labels.append(name)
    return labels


def fill_template(template: str, op: Op, names: list[str], out: str) -> str:
    """Put names into an op template: {a}, {b} are the inputs, {out} the result."""
    a = names[0] if names else ""
    b = names[1] if len(names) > 1 else ""
    return template.format(a=a, b=b, out=out)


def _right_side(op: Op) -> str:
    """The part of `op.formula` after "{out} = "."""
    formula = op.formula
    prefix = "{out} = "
    return formula[len(prefix):] if formula.startswith(prefix) else formula


def equation_text(*sides: str) -> str:
    """The sides of a caption's equation joined by " = ", each said once: "e = a * b = 2 * -3 = -6".

    A node labelled by its own expression ("x1*w1 + x2*w2"), or an expression of constants whose
    numbers are its names, would otherwise read "x = x = ..."; a side equal to the one before it,
    spaces aside, is left out.
    """
    kept: list[str] = []
    for side in sides:
        if not kept or "".join(side.split()) != "".join(kept[-1].split()):
            kept.append(side)
    return " = ".join(kept)


def _grouped(text: str) -> str:
    """Parenthesise a compound expression so that 'x (gradient ...)' reads right."""
    return f"({text})" if " " in text.strip() else text


def local_derivatives(node: Value) -> tuple[float | None, ...]:
    """The op table's local derivatives at this node; None marks a masked slope (see ops.chain)."""
    prev = node._prev
    return tuple(None if d is None else float(d) for d in node._op.local(*[p.data for p in prev], node.data))


# --- the trace -----------------------------------------------------------------------------------


def trace(output: Value) -> dict[str, Any]:
    """The forward and backward passes of the graph behind `output`, step by step (schema
    "chainrule.trace/1", docs/trace.md). Does not change any `.grad`: it keeps its own accumulators.

    Backward step 0 seeds d output/d output = 1; each later step is one interior node, in reverse
    topological order, passing contribution = local derivative x its gradient to each input.
    """
    nodes = graph_nodes(output)
    labels = node_labels(nodes)
    index = {id(v): i for i, v in enumerate(nodes)}
    ids = [f"n{i}" for i in range(len(nodes))]
    fmt = format_number

    node_entries: list[dict[str, Any]] = []
    forward: list[dict[str, Any]] = []
    for i, v in enumerate(nodes):
        entry: dict[str, Any] = {
            "id": ids[i], "label": labels[i], "op": v.op, "symbol": v._op.symbol if v._op else "",
            "inputs": [ids[index[id(p)]] for p in v._prev], "data": _json_number(v.data),
            "grad": None, "leaf": not v._prev, "constant": not v._prev and not v.label,
        }
        if v._prev:
            input_labels = [labels[index[id(p)]] for p in v._prev]
            right = _right_side(v._op)
            entry["formula"] = equation_text(labels[i], fill_template(right, v._op, input_labels, labels[i]))
            with_values = fill_template(right, v._op, [fmt(p.data) for p in v._prev], fmt(v.data))
            caption = equation_text(labels[i], fill_template(right, v._op, input_labels, labels[i]), with_values, fmt(v.data))
        elif v.label:
            caption = f"{labels[i]} = {fmt(v.data)} is an input."
        else:
            caption = f"{labels[i]} is a constant input."
        node_entries.append(entry)
        forward.append({"step": i, "node": ids[i], "value": _json_number(v.data), "caption": caption})

    # Backward: the engine's sweep into our own dict, so the graph's .grad stays untouched; each node's
    # step is recorded from what the sweep's pullback passed.
    out_index = len(nodes) - 1
    grads: dict[Value, float] = {output: 1.0}
    received: list[list[float]] = [[] for _ in nodes]  # each contribution each node received
    out_label = labels[out_index]
    backward: list[dict[str, Any]] = [{
        "step": 0, "node": ids[out_index], "grad": 1.0,
        "caption": f"{out_label} is the output, so its gradient is 1.", "contributions": [],
    }]

    def record_step(v: Value, upstream: float, passed: tuple) -> None:
        i = index[id(v)]
        input_labels = [labels[index[id(p)]] for p in v._prev]
        holds: dict[int, float] = {}  # an input's gradient after each contribution (x * x gets two)
        contributions = []
        parts = []
        for k, (p, slope, given) in enumerate(zip(v._prev, local_derivatives(v), passed)):
            j = index[id(p)]
            local = 0.0 if slope is None else slope
            contribution = 0.0 if given is None else float(given)  # masked: passes nothing
            holds[j] = holds.get(j, grads.get(p, 0.0)) + contribution
            received[j].append(contribution)
            local_text = fill_template(v._op.local_text[k], v._op, input_labels, labels[i])
            contributions.append({
                "input": ids[j], "local": _json_number(local), "local_text": local_text,
                "upstream": _json_number(upstream), "contribution": _json_number(contribution),
                "grad_after": _json_number(holds[j]),
            })
            part = (f"{labels[j]} receives {_grouped(local_text)} {TIMES} (gradient at {labels[i]}) = "
                    f"{fmt(local)} {TIMES} {fmt(upstream)} = {fmt(contribution)}")
            if len(received[j]) > 1:
                part += f" ({labels[j]} now holds {_sum_text(received[j])} = {fmt(holds[j])})"
            parts.append(part)
        names_side = fill_template(_right_side(v._op), v._op, input_labels, labels[i])
        caption = f"{equation_text(labels[i], names_side)}, so " + ", and ".join(parts)
        backward.append({
            "step": len(backward), "node": ids[i], "grad": _json_number(upstream),
            "caption": caption, "contributions": contributions,
        })

    reverse_sweep([v for v in nodes if v._op is not None], grads, inspect=record_step)
    grad_of = [grads.get(v, 0.0) for v in nodes]

    for i, entry in enumerate(node_entries):
        entry["grad"] = _json_number(grad_of[i])
        # JSON has no nan/inf: say which one a null stands for.
        if entry["data"] is None:
            entry["data_text"] = fmt(nodes[i].data)
        if entry["grad"] is None:
            entry["grad_text"] = fmt(grad_of[i])
    return {"schema": SCHEMA_ID, "output": ids[out_index], "nodes": node_entries,
            "forward": forward, "backward": backward}


def _sum_text(terms: list[float]) -> str:
    """'2 + 2', or for many uses '... + 2' after the first three terms."""
    shown = [format_number(t) for t in terms]
    if len(shown) > 6:
        shown = shown[:3] + ["..."] + shown[-2:]
    return " + ".join(shown)


def trace_to_json(trace_dict: dict[str, Any], indent: int | None = None) -> str:
    """The trace as JSON text (strict JSON: no NaN or Infinity tokens, those are already null)."""
    return json.dumps(trace_dict, indent=indent, allow_nan=False)


# --- the JSON schema: one file, shipped in the package; docs/trace.md shows it, a test checks the two agree


def _load_schema() -> dict[str, Any]:
    path = Path(__file__).with_name("trace_schema.json")
    return json.loads(path.read_text(encoding="utf-8"))


TRACE_SCHEMA: dict[str, Any] = _load_schema()
