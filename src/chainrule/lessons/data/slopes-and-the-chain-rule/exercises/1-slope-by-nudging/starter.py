# chainrule exercise: slope-by-nudging
"""Estimate a slope by nudging: for each h in hs, how far f moves when x moves by h, per unit of h.

FUNCTIONS holds the functions the tests use, by name. Return [(f(x + h) - f(x)) / h for each h in hs].
"""
import math

FUNCTIONS = {
    "square": lambda x: x * x,
    "cube": lambda x: x * x * x,
    "poly": lambda x: 3 * x * x - 2 * x + 1,
    "wave": lambda x: math.tanh(2 * x),
}


def worked_example():
    """One estimate, worked out: the slope of the square at x = 3, nudged by h = 0.001."""
    f, x, h = FUNCTIONS["square"], 3.0, 0.001
    moved = f(x + h) - f(x)   # how far the output moved: about 0.006
    return moved / h          # per unit of the nudge: about 6.001, near the slope 2x = 6


def nudge_slopes(name, x, hs):
    f = FUNCTIONS[name]
    estimates = []
    for h in hs:
        # TODO: the estimate for this h, computed as worked_example computes one
        estimates.append(0.0)
    return estimates
