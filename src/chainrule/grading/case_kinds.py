"""Kinds of test cases an exercise folder can ask for; the expected numbers of each come from the engine.

An exercise folder's exercise.json names one kind and lists its cases (only inputs, never answers):

    graph-values      {"name", "leaves": [numbers], "nodes": [[op, a, b], ...]}
                      call f(nodes, leaves); expect every value, leaves first, then the nodes in order.
                      op is "add", "mul" or "tanh"; a, b index the values before the node (b null for tanh).
    graph-values-any-order
                      the same, but a node may use any value (a later node too), so the list is not in
                      an order one can compute it in; expect the values in the given positions.
    graph-grads       as graph-values; expect d(last value)/d(value i) for every value.
    line-loss-grad    {"name", "xs", "ys", "w", "b"}; call f(xs, ys, w, b); expect [loss, dw, db] of the
                      mean squared error of the line y = w*x + b.
    fit-line          {"name", "xs", "ys", "lr", "steps"}; call f(xs, ys, lr, steps); expect [w, b] after
                      `steps` full-batch gradient-descent steps from w = b = 0.

Each kind also recognises classic mistakes from the numbers a failing test produced (`diagnose`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from chainrule.engine import Value
from chainrule.linefit import fit_line_history, loss_and_gradient

__all__ = ["CASE_KINDS", "CaseKind", "CaseError"]

GRAPH_OPS = ("add", "mul", "tanh")


class CaseError(ValueError):
    """A case in an exercise.json is malformed; the message says which field and what is allowed."""


def _same(x: float, y: float) -> bool:
    from chainrule.grading.grader import round9  # the one place grading rounds

    return round9(x) == round9(y)


def _all_same(got: list[float], want: list[float]) -> bool:
    return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))


def _number(case: dict, key: str) -> float:
    value = case.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CaseError(f"{key!r} must be a finite number, not {value!r}")
    return float(value)


def _numbers(case: dict, key: str, at_least: int = 1) -> list[float]:
    value = case.get(key)
    if not isinstance(value, list) or len(value) < at_least:
        raise CaseError(f"{key!r} must be a list of at least {at_least} number(s), not {value!r}")
    return [_number({key: v}, key) for v in value]


# ------------------------------------------------------------------------------------- graphs


def _graph(case: dict, any_order: bool) -> tuple[list[float], list[list]]:
    leaves = _numbers(case, "leaves")
    nodes = case.get("nodes")
    if not isinstance(nodes, list) or not nodes:
        raise CaseError(f"'nodes' must be a non-empty list of [op, a, b], not {nodes!r}")
    total = len(leaves) + len(nodes)
    for position, node in enumerate(nodes):
        where = f"node {position} ({node!r})"
        if not isinstance(node, list) or len(node) != 3 or node[0] not in GRAPH_OPS:
            raise CaseError(f"{where}: a node is [op, a, b] with op one of {', '.join(GRAPH_OPS)}")
        op, a, b = node
        limit = total if any_order else len(leaves) + position
        for name, index in (("a", a), ("b", b)):
            if name == "b" and op == "tanh":
                if index is not None:
                    raise CaseError(f"{where}: b must be null for tanh")
                continue
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < limit:
                raise CaseError(f"{where}: {name} must index a value before the node (0 to {limit - 1})")
    return leaves, nodes


def _topological_positions(leaf_count: int, nodes: list[list]) -> list[int]:
    """Node positions (0-based among the nodes) in an order where inputs come first; CaseError on a cycle."""
    order: list[int] = []
    state: dict[int, str] = {}
    for start in range(len(nodes)):
        stack = [(start, False)]
        while stack:
            position, expanded = stack.pop()
            if expanded:
                state[position] = "done"
                order.append(position)
                continue
            if state.get(position) == "done":
                continue
            if state.get(position) == "open":
                raise CaseError(f"node {position} depends on itself: the graph has a cycle")
            state[position] = "open"
            stack.append((position, True))
            _, a, b = nodes[position]
            for index in (a, b):
                if index is not None and index >= leaf_count and state.get(index - leaf_count) != "done":
                    stack.append((index - leaf_count, False))
    return order


def _graph_on_engine(case: dict, any_order: bool) -> list[Value]:
    leaves, nodes = _graph(case, any_order)
    values: list[Value | None] = [Value(x) for x in leaves] + [None] * len(nodes)
    order = _topological_positions(len(leaves), nodes) if any_order else range(len(nodes))
    for position in order:
        op, a, b = nodes[position]
        left = values[a]
        if op == "tanh":
            values[len(leaves) + position] = left.tanh()
        else:
            right = values[b]
            values[len(leaves) + position] = left + right if op == "add" else left * right
    return values  # type: ignore[return-value]


def _value_labels(case: dict) -> list[str]:
    count = len(case["leaves"])
    return [f"value {i} (leaf)" if i < count else f"value {i} (node {i - count}: {case['nodes'][i - count][0]})"
            for i in range(count + len(case["nodes"]))]


def _in_list_order(case: dict) -> list[float]:
    """What a forward pass that trusts the list order computes, a missing value counting as 0."""
    leaves, nodes = case["leaves"], case["nodes"]
    values = [float(x) for x in leaves] + [0.0] * len(nodes)
    for position, (op, a, b) in enumerate(nodes):
        x = values[a]
        values[len(leaves) + position] = (
            math.tanh(x) if op == "tanh" else x + values[b] if op == "add" else x * values[b])
    return values


def _diagnose_values(case: dict, got: list[float], want: list[float], any_order: bool) -> str | None:
    count = len(case["leaves"])
    if len(got) == len(want) - count:
        return "Return every value, the leaves first and then one value per node, in the order given."
    if len(got) != len(want):
        return None
    if any_order and _all_same(got, _in_list_order(case)):
        return ("Your values match a pass that computes the nodes in the order they are listed, before "
                "their inputs are ready. Find an order where every node comes after its inputs (a "
                "topological order), compute in that order, and store each value in its own position.")
    wrong = next(i for i, (g, w) in enumerate(zip(got, want)) if not _same(g, w))
    if wrong < count:
        return "The leaves come first in the result, unchanged."
    op, a, b = case["nodes"][wrong - count]
    inputs = f"value {a}" if op == "tanh" else f"values {a} and {b}"
    return (f"The first wrong value is {wrong}, node {wrong - count}: {op} of {inputs}. Check how {op} is "
            "computed, and that a and b index the list of all values (the leaves first).")


def _diagnose_grads(case: dict, got: list[float], want: list[float]) -> str | None:
    if len(got) == len(want) and not _same(got[-1], 1.0):
        return "The last value is the output: its gradient with respect to itself is 1."
    return None


# ------------------------------------------------------------------------------------- line fits


def _line(case: dict) -> tuple[list[float], list[float]]:
    xs, ys = _numbers(case, "xs"), _numbers(case, "ys")
    if len(xs) != len(ys):
        raise CaseError(f"'xs' and 'ys' must be as long as each other, not {len(xs)} and {len(ys)}")
    return xs, ys


def _fit_args(case: dict) -> list:
    xs, ys = _line(case)
    steps = case.get("steps")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= 10_000:
        raise CaseError(f"'steps' must be a whole number from 0 to 10000, not {steps!r}")
    return [xs, ys, _number(case, "lr"), steps]


def _fit_expected(case: dict) -> list[float]:
    xs, ys, lr, steps = _fit_args(case)
    last = fit_line_history(xs, ys, lr, steps)[-1]
    return [last["w"], last["b"]]


def fit_variant(xs: list[float], ys: list[float], lr: float, steps: int, variant: str) -> list[float]:
    """[w, b] after the mistaken fits a learner may write instead of full-batch descent."""
    n = len(xs)
    w = b = 0.0
    for _ in range(steps):
        if variant in ("per-point", "per-point-mean"):
            scale = 2.0 / n if variant == "per-point-mean" else 2.0
            for x, y in zip(xs, ys):
                r = w * x + b - y
                w, b = w - lr * scale * r * x, b - lr * scale * r
            continue
        residuals = [w * x + b - y for x, y in zip(xs, ys)]
        dw = sum(r * x for r, x in zip(residuals, xs))
        db = sum(residuals)
        if variant == "no-two-over-n":
            w, b = w - lr * dw, b - lr * db
        elif variant == "sequential":
            w = w - lr * 2.0 / n * dw
            db = sum(w * x + b - y for x, y in zip(xs, ys))
            b = b - lr * 2.0 / n * db
        elif variant == "plus":
            w, b = w + lr * 2.0 / n * dw, b + lr * 2.0 / n * db
    return [w, b]


FIT_HINTS = {
    "per-point": "Your numbers match an update after every single point (stochastic gradient descent). "
                 "This exercise is full batch: add up the gradient over all n points first, scale it by 2/n, "
                 "then update w and b once per step.",
    "per-point-mean": "Your numbers match an update after every single point (stochastic gradient descent), "
                      "each with its share of the mean. This exercise is full batch: add up the gradient over "
                      "all n points first, then update w and b once per step.",
    "no-two-over-n": "Your numbers match a step that uses the plain sum: the gradient of the mean squared "
                     "error is (2/n) times it.",
    "sequential": "Your numbers match an update of b that already used the new w: compute dw and db from "
                  "the same w and b, then update both.",
    "plus": "Your numbers match a step up the slope: gradient descent subtracts, w -= lr * dw.",
}


def _diagnose_fit(case: dict, got: list[float], want: list[float]) -> str | None:
    xs, ys, lr, steps = _fit_args(case)
    if len(got) != 2:
        return "Return the list [w, b]."
    for variant, hint in FIT_HINTS.items():
        if _all_same(got, fit_variant(xs, ys, lr, steps, variant)):
            return hint
    return None


def _loss_args(case: dict) -> list:
    xs, ys = _line(case)
    return [xs, ys, _number(case, "w"), _number(case, "b")]


def _diagnose_loss(case: dict, got: list[float], want: list[float]) -> str | None:
    if len(got) != 3:
        return "Return the list [loss, dw, db]."
    n = len(case["xs"])
    if _all_same(got, [x * n for x in want]):
        return "Your numbers are n times too big: the loss is the mean over the points, so divide the sum by n."
    if _same(got[0], want[0]) and _all_same(got[1:], [x / 2 for x in want[1:]]):
        return "The gradients are half what they should be: the derivative of r**2 is 2*r."
    if _same(got[0], want[0]) and _all_same(got[1:], [-x for x in want[1:]]):
        return ("The gradients have the wrong sign: with r = w*x + b - y, d(r**2)/dw is 2*r*x "
                "(if you wrote r = y - (w*x + b), its derivative brings a minus sign).")
    return None


# ------------------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class CaseKind:
    name: str
    args: Callable[[dict], list]
    expected: Callable[[dict], list[float]]
    labels: Callable[[dict], list[str]]
    diagnose: Callable[[dict, list[float], list[float]], str | None]


def _graph_kind(name: str, any_order: bool, grads: bool) -> CaseKind:
    def args(case: dict) -> list:
        leaves, nodes = _graph(case, any_order)
        return [nodes, leaves]

    def expected(case: dict) -> list[float]:
        values = _graph_on_engine(case, any_order)
        if not grads:
            return [v.data for v in values]
        values[-1].backward()
        return [v.grad for v in values]

    def labels(case: dict) -> list[str]:
        names = _value_labels(case)
        return [f"d out/d {n}" for n in names] if grads else names

    def diagnose(case: dict, got: list[float], want: list[float]) -> str | None:
        return _diagnose_grads(case, got, want) if grads else _diagnose_values(case, got, want, any_order)

    return CaseKind(name, args, expected, labels, diagnose)


CASE_KINDS: dict[str, CaseKind] = {
    kind.name: kind
    for kind in (
        _graph_kind("graph-values", any_order=False, grads=False),
        _graph_kind("graph-values-any-order", any_order=True, grads=False),
        _graph_kind("graph-grads", any_order=False, grads=True),
        CaseKind("line-loss-grad", _loss_args, lambda case: loss_and_gradient(*_loss_args(case)),
                 lambda case: ["loss", "d loss/d w", "d loss/d b"], _diagnose_loss),
        CaseKind("fit-line", _fit_args, _fit_expected, lambda case: ["w", "b"], _diagnose_fit),
    )
}


def describe_kinds() -> str:
    return ", ".join(CASE_KINDS)


def kind_of(name: Any) -> CaseKind:
    if name not in CASE_KINDS:
        raise CaseError(f"unknown case kind {name!r}; the kinds are: {describe_kinds()}")
    return CASE_KINDS[name]
