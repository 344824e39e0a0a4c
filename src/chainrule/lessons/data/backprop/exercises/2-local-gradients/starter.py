# chainrule exercise: local-gradients
"""Teach +, * and tanh their backward step.

Every Value that an operation creates gets a `_backward` function. By the time the backward pass
calls it, `out.grad` holds the gradient of the final result with respect to `out`; `_backward` has to
add each input's share of that gradient to the input's own `.grad`. Three of those functions are
still empty (look for TODO). `backward()` and `grads_of()` are finished: leave them as they are.
"""
import math


class Value:
    """One number in a computation graph, plus what the backward pass needs to know about it."""

    def __init__(self, data, _prev=()):
        self.data = data                # the number itself
        self.grad = 0.0                 # d(final result) / d(this value); backward() fills it in
        self._prev = _prev              # the values this one was computed from (none for an input)
        self._backward = lambda: None   # an input has nobody to pass a gradient to

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other))

        def pass_back():
            # TODO: give self and other their share of out.grad
            pass

        out._backward = pass_back
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))

        def pass_back():
            # TODO: give self and other their share of out.grad
            pass

        out._backward = pass_back
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,))

        def pass_back():
            # TODO: give self its share of out.grad
            pass

        out._backward = pass_back
        return out


def backward(out):
    """The backward pass: seed out with gradient 1, then run every _backward, users before inputs."""
    # Lay the values out so that each one comes after everything it was made from. A stack instead
    # of recursion; a value is appended once all of its inputs have been appended.
    order, placed = [], set()
    stack = [(out, False)]
    while stack:
        value, inputs_done = stack.pop()
        if inputs_done:
            order.append(value)
        elif value not in placed:
            placed.add(value)
            stack.append((value, True))
            stack.extend((parent, False) for parent in value._prev)
    out.grad = 1.0
    for value in reversed(order):
        value._backward()


def grads_of(expr, vals, grad):
    """What the tests call: build expression `expr` on the numbers in `vals`, run backward(),
    and copy each input's gradient into `grad` (same order as `vals`)."""
    if expr not in EXPRESSIONS:
        raise ValueError(f"unknown expression {expr!r}; known: {', '.join(EXPRESSIONS)}")
    inputs = [Value(number) for number in vals]
    backward(EXPRESSIONS[expr](*inputs))
    for position, value in enumerate(inputs):
        grad[position] = value.grad
    return grad


# The expressions the tests use, written with the operations above.
def neuron(x1, w1, x2, w2, b):
    return (x1 * w1 + x2 * w2 + b).tanh()


def reuse(a, b):
    return a * b + a * a  # a is read three times


def chain(x, w):
    y = x
    for _ in range(10):
        y = (y * w).tanh()
    return y


def shared(x, w):
    h = (x * w).tanh()
    return h + h * h  # the inner value h is read by two later operations


EXPRESSIONS = {"neuron": neuron, "reuse": reuse, "chain": chain, "shared": shared}
