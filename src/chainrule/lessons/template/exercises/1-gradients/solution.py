# chainrule exercise: __ID__-gradients
import math


def gradients(nodes, leaves):
    values = list(leaves)
    for op, a, b in nodes:
        values.append(values[a] + values[b] if op == "add" else values[a] * values[b] if op == "mul"
                      else math.tanh(values[a]))
    grads = [0.0] * len(values)
    grads[-1] = 1.0
    for position in reversed(range(len(nodes))):
        op, a, b = nodes[position]
        here = len(leaves) + position
        if op == "add":
            grads[a] += grads[here]
            grads[b] += grads[here]
        elif op == "mul":
            grads[a] += values[b] * grads[here]
            grads[b] += values[a] * grads[here]
        else:
            grads[a] += (1 - values[here] ** 2) * grads[here]
    return grads
