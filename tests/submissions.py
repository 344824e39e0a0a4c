"""Learners' submissions with a classic mistake, shared by the grading tests and the page tests."""

# Values in a list grown with append, computed in the listed order (forward-any-order, Python). A node
# listed before its inputs reads past the end of the list: IndexError.
APPEND_IN_LIST_ORDER = """
import math

def forward_any_order(nodes, leaves):
    values = list(leaves)
    for op, a, b in nodes:
        x = values[a]
        y = None if b is None else values[b]
        values.append(x + y if op == "add" else x * y if op == "mul" else math.tanh(x))
    return values
"""
