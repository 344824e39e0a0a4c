"""Forward mode: how one direction of change in the inputs moves every node of a graph.

`tangents(output, seeds)` sweeps the graph once, inputs first: each node's tangent is the sum, over
its inputs, of the op table's local derivative times that input's tangent (`Op.local`, the same rule
the backward pass uses, read the other way). `jvp(fn, inputs, tangents)` wraps it for a function.

A masked local derivative (relu left of 0, see `ops.chain`) passes nothing, as in the backward pass.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from chainrule.engine import Value, topological_order

__all__ = ["jvp", "tangents"]


def tangents(output: Value, seeds: Mapping[Value, float]) -> dict[Value, float]:
    """The tangent of every node of `output`'s graph, for the leaf tangents `seeds` (missing leaves: 0)."""
    result: dict[Value, float] = {}
    for node in topological_order(output):
        inputs = node._prev
        if not inputs:
            result[node] = float(seeds.get(node, 0.0))
            continue
        slopes = node._op.local(*[p.data for p in inputs], node.data)
        total = 0.0
        for slope, p in zip(slopes, inputs):
            if slope is not None:
                total += float(slope) * result[p]
        result[node] = total
    return result


def jvp(fn: Callable[..., Value], inputs: Sequence[float], tangents: Sequence[float]) -> tuple[float, float]:
    """(fn(*inputs), the derivative of fn at `inputs` in the direction `tangents`), in one forward sweep."""
    if len(inputs) != len(tangents):
        raise ValueError(f"jvp needs one tangent per input: {len(inputs)} inputs, {len(tangents)} tangents")
    leaves = [Value(float(x)) for x in inputs]
    output = fn(*leaves)
    if not isinstance(output, Value):
        output = Value(float(output))
    swept = _sweep(output, {leaf: float(t) for leaf, t in zip(leaves, tangents)})
    return output.data, swept[output]


_sweep = tangents  # jvp's argument is also called `tangents`
