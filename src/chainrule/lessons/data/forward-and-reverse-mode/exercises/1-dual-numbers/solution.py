# chainrule exercise: dual-numbers
"""Forward mode with dual numbers: a value and its tangent, carried through +, * and tanh."""
import math


class Dual:
    def __init__(self, value, tangent=0.0):
        self.value = value      # the number itself
        self.tangent = tangent  # how fast it moves when the seeded input moves at speed 1

    def __add__(self, other):
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __mul__(self, other):
        return Dual(self.value * other.value, self.tangent * other.value + self.value * other.tangent)

    def tanh(self):
        y = math.tanh(self.value)
        return Dual(y, (1 - y * y) * self.tangent)


def chain(x, w):
    out = x
    for _ in range(10):
        out = (out * w).tanh()
    return out


def shared(x, w):
    h = (x * w).tanh()
    return h + h * h


EXPRESSIONS = {
    "neuron": lambda x1, w1, x2, w2, b: (x1 * w1 + x2 * w2 + b).tanh(),
    "reuse": lambda a, b: a * b + a * a,
    "chain": chain,
    "shared": shared,
}


def tangent_of(expression, values, tangents):
    """What the tests call: build the expression on Duals and return [out.value, out.tangent]."""
    inputs = [Dual(value, tangent) for value, tangent in zip(values, tangents)]
    out = EXPRESSIONS[expression](*inputs)
    return [out.value, out.tangent]
