# chainrule exercise: jacobian-by-sweeps
"""The Jacobian of a function by forward mode: one sweep per input, each seeded at that input."""
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


FUNCTIONS = {
    "spread": lambda x: [x[0] * x[0], x[0].tanh(), x[0] * x[0].tanh()],
    "gather": lambda x: [x[0] * x[1] + (x[2] * x[3]).tanh()],
    "layer": lambda x: [(x[0] * x[1] + x[2]).tanh(), x[0] * x[1] * x[2]],
    "swap": lambda x: [x[0] * x[1], x[0] + x[1] * x[1]],
}


def jacobian(name, values):
    function = FUNCTIONS[name]
    columns = []
    for j in range(len(values)):
        inputs = [Dual(v, 1.0 if k == j else 0.0) for k, v in enumerate(values)]
        columns.append([out.tangent for out in function(inputs)])
    outputs = len(columns[0])
    return [columns[j][i] for i in range(outputs) for j in range(len(values))]
