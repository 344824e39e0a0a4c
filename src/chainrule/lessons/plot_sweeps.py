"""The sweeps plot: one Jacobian filled two ways, by forward sweeps (a column each) and by reverse sweeps
(a row each), with the work of every sweep counted on the engine's own passes.

    {"kind": "sweeps", "functions": [
       {"name": "gather", "label": "four inputs, one output",
        "inputs": {"x1": 0.5, "x2": -1, "x3": 2, "x4": 0.25}, "outputs": ["x1*x2 + tanh(x3*x4)"]}, ...]}

The outputs (the syntax of `chainrule graph`, called y1, y2, ... in order) are built on one shared set of
input Values, so they form one graph; "let" ([[name, expression], ...], optional) defines values once that
later definitions and the outputs may use, as a network's hidden layer is shared by its outputs. A forward sweep seeds one input with tangent 1
(`chainrule.forward.jvp`, one sweep for every output) and fills that input's column; it visits every node the outputs depend on.
A reverse sweep seeds one output with gradient 1 (`chainrule.engine.reverse_sweep`) and fills that output's
row; its steps are counted by the sweep's own `inspect` hook, one per node it passes a gradient through.
Both ways give the same Jacobian; the counts show which way is cheaper for the shape.

Placeholders: {{plot.<function>.<field>}} with field inputs, outputs, nodes, forward_sweeps,
reverse_sweeps, forward_steps or reverse_steps.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from chainrule.engine import Value, reverse_sweep, topological_order
from chainrule.expr import Expression, ExpressionError, parse
from chainrule.forward import jvp
from chainrule.lessons.text import LessonDataError
from chainrule.number_text import formula_text

__all__ = ["SWEEP_FIELDS", "named_functions", "parse_function", "sweep_number", "sweep_plot", "sweeps_of"]

SWEEP_FIELDS = ("inputs", "outputs", "nodes", "forward_sweeps", "reverse_sweeps", "forward_steps", "reverse_steps")
MAX_SIDE = 8  # inputs or outputs of one function: a Jacobian a page can show


def _parsed(text: Any, known: list[str], where: str) -> Expression:
    if not isinstance(text, str):
        raise LessonDataError(f"plot: {where} must be an expression (text), not {text!r}")
    try:
        expression = parse(text)
    except ExpressionError as error:
        raise LessonDataError(f"plot: {where}: {error.message}") from None
    unknown = [name for name in expression.names if name not in known]
    if unknown:
        raise LessonDataError(f"plot: {where} uses {', '.join(unknown)}, which is neither an input nor defined before it")
    return expression


def parse_function(function: dict[str, Any], where: str) -> tuple[list[str], list[float],
                                                                  list[tuple[str, Expression]], list[Expression]]:
    """A function's input names, their values, its let definitions and its outputs, parsed; LessonDataError
    (its message starting with `where`) says what is wrong. The paths plot reads its functions the same way."""
    inputs = function.get("inputs")
    if not isinstance(inputs, dict) or not 1 <= len(inputs) <= MAX_SIDE or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in inputs.values()):
        raise LessonDataError(f"plot: {where}inputs must map 1 to {MAX_SIDE} input names to numbers")
    known = list(inputs)
    shared = []
    for definition in function.get("let", []):
        if not isinstance(definition, list) or len(definition) != 2 or not isinstance(definition[0], str) \
                or definition[0] in known:
            raise LessonDataError(f"plot: {where}let holds [name, expression] pairs with new names, not {definition!r}")
        shared.append((definition[0], _parsed(definition[1], known, f"{where}let {definition[0]}")))
        known.append(definition[0])
    texts = function.get("outputs")
    if not isinstance(texts, list) or not 1 <= len(texts) <= MAX_SIDE:
        raise LessonDataError(f"plot: {where}outputs must list 1 to {MAX_SIDE} expressions")
    outputs = [_parsed(text, known, f"{where}output {index + 1}") for index, text in enumerate(texts)]
    return list(inputs), [float(v) for v in inputs.values()], shared, outputs


def _build(names: list[str], leaves: Sequence[Value], shared: list[tuple[str, Expression]],
           expressions: list[Expression]) -> list[Value]:
    """The outputs on one shared set of input Values (and shared values defined once): one graph."""
    by_name: dict[str, Value] = dict(zip(names, leaves))
    for name, expression in shared:
        by_name[name] = expression.build_on({n: by_name[n] for n in expression.names})
    return [expression.build_on({name: by_name[name] for name in expression.names}) for expression in expressions]


def _interior(outputs: list[Value]) -> set[Value]:
    return {node for out in outputs for node in topological_order(out, leaves=False)}


def sweeps_of(names: list[str], values: list[float], shared: list[tuple[str, Expression]],
              expressions: list[Expression]) -> dict[str, Any]:
    """Both ways through one graph: {"nodes", "results", "jacobian", "forward": [a frame per input],
    "reverse": [a frame per output]}; a forward frame {"sweep", "seed", "column", "steps", "total"}, a
    reverse one {"sweep", "output", "row", "steps", "total"}."""
    forward, total = [], 0
    for j, name in enumerate(names):
        built: list[list[Value]] = []

        def carried(*leaves: Value, built: list[list[Value]] = built) -> list[Value]:
            built.append(_build(names, leaves, shared, expressions))
            return built[-1]

        _, column = jvp(carried, values, [1.0 if k == j else 0.0 for k in range(len(names))])
        steps = len(_interior(built[0]))  # one sweep carries a tangent through every node it builds
        total += steps
        forward.append({"sweep": j + 1, "seed": name, "column": list(column), "steps": steps, "total": total})
    leaves = [Value(v, label=name) for name, v in zip(names, values)]
    outputs = _build(names, leaves, shared, expressions)
    reverse, total = [], 0
    for i, out in enumerate(outputs):
        grads: dict[Value, float] = {out: 1.0}
        passed: list[Value] = []

        def record(node: Value, gradient: Any, shares: tuple[Any, ...], passed: list[Value] = passed) -> None:
            passed.append(node)

        reverse_sweep(topological_order(out, leaves=False), grads, inspect=record)
        total += len(passed)
        reverse.append({"sweep": i + 1, "output": f"y{i + 1}", "row": [grads.get(leaf, 0.0) for leaf in leaves],
                        "steps": len(passed), "total": total})
    return {"nodes": len(_interior(outputs)), "results": [out.data for out in outputs],
            "jacobian": [frame["row"] for frame in reverse], "forward": forward, "reverse": reverse}


def named_functions(spec: dict[str, Any], plot: str, fields: str) -> list[tuple[str, dict[str, Any]]]:
    """The spec's "functions", each with its name, once each has a name of its own and a label."""
    functions = spec.get("functions")
    if not isinstance(functions, list) or not functions:
        raise LessonDataError(f"plot: {plot} needs \"functions\": a list of {{name, label, {fields}}}")
    named: list[tuple[str, dict[str, Any]]] = []
    for function in functions:
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name or not isinstance(function.get("label"), str) or any(
                taken == name for taken, _ in named):
            raise LessonDataError(f"plot: every function needs a name of its own and a label, not {function!r}")
        named.append((name, function))
    return named


def sweep_plot(spec: dict[str, Any]) -> dict[str, Any]:
    """{"kind", "functions": [{"name", "label", "inputs": [names], "values", "let", "outputs": [texts],
    "formulas" (each definition and output as the page shows it, "y1 = h × h + h"), "results", "nodes",
    "jacobian", "forward": [...], "reverse": [...]}]}."""
    out: list[dict[str, Any]] = []
    for name, function in named_functions(spec, "a sweeps plot", "inputs, outputs"):
        names, values, shared, expressions = parse_function(function, f"function {name!r}: ")
        swept = sweeps_of(names, values, shared, expressions)
        numbers = [d for row in swept["jacobian"] for d in row] + swept["results"]
        numbers += [d for frame in swept["forward"] for d in frame["column"]]
        if not all(math.isfinite(x) for x in numbers):
            raise LessonDataError(f"plot: function {name!r} is not finite at its inputs")
        lets = [list(definition) for definition in function.get("let", [])]
        formulas = [f"{let_name} = {text}" for let_name, text in lets]
        formulas += [f"y{index + 1} = {text}" for index, text in enumerate(function["outputs"])]
        out.append({"name": name, "label": function["label"], "inputs": names, "values": values, "let": lets,
                    "outputs": list(function["outputs"]), "formulas": [formula_text(text) for text in formulas]} | swept)
    return {"kind": "sweeps", "functions": out}


def sweep_number(plot: dict[str, Any], name: str, field: str) -> float:
    function = next((f for f in plot["functions"] if f["name"] == name), None)
    if function is None or field not in SWEEP_FIELDS:
        raise KeyError(f"plot.{name}.{field}")
    if field in ("inputs", "outputs"):
        return len(function[field])
    if field == "nodes":
        return function["nodes"]
    mode, what = field.split("_")
    frames = function[mode]
    return len(frames) if what == "sweeps" else frames[-1]["total"]
