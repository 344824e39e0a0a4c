# chainrule exercise: jacobian-by-sweeps
"""The Jacobian of a function by forward mode: one sweep per input, each seeded at that input.

Return the slopes d y_i / d x_j row by row: [d y1/d x1, d y1/d x2, ..., d y2/d x1, ...].
"""
import math


class Dual:
    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __mul__(self, other):
        return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

    def tanh(self):
        y = math.tanh(self.value)
        return Dual(y, (1 - y * y) * self.tangent)


# Each function takes a list of Dual inputs and returns a list of Dual outputs.
FUNCTIONS = {
    "spread": lambda x: [x[0] * x[0], x[0].tanh(), x[0] * x[0].tanh()],
    "gather": lambda x: [x[0] * x[1] + (x[2] * x[3]).tanh()],
    "layer": lambda x: [(x[0] * x[1] + x[2]).tanh(), x[0] * x[1] * x[2]],
    "swap": lambda x: [x[0] * x[1], x[0] + x[1] * x[1]],
}


def jacobian(name, values):
    function = FUNCTIONS[name]
    # One sweep, seeded at input j: inputs = [Dual(v, 1.0 if k == j else 0.0) for k, v in enumerate(values)],
    # then the tangents of function(inputs) are column j of the Jacobian.
    # TODO: one sweep per input, then the entries row by row
    return []
