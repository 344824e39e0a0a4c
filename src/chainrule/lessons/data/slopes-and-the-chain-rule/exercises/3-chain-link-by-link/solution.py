# chainrule exercise: chain-link-by-link
"""x goes through a chain of links, one after the other. Return [y, dy/dx]."""
import math


def chain_slope(links, x):
    value, slope = x, 1.0
    for link in links:
        op = link[0]
        if op == "add":
            local, after = 1.0, value + link[1]
        elif op == "mul":
            local, after = link[1], link[1] * value
        elif op == "square":
            local, after = 2 * value, value * value
        elif op == "tanh":
            after = math.tanh(value)
            local = 1 - after * after
        elif op == "exp":
            after = math.exp(value)
            local = after
        elif op == "recip":
            local, after = -1 / (value * value), 1 / value
        else:
            raise ValueError("unknown link " + repr(op))
        slope = slope * local
        value = after
    return [value, slope]
