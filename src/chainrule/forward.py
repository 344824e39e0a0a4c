"""Forward mode: the directional derivative carried along with the values, in one forward sweep.

Reverse mode (`backward`, `grad`) gives d output / d every input at the cost of one sweep per output.
Forward mode gives, for one direction t of the inputs, d every node / d inputs . t (its *tangent*) at the
cost of one sweep per direction: the better choice with few inputs and many outputs (docs/engine.md).

No second derivative table: a node's tangent comes from the op table's pullback. The pullback of an input
k hands it local_k x g; with g set to that input's tangent t_k it gives local_k x t_k, formed exactly as
the backward pass forms it, and the node's tangent is the sum of these terms over its inputs. A masked
slope (None) gives an exact 0, as PyTorch's forward mode does.

A node that depends on no seeded input has no tangent at all (a structural zero): its term is left out,
not multiplied by 0, so an inf or nan value upstream of it cannot turn the tangent into nan, as
`torch.func.jvp` treats tensors it was given no tangent for (constants, in particular).
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Mapping, Sequence

from chainrule.engine import Value, topological_order
from chainrule.modes import observe_nodes

__all__ = ["jvp", "tangents"]


def _tangent(node: Value, known: Mapping[Value, float]) -> float | None:
    """The tangent of an interior node from its inputs' tangents (None: no input has one)."""
    a, b, op = node._a, node._b, node._op
    ta = known.get(a)
    if b is None:
        if ta is None:
            return None
        passed = op.pullback(ta, a.data, node.data)[0]
        return 0.0 if passed is None else passed
    tb = known.get(b)
    if ta is None and tb is None:
        return None
    total = None
    if ta is not None:
        passed = op.pullback(ta, a.data, b.data, node.data)[0]
        total = 0.0 if passed is None else passed
    if tb is not None:
        passed = op.pullback(tb, a.data, b.data, node.data)[1]
        passed = 0.0 if passed is None else passed
        total = passed if total is None else total + passed
    return total


def tangents(output: Value, seeds: Mapping[Value, float]) -> dict[Value, float]:
    """The tangent of every node of `output`'s graph, in the engine's graph walk order
    (`topological_order`), for the leaf tangents `seeds`. A leaf left out of `seeds` has tangent 0 and
    passes nothing (see the module docstring). The per-node form of `jvp`, for showing the sweep."""
    if not isinstance(output, Value):
        raise TypeError(f"tangents() takes a Value as output, not {type(output).__name__}")
    order = topological_order(output)
    in_graph = set(order)
    known: dict[Value, float] = {}
    for leaf, t in seeds.items():
        if not isinstance(leaf, Value) or leaf not in in_graph or not leaf.is_leaf():
            raise ValueError(f"seeds are tangents of leaves of the output's graph; {leaf!r} is not one")
        known[leaf] = _as_float(t, "a seed")
    for node in order:
        if node._op is not None:
            t = _tangent(node, known)
            if t is not None:
                known[node] = t
    return {node: known.get(node, 0.0) for node in order}


def jvp(
    fn: Callable[..., Value | Sequence[Value]], inputs: Sequence[float] | float,
    tangents: Sequence[float] | float,
) -> tuple:
    """fn's value(s) at `inputs` and its directional derivative(s) along `tangents`, in one sweep.

    fn takes one Value per input and returns a Value or a sequence of Values. Returns (value, tangent)
    as floats, or (tuple of values, tuple of tangents) when fn returns a sequence. Each tangent is
    computed as its node is made (the ops fn runs report to this sweep), so no graph walk follows.
    """
    single_input = isinstance(inputs, (numbers.Real, Value))
    points = [inputs] if single_input else list(inputs)
    directions = [tangents] if isinstance(tangents, (numbers.Real, Value)) else list(tangents)
    if len(points) != len(directions):
        raise ValueError(f"jvp() needs one tangent per input: {len(points)} inputs, {len(directions)} tangents")
    leaves = [Value(x.data if isinstance(x, Value) else _as_float(x, "an input")) for x in points]
    known: dict[Value, float] = {leaf: _as_float(t, "a tangent") for leaf, t in zip(leaves, directions)}

    def carry(node: Value) -> None:
        t = _tangent(node, known)
        if t is not None:
            known[node] = t

    with observe_nodes(carry):
        result = fn(*leaves)
    outputs = [result] if isinstance(result, Value) else list(result) if isinstance(result, (list, tuple)) else None
    if outputs is None or not all(isinstance(v, Value) for v in outputs):
        raise TypeError(f"jvp() needs fn to return a Value or a sequence of Values, not {type(result).__name__}")
    values = tuple(v.data for v in outputs)
    derivatives = tuple(float(known.get(v, 0.0)) for v in outputs)
    if isinstance(result, Value):
        return values[0], derivatives[0]
    return values, derivatives


def _as_float(x: Any, what: str) -> float:
    if not isinstance(x, numbers.Real):
        raise TypeError(f"{what} of jvp must be a real number, not {type(x).__name__}")
    return float(x)
