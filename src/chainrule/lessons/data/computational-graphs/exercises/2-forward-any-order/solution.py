# chainrule exercise: forward-any-order
import math


def apply(op, x, y):
    if op == "add":
        return x + y
    if op == "mul":
        return x * y
    return math.tanh(x)


def forward_any_order(nodes, leaves):
    first_node = len(leaves)
    values = [float(x) for x in leaves] + [None] * len(nodes)

    def compute(position):
        # An explicit stack, so a long chain cannot exceed Python's recursion limit.
        stack = [position]
        while stack:
            here = stack[-1]
            op, a, b = nodes[here - first_node]
            waiting = [i for i in (a, b) if i is not None and values[i] is None]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            if values[here] is None:
                values[here] = apply(op, values[a], None if b is None else values[b])

    for position in range(first_node, len(values)):
        compute(position)
    return values
