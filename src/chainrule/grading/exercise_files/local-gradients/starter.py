# chainrule exercise: local-gradients
"""Give each operation its local gradient.

Value holds a number (data), its gradient (grad, starting at 0), the values it was made from
(_prev) and a _backward that passes out.grad back to those values. Fill the three _backward bodies:
    c = a + b    ->  a.grad += c.grad,            b.grad += c.grad
    c = a * b    ->  a.grad += b.data * c.grad,   b.grad += a.data * c.grad
    t = tanh(a)  ->  a.grad += (1 - t.data**2) * t.grad
Always accumulate with +=: a value used twice must collect what comes back from both uses.
backward(out) and grads_of(...) already work; the tests call grads_of.
"""
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
            # TODO: c = a + b passes out.grad to self and to other
            pass

        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))

        def _backward():
            # TODO: c = a * b gives each input the other input's data times out.grad
            pass

        out._backward = _backward
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,))

        def _backward():
            # TODO: t = tanh(a) gives its input (1 - t**2) times out.grad
            pass

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
