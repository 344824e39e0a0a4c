# chainrule exercise: forward-any-order
"""Compute every value of a graph whose steps are listed in no useful order.

Same format as forward_values, except that a and b may point at any value, even a later node.
Position len(leaves) + i holds node i. Return the values in those positions.
"""
import math


def apply(op, x, y):
    if op == "add":
        return x + y
    if op == "mul":
        return x * y
    return math.tanh(x)


def forward_any_order(nodes, leaves):
    first_node = len(leaves)
    values = list(leaves) + [0.0] * len(nodes)
    # TODO: this uses the listed order, where an input may not be computed yet (it still reads 0.0).
    # Compute the steps in a topological order instead.
    for i, (op, a, b) in enumerate(nodes):
        values[first_node + i] = apply(op, values[a], None if b is None else values[b])
    return values
