# chainrule exercise: slope-by-nudging
"""Estimate a slope by nudging: for each h in hs, how far f moves when x moves by h, per unit of h."""
import math

FUNCTIONS = {
    "square": lambda x: x * x,
    "cube": lambda x: x * x * x,
    "poly": lambda x: 3 * x * x - 2 * x + 1,
    "wave": lambda x: math.tanh(2 * x),
}


def nudge_slopes(name, x, hs):
    f = FUNCTIONS[name]
    estimates = []
    for h in hs:
        moved = f(x + h) - f(x)
        estimates.append(moved / h)
    return estimates
