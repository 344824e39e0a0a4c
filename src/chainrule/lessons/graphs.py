"""The lesson's computation graphs, defined once as data and built with the engine.

A graph spec in lesson.json looks like
    {"leaves": [["a", 2], ["b", -3]], "nodes": [["e", "mul", "a", "b"]], "output": "e"}
Each node is [label, op, input labels...]; inputs must be defined before they are used.
"""

from __future__ import annotations

from typing import Any, Callable

from chainrule.engine import Value
from chainrule.lessons.text import LessonDataError

__all__ = ["BUILDERS", "build_graph", "graph_values"]

# The ops a lesson graph may use, each built with the engine's own operators.
BUILDERS: dict[str, Callable[..., Value]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "neg": lambda a: -a,
    "tanh": lambda a: a.tanh(),
    "exp": lambda a: a.exp(),
    "log": lambda a: a.log(),
    "relu": lambda a: a.relu(),
    "sigmoid": lambda a: a.sigmoid(),
}


def build_graph(spec: dict[str, Any], name: str = "graph") -> tuple[Value, dict[str, Value]]:
    """Build the graph described by `spec`; return (output Value, {label: Value}). No backward pass yet."""
    values: dict[str, Value] = {}
    for label, data in spec["leaves"]:
        values[label] = Value(float(data), label=label)
    for label, op, *inputs in spec["nodes"]:
        if op not in BUILDERS:
            raise LessonDataError(f"graph {name!r}: node {label!r} uses unknown op {op!r}; known: {sorted(BUILDERS)}")
        missing = [i for i in inputs if i not in values]
        if missing:
            raise LessonDataError(f"graph {name!r}: node {label!r} uses {missing} before they are defined")
        node = BUILDERS[op](*(values[i] for i in inputs))
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
