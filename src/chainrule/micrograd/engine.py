"""`Value` with micrograd's constructor and node fields, computed with chainrule's op table."""

from __future__ import annotations

from typing import Any, Iterable

from chainrule.engine import real_or_none, to_float
from chainrule.ops import ADD, EXP, LOG, MUL, POW, RELU, SIGMOID, TANH, Op, power_op

__all__ = ["Value"]


class Value:
    """A scalar and the graph that made it, laid out as micrograd lays it out."""

    def __init__(self, data: Any, _children: Iterable["Value"] = (), _op: str = "", label: str = "") -> None:
        self.data = data if data.__class__ is float else to_float(data)
        self.grad = 0.0
        self._backward = _nothing
        self._children = _children if _children.__class__ is tuple else tuple(_children)  # the inputs in order: the walk follows these, not the set
        self._prev = set(self._children)
        self._op = _op
        self.label = label  # the walkthrough's Value takes a label; micrograd 0.1.0's does not need it

    # --- ops: the node's value from the op table's forward rule, its _backward from the pullback --------

    def __add__(self, other: Any) -> "Value":
        other = _as_value(other)
        return NotImplemented if other is None else _apply(ADD, "+", self, other)

    def __mul__(self, other: Any) -> "Value":
        other = _as_value(other)
        return NotImplemented if other is None else _apply(MUL, "*", self, other)

    def __pow__(self, exponent: Any) -> "Value":
        if isinstance(exponent, Value):  # beyond micrograd, which takes a number only
            return _apply(POW, "**", self, exponent)
        k = real_or_none(exponent)
        return NotImplemented if k is None else _apply(power_op(k), f"**{exponent}", self)

    def relu(self) -> "Value":
        return _apply(RELU, "ReLU", self)

    # tanh and exp are the ops the walkthrough adds; log and sigmoid come along from the same table.
    def tanh(self) -> "Value":
        return _apply(TANH, "tanh", self)

    def exp(self) -> "Value":
        return _apply(EXP, "exp", self)

    def log(self) -> "Value":
        return _apply(LOG, "log", self)

    def sigmoid(self) -> "Value":
        return _apply(SIGMOID, "sigmoid", self)

    # The rest is made of the ops above, as in micrograd, so graphs have micrograd's nodes and _op labels.
    def __neg__(self) -> "Value":
        return self * -1

    def __sub__(self, other: Any) -> "Value":
        other = _as_value(other)
        return NotImplemented if other is None else self + (-other)

    def __truediv__(self, other: Any) -> "Value":
        other = _as_value(other)
        return NotImplemented if other is None else self * other**-1

    def __radd__(self, other: Any) -> "Value":
        return self.__add__(other)

    def __rmul__(self, other: Any) -> "Value":
        return self.__mul__(other)

    def __rsub__(self, other: Any) -> "Value":
        other = _as_value(other)
        return NotImplemented if other is None else other + (-self)

    def __rtruediv__(self, other: Any) -> "Value":
        other = _as_value(other)
        return NotImplemented if other is None else other * self**-1

    # --- the backward pass ----------------------------------------------------------------------------

    def backward(self) -> None:
        """Fill `.grad` of every node with d(self)/d(node) by running each node's `_backward`.

        Interior gradients start again from 0 on every call; leaves (no children) accumulate, so call
        `zero_grad()` between steps, as in micrograd and PyTorch.
        """
        order = _interior_nodes(self)
        if not order:  # a leaf: d self / d self = 1, accumulated like any leaf gradient
            self.grad += 1.0
            return
        for node in order:
            node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            node._backward()

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


def _nothing() -> None:
    pass


def _as_value(x: Any) -> Value | None:
    if isinstance(x, Value):
        return x
    number = real_or_none(x)
    return None if number is None else Value(number)


def _apply(op: Op, symbol: str, a: Value, b: Value | None = None) -> Value:
    """The node `op(a)` or `op(a, b)`, with a `_backward` that hands each input the op's pullback of
    out.grad (None is a masked slope: it passes nothing)."""
    pullback = op.pullback
    if b is None:
        out = Value(op.forward(a.data), (a,), symbol)

        def _backward() -> None:
            (da,) = pullback(out.grad, a.data, out.data)
            if da is not None:
                a.grad += da
    else:
        out = Value(op.forward(a.data, b.data), (a, b), symbol)

        def _backward() -> None:
            da, db = pullback(out.grad, a.data, b.data, out.data)
            if da is not None:
                a.grad += da
            if db is not None:
                b.grad += db

    out._backward = _backward
    return out


def _interior_nodes(root: Value) -> list[Value]:
    """The nodes with children that root depends on, each after its inputs, root last.

    An explicit stack of (node, next child index): no recursion, so any depth works. Children are
    taken in the order they were given, so the order (and every float sum) is the same on every run.
    """
    order: list[Value] = []
    if not root._children:
        return order
    seen = {root}
    stack: list[tuple[Value, int]] = [(root, 0)]
    while stack:
        node, i = stack[-1]
        children = node._children
        if i < len(children):
            stack[-1] = (node, i + 1)
            child = children[i]
            if child not in seen and child._children:
                seen.add(child)
                stack.append((child, 0))
        else:
            stack.pop()
            order.append(node)
    return order
