"""The four named expressions the `expression-grads` case kind grades on (a case's "expression" field),
built from chainrule's engine.

    neuron:  vals = [x1, w1, x2, w2, b],  out = tanh(x1*w1 + x2*w2 + b)
    reuse:   vals = [a, b],               out = a*b + a*a          (a is used three times)
    chain:   vals = [x, w],               out = x, then ten times  out = tanh(out * w)
    shared:  vals = [x, w],               h = tanh(x*w),  out = h + h*h   (h, an interior value, is used three times)

`shared` is the one whose graph is not a tree above its leaves: h feeds both the final + and h*h.
A backward pass without a topological order gets neuron, reuse and chain right and shared wrong.
`simulate_backward` replays such mistaken walks on engine Values, so the diagnosis can recognise
the numbers a learner's walk produced:

    d out/dx = (1 + 2h)(1 - h^2) w,   d out/dw = (1 + 2h)(1 - h^2) x
"""

from __future__ import annotations

from typing import Protocol, Self, TypeVar

from chainrule.engine import Value
from chainrule.kernels import chain

INPUT_NAMES: dict[str, list[str]] = {
    "neuron": ["x1", "w1", "x2", "w2", "b"],
    "reuse": ["a", "b"],
    "chain": ["x", "w"],
    "shared": ["x", "w"],
}


class Scalar(Protocol):
    """What an expression does with its numbers: a Value, or a dual number replaying a mistake (kinds/tangents.py)."""

    def __add__(self, other: Self) -> Self: ...

    def __mul__(self, other: Self) -> Self: ...

    def tanh(self) -> Self: ...


S = TypeVar("S", bound=Scalar)


class Builder(Protocol):
    def __call__(self, leaves: list[S]) -> S: ...


def _neuron(leaves: list[S]) -> S:
    x1, w1, x2, w2, b = leaves
    return (x1 * w1 + x2 * w2 + b).tanh()


def _reuse(leaves: list[S]) -> S:
    a, b = leaves
    return a * b + a * a


def _chain(leaves: list[S]) -> S:
    x, w = leaves
    out = x
    for _ in range(10):
        out = (out * w).tanh()
    return out


def _shared(leaves: list[S]) -> S:
    x, w = leaves
    h = (x * w).tanh()
    # h first, then h*h: a recursion that skips values it has seen then reaches h before h*h has
    # sent h its share, so both kinds of walk without a topological order go wrong here.
    return h + h * h


BUILDERS: dict[str, Builder] = {
    "neuron": _neuron,
    "reuse": _reuse,
    "chain": _chain,
    "shared": _shared,
}


def build(expr: str, vals: list[float]) -> tuple[list[Value], Value]:
    """(the leaves, out) for expression `expr` over the numbers `vals`."""
    leaves = [Value(float(v), label=name) for v, name in zip(vals, INPUT_NAMES[expr])]
    return leaves, BUILDERS[expr](leaves)


# The walks a learner may write instead of a reverse topological order.
WALKS = ("recursive", "recursive-seen")


def simulate_backward(expr: str, vals: list[float], walk: str) -> list[float]:
    """The leaf gradients a mistaken backward pass leaves behind, replayed on engine Values.

    recursive:       out.grad = 1; visit(v) = v._backward(), then visit every input (no memory),
                     so a value used k times has its _backward run k times, each time with the
                     gradient it has collected so far.
    recursive-seen:  the same, but a value already visited is skipped: each _backward runs once,
                     but possibly before every use has sent its share.

    Each _backward adds local * v.grad to its inputs (+=), as in the exercise's Value class.
    """
    if walk not in WALKS:
        raise ValueError(f"unknown walk {walk!r}; the walks are: {', '.join(WALKS)}")
    leaves, out = build(expr, vals)
    grads: dict[int, float] = {id(out): 1.0}
    seen: set[int] = set()

    def run_backward(v: Value) -> None:
        if v._op is None:  # a leaf
            return
        local = v._op.local(*[p.data for p in v._prev], v.data)
        g = grads.get(id(v), 0.0)
        for child, d in zip(v._prev, local):
            grads[id(child)] = grads.get(id(child), 0.0) + chain(d, g)

    def visit(v: Value) -> None:
        if walk == "recursive-seen":
            if id(v) in seen:
                return
            seen.add(id(v))
        run_backward(v)
        for child in v._prev:
            visit(child)

    visit(out)  # the graphs here are at most about 40 values deep: recursion is fine
    return [grads.get(id(leaf), 0.0) for leaf in leaves]
