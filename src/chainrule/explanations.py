"""`explain(output, value)`: d output/d value in words, as a sum over paths of products of local derivatives.

Names and numbers read as in the step trace (`chainrule.trace`: its labels, number format and the op
table's formulas), and the total is the engine's own gradient.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from chainrule.engine import Value, grad
from chainrule.number_text import formula_text, operand_text
from chainrule.traces import TIMES, fill_template, format_number, graph_nodes, local_derivatives, node_labels

__all__ = ["explain", "MAX_EXPLAINED_PATHS"]

MAX_EXPLAINED_PATHS = 20  # explain() lists at most this many paths and says when there are more


class _Graph:
    """The graph of an output as explain() walks it: its nodes, their labels, the edges towards the output."""

    def __init__(self, output: Value) -> None:
        self.nodes = graph_nodes(output)
        self.labels = node_labels(self.nodes)
        self.index = {id(v): i for i, v in enumerate(self.nodes)}
        self.out_i = len(self.nodes) - 1
        # users[j]: the edges (user node, input position) leaving node j towards the output.
        self.users: list[list[tuple[int, int]]] = [[] for _ in self.nodes]
        for i, v in enumerate(self.nodes):
            for k, p in enumerate(v._prev):
                self.users[self.index[id(p)]].append((i, k))
        self._locals: dict[int, tuple[float | None, ...]] = {}

    def local(self, i: int, k: int) -> float:
        """The slope of node i with respect to its input k; a masked slope reads as 0 along a path."""
        if i not in self._locals:
            self._locals[i] = local_derivatives(self.nodes[i])
        slope = self._locals[i][k]
        return 0.0 if slope is None else slope

    def step_texts(self, i: int, k: int) -> tuple[str, str]:
        """(node i's formula, its derivative with respect to input k), in the graph's labels."""
        v = self.nodes[i]
        if v._op is None:
            raise ValueError(f"node {i} ({self.labels[i]}) is a leaf: no op made it, so it has no formula")
        input_labels = [self.labels[self.index[id(p)]] for p in v._prev]
        return (formula_text(fill_template(v._op.formula, input_labels, self.labels[i])),
                formula_text(fill_template(v._op.local_text[k], input_labels, self.labels[i])))

    def path_count(self, start: int) -> int:
        """The number of paths from node `start` to the output, counted exactly (there can be exponentially
        many) by walking the nodes from the output back."""
        count = [0] * len(self.nodes)
        count[self.out_i] = 1
        for j in range(len(self.nodes) - 1, -1, -1):
            if j != self.out_i:
                count[j] = sum(count[i] for i, _ in self.users[j])
        return count[start]


def explain(output: Value, value: Value, max_paths: int = MAX_EXPLAINED_PATHS) -> str:
    """d output/d value in words: the sum, over every path from `value` to `output`, of the product
    of the local derivatives along the path (the chain rule, path by path). At most `max_paths`
    paths are listed; the text says how many there are in all when it lists fewer."""
    if not isinstance(value, Value):
        raise TypeError(f"explain() takes a chainrule Value to explain, not {type(value).__name__}")
    graph = _Graph(output)
    out = graph.labels[graph.out_i]
    if id(value) not in graph.index:
        name = value.label or format_number(value.data)
        return (f"{name} is not part of the graph of {out}: no path leads from it to "
                f"{out}, so {derivative_notation(out, name)} = 0.")
    start = graph.index[id(value)]
    name = graph.labels[start]
    if start == graph.out_i:
        return f"{out} is the output itself: {derivative_notation(out, out)} = 1 by definition."
    total_paths = graph.path_count(start)
    gradient = trace_grads(graph.nodes, graph.index)[start]
    paths = list(_paths(start, graph.out_i, graph.users, max_paths))
    lines = [_opening(graph, start, paths, total_paths)]
    zero_paths, total = 0, 0.0
    for number, path in enumerate(paths, start=1):
        product = _add_path(lines, graph, start, number, path)
        total += product
        zero_paths += product == 0
    if len(paths) < total_paths:
        lines.append(f"Showing {len(paths)} of {total_paths} paths (the list is truncated at "
                     f"{max_paths}); the paths shown add up to {format_number(total)}.")
        lines.append(f"Over all {total_paths} paths the sum is {derivative_notation(out, name)} = "
                     f"{format_number(gradient)} (backpropagation adds them all up in one sweep).")
    else:
        lines.append(_sum_line(graph, paths, gradient, derivative_notation(out, name)))
    if zero_paths and zero_paths == len(paths) and len(paths) == total_paths:
        lines.append(f"Every path has a zero factor, so nudging {name} changes {out} by nothing "
                     "right now (to first order).")
    elif zero_paths:
        lines.append(f"{zero_paths} of the paths shown have a zero factor and contribute nothing.")
    return "\n".join(lines)


def _opening(graph: _Graph, start: int, paths: list[list[tuple[int, int]]], total_paths: int) -> str:
    name, out = graph.labels[start], graph.labels[graph.out_i]
    if total_paths == 1:
        (i, k), = paths[0][:1]
        formula, local_text = graph.step_texts(i, k)
        return (f"{name} reaches {out} along one path only, first through {formula}, whose "
                f"derivative with respect to {name} is {local_text} = {format_number(graph.local(i, k))}.")
    return (f"{name} reaches {out} along {total_paths} paths. {derivative_notation(out, name)} is the sum, over "
            "the paths, of the product of the local derivatives along each path.")


def _add_path(lines: list[str], graph: _Graph, start: int, number: int, path: list[tuple[int, int]]) -> float:
    """Add path `number`'s lines (its route, each step's local derivative, their product); returns the product."""
    fmt = format_number
    steps = [graph.labels[start]]
    factors: list[float] = []
    detail = []
    previous = start
    for i, k in path:
        v = graph.nodes[i]
        formula, local_text = graph.step_texts(i, k)
        d = graph.local(i, k)
        factors.append(d)
        steps.append(graph.labels[i])
        value_text = "" if local_text == fmt(d) else f" = {fmt(d)}"
        which = ""
        if len(v._prev) == 2 and v._prev[0] is v._prev[1]:
            which = " (as its first input)" if k == 0 else " (as its second input)"
        detail.append(f"    {formula}: {derivative_notation(graph.labels[i], graph.labels[previous])} = "
                      f"{local_text}{value_text}{which}")
        previous = i
    product = math.prod(factors)
    if len(detail) > 12:  # a long chain: show its ends
        detail = detail[:5] + [f"    ... {len(detail) - 10} more steps ..."] + detail[-5:]
        factor_text = _product_text(factors[:5]) + f" {TIMES} ... {TIMES} " + _product_text(factors[-5:], first=False)
        route = " -> ".join(steps[:6]) + " -> ... -> " + " -> ".join(steps[-5:])
    else:
        factor_text = _product_text(factors)
        route = " -> ".join(steps)
    lines.append(f"  Path {number}: {route}")
    lines.extend(detail)
    lines.append(f"    product: {factor_text} = {fmt(product)}")
    return product


def _sum_line(graph: _Graph, paths: list[list[tuple[int, int]]], gradient: float, notation: str) -> str:
    fmt = format_number
    products = _path_products(paths, graph.local)
    terms = " + ".join([fmt(products[0])] + [operand_text(p, "+ ") for p in products[1:]]) if len(paths) > 1 else None
    if terms:
        return f"Sum over the {len(paths)} paths: {terms} = {fmt(gradient)} = {notation}."
    return f"So {notation} = {fmt(gradient)}."


def _product_text(factors: list[float], first: bool = True) -> str:
    """'-3 × 1 × (-2)': the factors as the captions write a product (a negative after × in parentheses)."""
    shown = [operand_text(f, "" if first and n == 0 else TIMES) for n, f in enumerate(factors)]
    return f" {TIMES} ".join(shown)


def derivative_notation(top: str, bottom: str) -> str:
    """The derivative symbol d top/d bottom, with parentheses around names longer than a letter."""
    def wrap(name: str) -> str:
        return name if len(name) == 1 else f"({name})"
    return f"d{wrap(top)}/d{wrap(bottom)}"


def _path_products(paths: list[list[tuple[int, int]]], local: Any) -> list[float]:
    return [math.prod(local(i, k) for i, k in path) for path in paths]


def _paths(start: int, out_i: int, users: list[list[tuple[int, int]]],
           limit: int) -> Iterator[list[tuple[int, int]]]:
    """Up to `limit` paths from node `start` to the output, as lists of (user node, input position).
    Iterative depth-first search; every node reaches the output, so no branch is a dead end."""
    found = 0
    path: list[tuple[int, int]] = []
    stack: list[tuple[int, int]] = [(start, 0)]  # (node, index of the next user edge to try)
    while stack and found < limit:
        node, edge = stack[-1]
        if node == out_i:
            yield list(path)
            found += 1
            stack.pop()
            if path:
                path.pop()
            continue
        if edge < len(users[node]):
            stack[-1] = (node, edge + 1)
            user, position = users[node][edge]
            path.append((user, position))
            stack.append((user, 0))
        else:
            stack.pop()
            if path:
                path.pop()


def trace_grads(nodes: list[Value], index: dict[int, int]) -> list[float]:
    """d output/d node for every node (output = nodes[-1]), without touching `.grad`."""
    return [g.data for g in grad(nodes[-1], nodes)]
