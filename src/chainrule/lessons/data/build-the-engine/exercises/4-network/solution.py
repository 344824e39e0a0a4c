# chainrule exercise: engine-network
# Build the engine, step 4 of 5: A neuron, a layer and a network (MLP) made of your own Values.
# It starts from step 3's code; keep it, and add what this step asks for.

import math
import random

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
        # Order the graph so that every node comes after all of its inputs ...
        order, seen = [], set()

        def visit(node):
            if node not in seen:
                seen.add(node)
                for child in node._prev:
                    visit(child)
                order.append(node)
        visit(self)
        # ... then walk it from the output back: each node has all of its gradient before it sends it on.
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


class Neuron:
    """tanh(w . x + b), or w . x + b for a neuron of the last layer."""

    def __init__(self, nin, squash=True):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0.0)
        self.squash = squash

    def __call__(self, x):
        total = self.b
        for wi, xi in zip(self.w, x):
            total = total + wi * xi
        return total.tanh() if self.squash else total

    def parameters(self):
        return self.w + [self.b]


class Layer:
    """Neurons that all read the same inputs; the layer's output is the list of theirs."""

    def __init__(self, nin, nout, squash=True):
        self.neurons = [Neuron(nin, squash) for _ in range(nout)]

    def __call__(self, x):
        return [neuron(x) for neuron in self.neurons]

    def parameters(self):
        return [p for neuron in self.neurons for p in neuron.parameters()]


class MLP:
    """Layers one after another: tanh in every layer but the last, which stays linear."""

    def __init__(self, nin, nouts):
        sizes = [nin] + list(nouts)
        last = len(nouts) - 1
        self.layers = [Layer(sizes[i], sizes[i + 1], squash=i != last) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]
