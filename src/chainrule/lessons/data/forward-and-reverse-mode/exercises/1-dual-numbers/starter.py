# chainrule exercise: dual-numbers
"""Forward mode with dual numbers: finish the rules for * and tanh.

A Dual carries a value and its tangent: how fast the value moves when the seeded input moves at speed 1.
Each operation makes a new Dual from its inputs' values and tangents. Addition is worked out below;
the product and tanh are yours (look for TODO). tangent_of() is what the tests call: leave it as it is.
"""
import math


class Dual:
    def __init__(self, value, tangent=0.0):
        self.value = value      # the number itself
        self.tangent = tangent  # how fast it moves when the seeded input moves at speed 1

    def __add__(self, other):
        # Worked example: a sum moves as fast as its two parts together, (a + b)' = a' + b'.
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __mul__(self, other):
        # TODO: the tangent of a product, (a * b)' = a' * b + a * b'
        return Dual(self.value * other.value, 0.0)

    def tanh(self):
        # TODO: the tangent of tanh, (1 - y * y) * a' with y = tanh(a)
        return Dual(math.tanh(self.value), 0.0)


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
