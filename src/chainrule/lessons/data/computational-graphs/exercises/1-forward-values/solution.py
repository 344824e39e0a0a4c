# chainrule exercise: forward-values
import math


def forward_values(nodes, leaves):
    values = [float(x) for x in leaves]
    for op, a, b in nodes:
        if op == "add":
            values.append(values[a] + values[b])
        elif op == "mul":
            values.append(values[a] * values[b])
        elif op == "tanh":
            values.append(math.tanh(values[a]))
        else:
            raise ValueError(f"unknown op {op!r}")
    return values
