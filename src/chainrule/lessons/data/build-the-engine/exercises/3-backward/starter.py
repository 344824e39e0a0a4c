# chainrule exercise: engine-backward
# Build the engine, step 3 of 5: backward(): a topological order, then every node's _backward from the output back.
# It starts from step 2's code; keep it, and add what this step asks for.

import math

class Value:
    """One number in a computation, with the gradient of the final result with respect to it."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._prev = tuple(_children)   # the Values this one was computed from
        self._op = _op
        self._backward = lambda: None   # sends this Value's grad on to its inputs (a leaf has none)

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    @staticmethod
    def lift(x):
        return x if isinstance(x, Value) else Value(x)

    def __add__(self, other):
        other = Value.lift(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            # d(a + b)/da = 1 and d(a + b)/db = 1; += because a value may be used more than once
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = Value.lift(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            # d(a * b)/da = b and d(a * b)/db = a
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):   # number + Value
        return self + other

    def __rmul__(self, other):   # number * Value
        return self * other
    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        e = math.exp(self.data)
        out = Value(e, (self,), "exp")

        def _backward():
            self.grad += e * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        out = Value(self.data ** k, (self,), f"**{k}")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward():
            self.grad += (1.0 if out.data > 0 else 0.0) * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-Value.lift(other))

    def __rsub__(self, other):   # number - Value
        return Value.lift(other) + (-self)

    def __truediv__(self, other):
        return self * Value.lift(other) ** -1

    def __rtruediv__(self, other):   # number / Value
        return Value.lift(other) * self ** -1

    def backward(self):
        # TODO: put the graph in topological order, set this Value's grad to 1, then call every node's
        # _backward from the output back.
        raise NotImplementedError("backward is yours to write")
