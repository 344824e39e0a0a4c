# chainrule exercise: gradient-by-nudging
"""Estimate a gradient by nudging: move x alone, then y alone, and see how far f moves per unit of h.

FUNCTIONS holds the functions the tests use, by name. Return [df/dx estimate, df/dy estimate].
"""
import math

FUNCTIONS = {
    "bowl": lambda x, y: x * x + 3 * y * y,
    "saddle": lambda x, y: x * x - y * y,
    "ridge": lambda x, y: math.tanh(x * y) + x,
}


def worked_example():
    """The estimate for x, worked out: the bowl at (1, 1), x nudged by h = 0.001 while y stays put."""
    f, x, y, h = FUNCTIONS["bowl"], 1.0, 1.0, 0.001
    moved = f(x + h, y) - f(x, y)   # how far f moved when only x moved: about 0.002
    return moved / h                # per unit of the nudge: about 2.001, near df/dx = 2x = 2


def nudge_gradient(name, point, h):
    f = FUNCTIONS[name]
    x, y = point
    # TODO: the estimate for x (as worked_example does), then the one for y, with x held still
    return [0.0, 0.0]
