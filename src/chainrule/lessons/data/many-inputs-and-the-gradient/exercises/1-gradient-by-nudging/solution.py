# chainrule exercise: gradient-by-nudging
"""Estimate a gradient by nudging: move x alone, then y alone, and see how far f moves per unit of h."""
import math

FUNCTIONS = {
    "bowl": lambda x, y: x * x + 3 * y * y,
    "saddle": lambda x, y: x * x - y * y,
    "ridge": lambda x, y: math.tanh(x * y) + x,
}


def nudge_gradient(name, point, h):
    f = FUNCTIONS[name]
    x, y = point
    along_x = (f(x + h, y) - f(x, y)) / h   # y held still
    along_y = (f(x, y + h) - f(x, y)) / h   # x held still
    return [along_x, along_y]
