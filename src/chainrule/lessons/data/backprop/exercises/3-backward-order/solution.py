# chainrule exercise: backward-order
"""Model solution: seed the output, order the values by a depth-first search, walk the order backwards."""
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
            # A sum moves one for one with each input.
            self.grad += out.grad
            other.grad += out.grad

        out._backward = pass_back
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))

        def pass_back():
            # A product moves with each input at the rate of the other input.
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = pass_back
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,))

        def pass_back():
            # tanh's slope, read off its own output.
            self.grad += (1 - out.data**2) * out.grad

        out._backward = pass_back
        return out


def backward(out):
    """The backward pass over every value that `out` was computed from."""
    order, seen = [], set()

    def visit(v):
        # Append v only after everything it was made from: a topological order.
        if v not in seen:
            seen.add(v)
            for parent in v._prev:
                visit(parent)
            order.append(v)

    visit(out)
    out.grad = 1.0
    for v in reversed(order):
        v._backward()


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
