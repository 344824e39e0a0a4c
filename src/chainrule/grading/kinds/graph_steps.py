"""Case kinds on a graph given as a list of steps: its forward values, or its gradients.

    graph-values      {"name", "leaves": [numbers], "nodes": [[op, a, b], ...]}
                      call f(nodes, leaves); expect every value, leaves first, then the nodes in order.
                      op is "add", "mul" or "tanh"; a, b index the values before the node (b null for tanh).
    graph-values-any-order
                      the same, but a node may use any value (a later node too), so the list is not in
                      an order one can compute it in; expect the values in the given positions.
    graph-grads       as graph-values; expect d(last value)/d(value i) for every value.
"""

from __future__ import annotations

import math

from chainrule.engine import Value
from chainrule.grading.json_objects import Case, JsonList, JsonObject
from chainrule.grading.kinds.base import (
    Attempt,
    CaseError,
    CaseKind,
    Fills,
    Mistake,
    first_different,
    not_a_number,
    not_finite,
    numbers_field,
    run_all_zero,
)
from chainrule.ops import TANH

__all__ = ["GRAPH_KINDS", "GRAPH_OPS"]

GRAPH_OPS = ("add", "mul", "tanh")
NOT_FINITE = "A number is NaN or infinite: check for a division by zero, or values that grow without bound."


def _graph(case: Case, any_order: bool) -> tuple[list[float], list[JsonList]]:
    leaves = numbers_field(case, "leaves")
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


def _topological_positions(leaf_count: int, nodes: list[JsonList]) -> list[int]:
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


def _graph_on_engine(case: Case, any_order: bool) -> list[Value]:
    leaves, nodes = _graph(case, any_order)
    values: dict[int, Value] = {index: Value(x) for index, x in enumerate(leaves)}
    order = _topological_positions(len(leaves), nodes) if any_order else range(len(nodes))
    for position in order:
        op, a, b = nodes[position]
        left = values[a]
        if op == "tanh":
            values[len(leaves) + position] = left.tanh()
        else:
            right = values[b]
            values[len(leaves) + position] = left + right if op == "add" else left * right
    return [values[index] for index in range(len(leaves) + len(nodes))]


def _value_labels(case: Case) -> list[str]:
    count = len(case["leaves"])
    return [f"value {i} (leaf)" if i < count else f"value {i} (node {i - count}: {case['nodes'][i - count][0]})"
            for i in range(count + len(case["nodes"]))]


def _in_list_order(case: Case, unset: float) -> list[float]:
    """What a forward pass that trusts the list order computes, a value not computed yet reading as
    `unset` (0.0 when the list was filled with zeros; NaN for JavaScript's undefined)."""
    leaves, nodes = case["leaves"], case["nodes"]
    values = [float(x) for x in leaves] + [unset] * len(nodes)
    for position, (op, a, b) in enumerate(nodes):
        x = values[a]
        values[len(leaves) + position] = (
            math.tanh(x) if op == "tanh" else x + values[b] if op == "add" else x * values[b])
    return values


def _same_or_both_nan(got: list[float], want: list[float]) -> bool:
    if len(got) != len(want):
        return False
    return all((math.isnan(w) and not math.isfinite(g)) or (math.isfinite(w) and math.isfinite(g)
               and round(g, 9) == round(w, 9)) for g, w in zip(got, want))


def _nodes_only(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if len(attempt.got) == len(attempt.want) - len(attempt.inputs["leaves"]) else None


def _first_read_ahead(case: Case) -> Fills | None:
    """The first node that, computed in list order, reads a value not computed yet: {node, index}."""
    count = len(case["leaves"])
    for position, (_op, a, b) in enumerate(case["nodes"]):
        for index in (a, b):
            if index is not None and index >= count + position:
                return {"node": str(position), "index": str(index)}
    return None


def _list_order(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    if attempt.matches(attempt.want):
        return None
    for unset in (0.0, math.nan):
        if _same_or_both_nan(attempt.got, _in_list_order(attempt.inputs, unset)):
            return _first_read_ahead(attempt.inputs)
    return None


def _list_order_raised(error: JsonObject, case: Case) -> Fills | None:
    """Python's IndexError (a list grown with append, read past its end) or None used in arithmetic (a list
    filled with None): the list order read a value that is not computed yet."""
    kind, message = error.get("type", ""), error.get("message", "")
    if kind == "IndexError" or (kind == "TypeError" and "NoneType" in message):
        return _first_read_ahead(case)
    return None


def _leaves_changed(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    wrong = first_different(attempt)
    return {} if len(attempt.got) == len(attempt.want) and wrong is not None and wrong < len(
        attempt.inputs["leaves"]) else None


def _node_wrong(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    wrong = first_different(attempt)
    count = len(attempt.inputs["leaves"])
    if len(attempt.got) != len(attempt.want) or wrong is None or wrong < count:
        return None
    op, a, b = attempt.inputs["nodes"][wrong - count]
    inputs = f"value {a}" if op == "tanh" else f"values {a} and {b}"
    return {"index": str(wrong), "node": str(wrong - count), "op": op, "inputs": inputs}


def _backward_by_assignment(case: Case) -> list[float]:
    """The gradients of a backward pass over the list that sets each input's gradient (=) instead of
    adding to it (+=): a value used twice keeps only the share of the use walked last."""
    values = [v.data for v in _graph_on_engine(case, any_order=False)]
    count = len(case["leaves"])
    grads = [0.0] * len(values)
    grads[-1] = 1.0
    for position in reversed(range(len(case["nodes"]))):
        op, a, b = case["nodes"][position]
        here = count + position
        if op == "tanh":
            (local,) = TANH.local(None, values[here])
            grads[a] = local * grads[here]
        elif op == "add":
            grads[a] = grads[here]
            grads[b] = grads[here]
        else:
            grads[a] = values[b] * grads[here]
            grads[b] = values[a] * grads[here]
    return grads


def _overwrite(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    overwritten = _backward_by_assignment(attempt.inputs)
    return {} if attempt.matches(overwritten) and not attempt.matches(attempt.want) else None


def _output_seed(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if len(attempt.got) == len(attempt.want) and not attempt.same(len(attempt.want) - 1) else None


NODES_ONLY = Mistake("nodes-only", "Return every value, the leaves first and then one value per node, in the order given.",
                     _nodes_only, about="the leaves are missing from the result")
LEAVES_CHANGED = Mistake("leaves-changed", "The leaves come first in the result, unchanged.", _leaves_changed,
                         about="a leaf's value is not the one given")
NODE_WRONG = Mistake(
    "node-wrong",
    "The first wrong value is {index}, node {node}: {op} of {inputs}. Check how {op} is computed, and that a and "
    "b index the list of all values (the leaves first).",
    _node_wrong, fields=("index", "node", "op", "inputs"), about="the first wrong value (names the node)")
LIST_ORDER = Mistake(
    "read-before-computed",
    "Your code computes the nodes in the order they are listed, before their inputs are ready: node {node} "
    "reads value {index} before it is computed. Find an order where every node comes after its inputs (a "
    "topological order), compute in that order, and store each value in its own position.",
    _list_order, fields=("node", "index"), raised=_list_order_raised,
    about="the nodes were computed in list order, reading values not computed yet (0, undefined, None or an IndexError)")


def _graph_kind(name: str, any_order: bool, grads: bool) -> CaseKind:
    def args(case: Case) -> JsonList:
        leaves, nodes = _graph(case, any_order)
        return [nodes, leaves]

    def expected(case: Case) -> list[float]:
        values = _graph_on_engine(case, any_order)
        if not grads:
            return [v.data for v in values]
        values[-1].backward()
        return [v.grad for v in values]

    def labels(case: Case) -> list[str]:
        names = _value_labels(case)
        return [f"d out/d {n}" for n in names] if grads else names

    if grads:
        mistakes: tuple[Mistake, ...] = (
            not_a_number(), not_finite(NOT_FINITE),
            run_all_zero("Every gradient is 0: nothing reached any value. Start the backward pass with the "
                         "last value's gradient set to 1, then walk the nodes from the last to the first."),
            Mistake("output-seed", "The last value is the output: its gradient with respect to itself is 1.",
                    _output_seed, about="the output's own gradient is not 1"),
            Mistake("overwrite",
                    "Your gradients match a backward pass that replaces a value's gradient (=) instead of adding "
                    "to it (+=): a value used by more than one node must collect a share from every use.",
                    _overwrite, about="= instead of += in the backward pass"),
        )
    else:
        mistakes = (NODES_ONLY,) + ((LIST_ORDER,) if any_order else ()) + (
            not_a_number(), not_finite(NOT_FINITE), LEAVES_CHANGED, NODE_WRONG)
    return CaseKind(name, args, expected, labels, mistakes)


GRAPH_KINDS = (
    _graph_kind("graph-values", any_order=False, grads=False),
    _graph_kind("graph-values-any-order", any_order=True, grads=False),
    _graph_kind("graph-grads", any_order=False, grads=True),
)
