# chainrule exercise: engine-value
# Build the engine, step 1 of 5: A Value with + and * and their local gradients.

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
            pass  # TODO: send out.grad on to self and other, times the local gradients of +
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = Value.lift(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            pass  # TODO: send out.grad on to self and other, times the local gradients of *
        out._backward = _backward
        return out

    def __radd__(self, other):   # number + Value
        return self + other

    def __rmul__(self, other):   # number * Value
        return self * other
