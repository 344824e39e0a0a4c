"""The lesson's computation graphs, defined once as data and built with the engine.

A graph spec in lesson.json looks like
    {"leaves": [["a", 2], ["b", -3]], "nodes": [["e", "mul", "a", "b"]], "output": "e"}
Each node is [label, op, input labels...]; inputs must be defined before they are used.
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.engine import Value
from chainrule.errors import InputError
from chainrule.ops import OPS
from chainrule.lessons.text import LessonDataError

__all__ = ["known_ops", "build_graph", "graph_values", "explore_graph"]


def known_ops() -> list[str]:
    """The ops a lesson graph may use: every op of the engine's table, by name (docs/engine.md)."""
    return sorted(OPS)


def build_graph(spec: dict[str, Any], name: str = "graph") -> tuple[Value, dict[str, Value]]:
    """Build the graph described by `spec`; return (output Value, {label: Value}). No backward pass yet."""
    values: dict[str, Value] = {}
    for label, data in spec["leaves"]:
        values[label] = Value(float(data), label=label)
    for label, op_name, *inputs in spec["nodes"]:
        op = OPS.get(op_name)
        if op is None:
            raise LessonDataError(f"graph {name!r}: node {label!r} uses unknown op {op_name!r}; known: {known_ops()}")
        if len(inputs) != op.arity:
            raise LessonDataError(f"graph {name!r}: node {label!r} ({op_name}) takes {op.arity} "
                                  f"input{'s' if op.arity > 1 else ''}, not {len(inputs)}")
        missing = [i for i in inputs if i not in values]
        if missing:
            raise LessonDataError(f"graph {name!r}: node {label!r} uses {missing} before they are defined")
        node = Value.apply(op, *(values[i] for i in inputs))
        node.label = label
        values[label] = node
    if spec["output"] not in values:
        raise LessonDataError(f"graph {name!r}: output {spec['output']!r} is not a node")
    return values[spec["output"]], values


def graph_values(spec: dict[str, Any], name: str = "graph") -> dict[str, dict[str, float]]:
    """{label: {"data": value, "grad": d(output)/d(label)}} after one backward pass with the engine."""
    output, values = build_graph(spec, name)
    output.backward()
    return {label: {"data": v.data, "grad": v.grad} for label, v in values.items()}


# Limits for numbers a learner types into the explorable graph (kept readable; the error says so).
EXPLORE_LIMIT = 1000.0
NUDGE_RANGE = (1e-6, 1.0)


def explore_graph(spec: dict[str, Any], values: dict[str, float], nudge: tuple[str, float] | None = None,
                  name: str = "graph") -> dict[str, Any]:
    """The graph with some inputs changed, run through the engine: {"trace": its trace, "nudge": ...}.

    values: {input label: number} for any of the graph's inputs (the others keep the lesson's).
    nudge: (input label, h): the output is computed again with that input moved by h, and
    "nudge" = {"input", "h", "before", "after", "change", "ratio" (change / h), "grad" (d output/d input)}.
    Raises InputError (a ValueError) saying what is allowed when a label or a number is not.
    """
    from chainrule.trace import trace

    leaves = [label for label, _ in spec["leaves"]]
    unknown = sorted(set(values) - set(leaves))
    if unknown:
        raise InputError(f"graph {name!r} has no input {', '.join(map(repr, unknown))}: its inputs are {', '.join(leaves)}")
    for label, number in values.items():
        if not (isinstance(number, (int, float)) and math.isfinite(number) and abs(number) <= EXPLORE_LIMIT):
            raise InputError(f"{label} must be a number from -{EXPLORE_LIMIT:g} to {EXPLORE_LIMIT:g}, not {number!r}",
                             field=label)
    changed = {**spec, "leaves": [[label, float(values.get(label, data))] for label, data in spec["leaves"]]}
    output, _ = build_graph(changed, name)
    result: dict[str, Any] = {"trace": trace(output), "nudge": None}
    if nudge is not None:
        label, h = nudge
        if label not in leaves:
            raise InputError(f"cannot nudge {label!r}: the inputs of graph {name!r} are {', '.join(leaves)}")
        low, high = NUDGE_RANGE
        if not (isinstance(h, (int, float)) and math.isfinite(h) and low <= abs(h) <= high):
            raise InputError(f"h must be a number with {low:g} <= |h| <= {high:g}, not {h!r}", field="h")
        moved = {**changed, "leaves": [[leaf, data + h if leaf == label else data] for leaf, data in changed["leaves"]]}
        after, _ = build_graph(moved, name)
        grads = {n["label"]: n["grad"] for n in result["trace"]["nodes"]}
        change = after.data - output.data
        numbers = {"before": output.data, "after": after.data, "change": change, "ratio": change / h}
        # JSON has no nan or infinity: such a number is sent as null.
        result["nudge"] = {"input": label, "h": h, "grad": grads[label]} | {
            key: (value if math.isfinite(value) else None) for key, value in numbers.items()}
    return result
