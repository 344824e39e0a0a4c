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

Tangents are floats when every primal and tangent given is a number and no other transform is running (the
outermost one). When any of them is a Value, or an outer transform is running (`modes.transforms_running`: an
outer `grad`, `jvp` or `vjp` whose function called this one, over a closure too; or compile's placeholders), each primal
Value gets a node of its own (`ops.IDENTITY`, so that this sweep's derivative is not confused with an
outer one's), the tangents are computed from the op table's pullbacks on the Values themselves, and the
outputs and tangents come back as Values that are part of the caller's graph: differentiable again, by
either mode, to any depth. Sweeps nest (`modes.observe_nodes`): a sweep inside another's function sees the
nodes of the outer one's tangents, so a jvp of a jvp gives second directional derivatives.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, cast

from chainrule.engine import Value, topological_order
from chainrule.modes import observe_nodes, transform_level, transforms_running
from chainrule.ops import IDENTITY

if TYPE_CHECKING:
    from chainrule.engine import Interior

__all__ = ["jvp", "jvp_tree", "tangents", "tree_flatten", "tree_unflatten", "tree_map"]


def _tangent(node: Interior, known: Mapping[Value, Any], graph: bool = False) -> Any:
    """The tangent of an interior node from its inputs' tangents (None: no input has one). With `graph`
    the pullbacks get the Values themselves, so the tangent is a Value built from them."""
    a, b, op = node._a, node._b, node._op
    if op.constant:  # sign, an indicator: no tangent, however the inputs move
        return None
    ta = known.get(a)
    if b is None:
        if ta is None:
            return None
        passed = op.pullback(ta, a, node)[0] if graph else op.pullback(ta, a.data, node.data)[0]
        return 0.0 if passed is None else passed
    tb = known.get(b)
    if ta is None and tb is None:
        return None
    inputs = (a, b, node) if graph else (a.data, b.data, node.data)
    total = None
    if ta is not None:
        passed = op.pullback(ta, *inputs)[0]
        total = 0.0 if passed is None else passed
    if tb is not None:
        passed = op.pullback(tb, *inputs)[1]
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
        known[leaf] = _as_float(t, "a seed of tangents()")
    for node in order:
        if node._op is not None:
            t = _tangent(cast("Interior", node), known)
            if t is not None:
                known[node] = t
    return {node: known.get(node, 0.0) for node in order}


# --- pytrees: nested lists and tuples of scalars, as torch.func takes them --------------------------------


def tree_flatten(tree: Any) -> tuple[list[Any], Any]:
    """The scalars of nested lists, tuples and dicts, in order, and the structure to rebuild them with."""
    if isinstance(tree, dict):
        leaves, spec = tree_flatten(list(tree.values()))
        return leaves, (dict, list(tree), spec)
    if isinstance(tree, (list, tuple)):
        leaves = []
        specs = []
        for item in tree:
            item_leaves, spec = tree_flatten(item)
            leaves.extend(item_leaves)
            specs.append((len(item_leaves), spec))
        return leaves, (type(tree), specs)
    return [tree], None


def tree_unflatten(spec: Any, leaves: Sequence[Any]) -> Any:
    if spec is None:
        return leaves[0]
    if spec[0] is dict:
        return dict(zip(spec[1], tree_unflatten(spec[2], leaves)))
    kind, specs = spec
    items, start = [], 0
    for count, item_spec in specs:
        items.append(tree_unflatten(item_spec, leaves[start:start + count]))
        start += count
    return kind(items)


def tree_map(function: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten(spec, [function(x) for x in leaves])


def as_numbers(tree: Any) -> Any:
    """The tree with each Value replaced by its float: what a transform returns to a caller that gave
    numbers only (no graph asked for)."""
    return tree_map(lambda x: float(x.data) if isinstance(x, Value) else x, tree)


def own_copy(x: Any, what: str) -> Value:
    """A transform's own node for an input: a new node on a Value (connected to the caller's graph), a
    new leaf for a number. `what` names it in an error ("an input of grad")."""
    if isinstance(x, Value):
        return Value.apply(IDENTITY, x)
    return Value(_as_float(x, what))


def wants_graph(*trees: Any) -> bool:
    """Whether a transform builds its results as Values in the caller's graph: when an outer transform
    is running (its function called this one, perhaps over a closure) or a Value is among the inputs."""
    return transforms_running() > 0 or any(isinstance(x, Value) for tree in trees for x in tree_flatten(tree)[0])


def split_aux(result: Any, has_aux: bool, who: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not (isinstance(result, (list, tuple)) and len(result) == 2):
        raise TypeError(f"{who}(..., has_aux=True) needs the function to return a pair (output, aux), "
                        f"not {type(result).__name__}")
    return result[0], result[1]


# --- jvp ---------------------------------------------------------------------------------------------------


def jvp(
    fn: Callable[..., Any], inputs: Sequence[float | Value] | float | Value,
    tangents: Sequence[float | Value] | float | Value, *, has_aux: bool = False,
) -> tuple[Any, ...]:
    """fn's value(s) at `inputs` and its directional derivative(s) along `tangents` (see `jvp_tree`),
    a sequence of outputs coming back as a tuple."""
    return jvp_tree(fn, inputs, tangents, has_aux=has_aux, lists_as_tuples=True)


def jvp_tree(
    fn: Callable[..., Any], inputs: Sequence[float | Value] | float | Value,
    tangents: Sequence[float | Value] | float | Value, *, has_aux: bool = False, lists_as_tuples: bool = False,
    who: str = "jvp",
) -> tuple[Any, ...]:
    """fn's value(s) at `inputs` and its directional derivative(s) along `tangents`, in one sweep.

    fn takes one Value per input and returns a Value, or nested lists and tuples of Values. Returns
    (value, tangent) with the output's structure (a sequence comes back as a tuple), as
    `torch.func.jvp` does; with ``has_aux=True`` fn returns (output, aux) and jvp (value, tangent, aux).
    Numbers in, numbers out; any Value among the inputs or tangents gives Values, part of the caller's
    graph (see the module docstring). Each tangent is computed as its node is made (the ops fn runs
    report to this sweep), so no graph walk follows.
    """
    points, directions = _listed(inputs), _listed(tangents)
    if len(points) != len(directions):
        raise ValueError(f"{who}() needs one tangent per input: {len(points)} inputs, {len(directions)} tangents")
    graph = wants_graph(points, directions)
    seeds: list[Value] | list[float]
    if graph:
        leaves = [own_copy(x, f"an input of {who}") for x in points]
        seeds = [t if isinstance(t, Value) else Value(_as_float(t, f"a tangent of {who}")) for t in directions]
    else:
        leaves = [Value(_as_float(x, f"an input of {who}")) for x in points]
        seeds = [_as_float(t, f"a tangent of {who}") for t in directions]
    known: dict[Value, Any] = {}
    for leaf, t in zip(leaves, seeds):
        known[leaf] = known[leaf] + t if leaf in known else t

    def carry(node: Interior) -> None:  # observe_nodes reports op nodes only
        t = _tangent(node, known, graph)
        if t is not None:
            known[node] = t

    with observe_nodes(carry), transform_level():
        result = fn(*leaves)
    output, aux = split_aux(result, has_aux, "jvp")
    outputs, spec = tree_flatten(output)
    if not all(isinstance(v, Value) for v in outputs):
        raise TypeError(f"{who}() needs fn to return a Value or a sequence of Values, not {type(output).__name__}")
    if lists_as_tuples:
        spec = _tuples(spec)
    if graph:
        values = tree_unflatten(spec, outputs)
        derivatives = tree_unflatten(spec, [_as_value(known.get(v, 0.0)) for v in outputs])
    else:
        values = tree_unflatten(spec, [v.data for v in outputs])
        derivatives = tree_unflatten(spec, [float(known.get(v, 0.0)) for v in outputs])
    if has_aux:
        return values, derivatives, aux if graph else as_numbers(aux)
    return values, derivatives


def _listed(x: Sequence[float | Value] | float | Value) -> list[float | Value]:
    """One input or tangent (a real number or a Value) as a list of one, a sequence of them as a list."""
    if isinstance(x, (float, numbers.Real, Value)):  # float for the type checker, which sees no float as Real
        return [x]
    return list(x)


def _tuples(spec: Any) -> Any:
    """The structure with every list made a tuple: jvp has returned a sequence's results as a tuple."""
    if spec is None:
        return None
    if spec[0] is dict:
        return dict, spec[1], _tuples(spec[2])
    return tuple, [(count, _tuples(item)) for count, item in spec[1]]


def _as_value(x: Any) -> Value:
    return x if isinstance(x, Value) else Value(float(x))


def _as_float(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{what} must be a real number, not {type(x).__name__}")
    return float(x)
