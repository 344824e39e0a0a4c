# chainrule exercise: backward-order
"""Reference solution: a depth-first topological order, walked from the output back to the leaves."""
import math


class Value:
    """A number that remembers the values it was made from, and how to pass a gradient back to them."""

    def __init__(self, data, _prev=()):
        self.data = data
        self.grad = 0.0
        self._prev = _prev
        self._backward = lambda: None

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other))

        def _backward():
            # c = a + b: the local derivative is 1 for both inputs.
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))

        def _backward():
            # c = a * b: each input's local derivative is the other input.
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,))

        def _backward():
            # t = tanh(a): the local derivative is 1 - t**2.
            self.grad += (1 - out.data**2) * out.grad

        out._backward = _backward
        return out


def backward(out):
    """Set out.grad = 1, then call every value's _backward, from out back to the leaves."""
    order, seen = [], set()

    def visit(v):
        if v not in seen:
            seen.add(v)
            for child in v._prev:
                visit(child)
            order.append(v)

    visit(out)
    out.grad = 1.0
    for v in reversed(order):
        v._backward()


def grads_of(expr, vals, grad):
    """Build the expression `expr` from `vals`, run backward, and copy each leaf's gradient into grad."""
    leaves = [Value(v) for v in vals]
    if expr == "neuron":
        x1, w1, x2, w2, b = leaves
        out = (x1 * w1 + x2 * w2 + b).tanh()
    elif expr == "reuse":
        a, b = leaves
        out = a * b + a * a
    elif expr == "chain":
        x, w = leaves
        out = x
        for _ in range(10):
            out = (out * w).tanh()
    elif expr == "shared":
        x, w = leaves
        h = (x * w).tanh()
        out = h + h * h  # h feeds two later values
    else:
        raise ValueError(f"unknown expression {expr!r}")
    backward(out)
    for i, leaf in enumerate(leaves):
        grad[i] = leaf.grad
    return grad
