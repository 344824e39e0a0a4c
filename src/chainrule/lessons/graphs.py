"""The lesson's computation graphs, defined once as data and built with the engine.

A graph spec in lesson.json looks like
    {"leaves": [["a", 2], ["b", -3]], "nodes": [["e", "mul", "a", "b"]], "output": "e"}
Each node is [label, op, input labels...]; inputs must be defined before they are used.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from chainrule.compute_cost import costs_cpu
from chainrule.engine import Value
from chainrule.errors import InputError
from chainrule.lessons.text import LessonDataError
from chainrule.ops import OPS

__all__ = ["known_ops", "build_graph", "graph_values", "graph_constants", "graph_trace", "explore_graph"]


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


def graph_constants(spec: dict[str, Any]) -> list[str]:
    """The leaves a graph fixes as constants of its formula (`"constants": ["1/n"]`): shown, never edited."""
    return list(spec.get("constants", []))


def graph_trace(spec: dict[str, Any], name: str = "graph", values: dict[str, float] | None = None,
                gradients: dict[Value, float] | None = None) -> tuple[dict[str, Any], dict[str, Value]]:
    """The step trace of the graph (with `values` for some inputs), its constants marked as such; and
    every node by label. `gradients` is filled with each node's gradient (one backward sweep)."""
    from chainrule.traces import trace

    changed = {**spec, "leaves": [[label, float((values or {}).get(label, data))] for label, data in spec["leaves"]]}
    output, nodes = build_graph(changed, name)
    fixed = [nodes[label] for label in graph_constants(spec)]
    return trace(output, gradients=gradients, constants=fixed), nodes


@costs_cpu
def explore_graph(spec: dict[str, Any], values: dict[str, float], nudge: tuple[str, float] | None = None,
                  name: str = "graph") -> dict[str, Any]:
    """The graph with some inputs changed, run through the engine: {"trace": its trace, "nudge": ...}.

    values: {input label: number} for any of the graph's inputs (the others keep the lesson's; a constant
    of the formula cannot be changed). nudge: (input label, h): the nudge check of chainrule.lessons.nudge
    (the output again with that input moved by h, change / h beside the gradient, and why they agree or not).
    Raises InputError (a ValueError) saying what is allowed when a label or a number is not.
    """
    from chainrule.lessons.nudge import nudge_check
    from chainrule.number_text import format_number

    constants = graph_constants(spec)
    inputs = [label for label, _ in spec["leaves"] if label not in constants]
    limits = f"from {format_number(-EXPLORE_LIMIT)} to {format_number(EXPLORE_LIMIT)}"
    for label in sorted(set(values) - set(inputs)):
        if label in constants:
            raise InputError(f"{label} is a constant of the formula, not an input: the inputs you can change are "
                             f"{', '.join(inputs)}", field=label)
        raise InputError(f"graph {name!r} has no input {label!r}: its inputs are {', '.join(inputs)}")
    for label, number in values.items():
        if not (isinstance(number, (int, float)) and math.isfinite(number) and abs(number) <= EXPLORE_LIMIT):
            shown = format_number(number) if isinstance(number, (int, float)) else repr(number)
            raise InputError(f"{label} = {shown} is too large: type a number {limits}", field=label)
    gradients: dict[Value, float] = {}
    steps, nodes = graph_trace(spec, name, values, gradients)
    result: dict[str, Any] = {"trace": steps, "nudge": None}
    if nudge is not None:
        label, h = nudge
        if label not in inputs:
            raise InputError(f"cannot nudge {label!r}: the inputs of graph {name!r} are {', '.join(inputs)}")
        low, high = NUDGE_RANGE
        if not (isinstance(h, (int, float)) and math.isfinite(h) and low <= abs(h) <= high):
            raise InputError(f"h must be a number with {low:g} <= |h| <= {high:g}, not {h!r}", field="h")
        numbers = {leaf: float(values.get(leaf, data)) for leaf, data in spec["leaves"]}

        def build(changed: Mapping[str, float]) -> Value:
            return build_graph({**spec, "leaves": [[leaf, changed[leaf]] for leaf, _ in spec["leaves"]]}, name)[0]

        origin = steps["non_finite"]["text"] if steps["non_finite"] else None
        result["nudge"] = nudge_check(build, numbers, label, h, gradients[nodes[label]], spec["output"],
                                      gradient_origin=origin)
    return result
