"""The playground: a learner's own expression, run through the engine, as the playground page shows it.

    run_playground("x*y + tanh(x)", {"x": "2", "y": "-3"}, seed="x", nudge=("x", "0.01"))

parses the text with the safe parser of `chainrule graph` (chainrule.expr), builds the graph with the
engine and returns the step trace of its forward and backward passes (with the page layout), the
forward-mode sweep for one input (`chainrule.forward.tangents`) beside the reverse one, and optionally
a nudge check (chainrule.lessons.nudge). Every number comes with its text ("<key>_text" beside it,
chainrule.number_text: the trace carries its own), so the page shows what the server wrote; the
gradients are those of the trace's one backward sweep. Bad input raises `PlaygroundError` naming each problem's field
(and, in the expression, its column).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from chainrule.compute_cost import costs_cpu
from chainrule.drawing import page_layout
from chainrule.engine import Value
from chainrule.errors import InputError
from chainrule.explanations import derivative_notation as derivative_symbol  # d(out)/dx: one notation
from chainrule.expr import Expression, ExpressionError, Node, parse
from chainrule.forward import tangents
from chainrule.lessons.checking import NUMBER_HELP, parse_number, too_large
from chainrule.lessons.graphs import EXPLORE_LIMIT, NUDGE_RANGE
from chainrule.lessons.nudge import nudge_check
from chainrule.number_text import count_text, format_number, number_fields
from chainrule.traces import graph_nodes, trace

__all__ = ["run_playground", "repeated_computations", "PlaygroundError", "Problem", "EXAMPLE", "MAX_CHARS", "MAX_BOXES", "MAX_NAME",
           "STARTING_VALUES"]

EXAMPLE = "x*y + tanh(x)"
MAX_CHARS = 200     # characters of an expression: enough for a neuron or two, short enough to read
MAX_BOXES = 40      # values in the graph (inputs, constants and results): a picture one can follow
MAX_NAME = 10       # characters of a name, so that it fits its box at a readable size
# A name without a value yet starts at one of these (the first lesson's a = 2, b = -3, then others).
STARTING_VALUES = (2.0, -3.0, 0.5, 1.5, -1.0, 4.0)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: the field it belongs to ("expression", "values.x", "nudge.input",
    "nudge.h"), what is wrong and what is allowed, and for the expression where in the text (1-based
    column and the number of characters; None when it is about the whole text)."""

    field: str
    message: str
    column: int | None = None
    length: int | None = None


class PlaygroundError(InputError):
    """The input cannot be run; `problems` lists each one with its field (an InputError: the web's 422)."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.field}: {p.message}" for p in problems), field=problems[0].field,
                         problems=[asdict(p) for p in problems])

    def as_json(self) -> list[dict[str, Any]]:
        return list(self.problems)


# --- reading the input -------------------------------------------------------------------------------


def _parse_expression(text: Any) -> Expression:
    if not isinstance(text, str):
        raise PlaygroundError([Problem("expression", f"an expression is text, not {type(text).__name__}")])
    if len(text) > MAX_CHARS:
        raise PlaygroundError([Problem(
            "expression", f"the expression is {count_text(len(text), 'character')} long; the playground takes at most "
            f"{MAX_CHARS}. Shorten it, or try a part of it first.", MAX_CHARS + 1, len(text) - MAX_CHARS)])
    try:
        return parse(text)
    except ExpressionError as error:
        raise PlaygroundError([Problem("expression", error.message, error.column, error.length)]) from None


def _first_columns(root: Node) -> dict[str, int]:
    """The column where each name first appears (the tree is walked with a stack: any depth is fine)."""
    found: dict[str, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "name":
            found[node.name] = min(node.column, found.get(node.name, node.column))
        stack.extend(node.args)
    return found


def _number(field: str, name: str, raw: Any, low: float, high: float, what: str) -> tuple[float | None, Problem | None]:
    """A typed number (text, or a number from a program) checked to lie in low <= |x| <= high."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return None, Problem(field, f"{name} must be a number typed as text, not {type(raw).__name__}")
    text = raw if isinstance(raw, str) else repr(raw)
    shown = text.strip()[:40]
    if not shown:
        return None, Problem(field, f"{name} is empty: type {what}.")
    number = parse_number(text) if isinstance(raw, str) else float(raw)
    if number is None or not math.isfinite(number):
        if too_large(text):  # its size is the problem, not its digits
            return None, Problem(field, f"{shown} is too large for {name}: type {what}.")
        return None, Problem(field, f"{shown!r} is not a number. {NUMBER_HELP} {name} needs {what}.")
    if not low <= abs(number) <= high:
        return None, Problem(field, f"{name} = {shown} is out of range: type {what}.")
    return number, None


def _value_range() -> str:
    return f"a number from {format_number(-EXPLORE_LIMIT)} to {format_number(EXPLORE_LIMIT)}"


def _agree(a: float, b: float) -> bool:
    """Forward and reverse sums group the same products differently: equal up to rounding."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


# --- the playground ---------------------------------------------------------------------------------


@costs_cpu
def run_playground(expression: Any, values: Mapping[str, Any] | None = None, seed: str | None = None,
                   nudge: tuple[str, Any] | None = None) -> dict[str, Any]:
    """Run `expression` with `values` ({name: typed number}; a name without one starts at one of
    STARTING_VALUES, names not in the expression are ignored) through the engine.

    seed: the input the forward-mode sweep differentiates by (default, or when it is not a name of the
    expression: the first name). nudge: (name, h): the output again with that input moved by h.
    Returns {"expression", "names", "values" ([{name, value, value_text}]), "seed", "trace" (with its
    "layout"), "sweeps" (forward beside reverse mode; None without names), "nudge" (None without one),
    "repeats" (repeated_computations)}, every number with its "<key>_text"; raises PlaygroundError listing
    every problem with its field.
    """
    parsed = _parse_expression(expression)
    values = dict(values or {})
    problems: list[Problem] = []
    columns = _first_columns(parsed.root)
    for name in parsed.names:
        if len(name) > MAX_NAME:
            problems.append(Problem("expression", f"the name {name!r} is {count_text(len(name), 'character')} long; names in the "
                                    f"playground have at most {MAX_NAME}, so that they fit their box",
                                    columns[name], len(name)))
    numbers: dict[str, float] = {}
    for position, name in enumerate(parsed.names):
        if name not in values:
            numbers[name] = STARTING_VALUES[position % len(STARTING_VALUES)]
            continue
        number, problem = _number(f"values.{name}", name, values[name], 0.0, EXPLORE_LIMIT, _value_range())
        if problem is not None:
            problems.append(problem)
        elif number is not None:  # always, when there is no problem
            numbers[name] = number
    moved: tuple[str, float] | None = None
    if nudge is not None:
        label, raw_h = nudge
        low, high = NUDGE_RANGE
        if label not in parsed.names:
            known = ", ".join(parsed.names) or "none: the expression has no names"
            problems.append(Problem("nudge.input", f"there is no input {str(label)[:40]!r} to nudge; the inputs are {known}"))
        h, problem = _number("nudge.h", "h", raw_h, low, high,
                             f"a number with {format_number(low)} <= |h| <= {format_number(high)}")
        if problem is not None:
            problems.append(problem)
        elif label in parsed.names and h is not None:
            moved = (label, h)
    # Count the graph's boxes (with any numbers: the count does not depend on them).
    placeholder, _ = parsed.build({name: numbers.get(name, 1.0) for name in parsed.names})
    boxes = len(graph_nodes(placeholder))
    if boxes > MAX_BOXES:
        problems.append(Problem("expression", f"the graph of this expression has {count_text(boxes, 'value')}; the playground "
                                f"draws at most {MAX_BOXES}. Shorten it, or try a part of it first."))
    if problems:
        raise PlaygroundError(problems)

    output, leaves = parsed.build(numbers)
    nodes = graph_nodes(output)
    gradients: dict[Value, float] = {}
    steps = trace(output, gradients=gradients)  # the one backward sweep: every gradient and its text
    steps["layout"] = page_layout(steps)
    if seed not in parsed.names:
        seed = parsed.names[0] if parsed.names else None
    return {
        "expression": parsed.text,
        "names": parsed.names,
        "values": [{"name": name} | number_fields("value", numbers[name]) for name in parsed.names],
        "seed": seed,
        "trace": steps,
        "sweeps": _sweeps(steps, nodes, leaves, seed, gradients),
        "nudge": _nudge(parsed, numbers, leaves, steps, moved, gradients) if moved else None,
        "repeats": repeated_computations(steps),
    }


def repeated_computations(steps: dict[str, Any]) -> list[list[str]]:
    """The computations an expression writes more than once ((a*b) + (a*b)**2 writes a*b twice): groups of
    node ids that compute the same thing from the same inputs, each group in node order. The engine does
    not share them: every time the text writes a computation it builds a new node, with its own value and
    gradient. A repeat inside a larger repeat is left out (the larger one says it)."""
    nodes = steps["nodes"]
    shape: dict[str, Any] = {}
    for n in nodes:  # topological order: inputs first
        if not n["inputs"]:
            shape[n["id"]] = ("constant", n["data"]) if n.get("constant") else ("input", n["label"])
        else:
            shape[n["id"]] = (n["op"], n["symbol"], *(shape[i] for i in n["inputs"]))
    groups: dict[Any, list[str]] = {}
    for n in nodes:
        if n["inputs"]:
            groups.setdefault(shape[n["id"]], []).append(n["id"])
    repeated = [ids for ids in groups.values() if len(ids) > 1]
    in_repeat = {i for ids in repeated for i in ids}
    users = {n["id"]: [u["id"] for u in nodes if n["id"] in u["inputs"]] for n in nodes}
    return [ids for ids in repeated
            if not all(users[i] and set(users[i]) <= in_repeat for i in ids)]


def _sweeps(steps: dict[str, Any], nodes: list[Value], leaves: dict[str, Value], seed: str | None,
            gradients: dict[Value, float]) -> dict[str, Any] | None:
    """Forward mode beside reverse mode: for every node, d node/d seed (its tangent, from one forward
    sweep) and d output/d node (its gradient, from the backward pass)."""
    if seed is None:
        return None
    swept = tangents(nodes[-1], {leaves[seed]: 1.0})
    rows = []
    for entry, node in zip(steps["nodes"], nodes):
        rows.append({
            "node": entry["id"], "label": entry["label"], "formula": entry.get("formula", ""), "leaf": entry["leaf"],
            **number_fields("value", node.data), **number_fields("tangent", swept[node]),
            **number_fields("grad", gradients[node]),
        })
    seed_entry = next(entry for entry, node in zip(steps["nodes"], nodes) if node is leaves[seed])
    forward = swept[nodes[-1]]
    reverse = gradients[leaves[seed]]
    out = steps["nodes"][-1]["label"]
    return {
        "seed": seed, "seed_node": seed_entry["id"], "output": out, "rows": rows,
        **number_fields("forward", forward), **number_fields("reverse", reverse), "agree": _agree(forward, reverse),
        # How the page writes the derivatives: d(out)/dx, and the two columns' d(node)/dx, d(out)/d(node).
        "symbols": {"result": derivative_symbol(out, seed), "tangent": derivative_symbol("node", seed),
                    "grad": derivative_symbol(out, "node")},
    }


def _nudge(parsed: Expression, numbers: dict[str, float], leaves: dict[str, Value], steps: dict[str, Any],
           moved: tuple[str, float], gradients: dict[Value, float]) -> dict[str, Any]:
    """The nudge check (chainrule.lessons.nudge): the output before and after moving one input by h, the
    change, change / h and the gradient, and why the two agree or not."""
    name, h = moved
    origin = steps["non_finite"]["text"] if steps.get("non_finite") else None
    return nudge_check(lambda changed: parsed.build(dict(changed))[0], numbers, name, h, gradients[leaves[name]],
                       steps["nodes"][-1]["label"], gradient_origin=origin)
