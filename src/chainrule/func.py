"""Composable transforms, named and shaped as `torch.func`: `grad`, `grad_and_value`, `vjp`, `jvp`,
`jacrev`, `jacfwd`, `hessian`, and `hvp` (a Hessian-vector product).

Each takes a function of scalars (numbers or Values, or nested lists and tuples of them) and returns a new
function, or its result, as torch.func does with 0-d tensors: a Jacobian has the output's structure, each
output scalar holding the inputs' structure (a tuple over `argnums` when that is a tuple). Numbers in,
numbers out. Each transform runs its function at a level of its own (`modes.transform_level`); one called
while another runs, or given a Value, builds every result as a Value in the caller's graph, with
`create_graph` (reverse mode) or with tangents on Values (forward mode), so the transforms compose in any
order and to any depth, over closures too (an inner function that captures an outer one's variable) (`jacfwd(jacrev(f))` is `hessian(f)`, `grad` of a `jvp`,
a `jvp` of a `jvp`). Each transform gives the inputs it differentiates nodes of their own
(`ops.IDENTITY`), so an inner derivative is never taken with respect to an outer one's variable.

`hvp(f, primals, tangents)` is forward-over-reverse: the jvp of the gradient, as `torch.func.hessian`
computes a Hessian. The one rule where it and reverse-over-reverse (the gradient of gradient . v) differ:
a term whose tangent is structurally zero is left out, never multiplied by 0, so an inf or nan elsewhere in
the graph cannot make an entry nan (docs/engine.md, "Composable transforms").
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from chainrule.engine import Value, enable_grad, no_grad
from chainrule.engine import grad as _reverse
from chainrule.forward import (
    as_numbers,
    jvp,
    jvp_tree,
    own_copy,
    split_aux,
    tree_flatten,
    tree_unflatten,
    wants_graph,
)
from chainrule.modes import transform_level, transforms_running
from chainrule.number_text import count_text
from chainrule.ops import Op

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "hvp", "custom_vjp", "checkpoint"]


def _argnums(argnums: int | Sequence[int], count: int, who: str) -> tuple[tuple[int, ...], bool]:
    """(the positions, whether one was given as an int) or a clear error."""
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    positions = (argnums,) if single else tuple(argnums) if isinstance(argnums, (tuple, list)) else None
    if positions is None or not positions or not all(isinstance(k, int) and not isinstance(k, bool) for k in positions):
        raise TypeError(f"{who}: argnums is an int or a non-empty tuple of ints, not {argnums!r}")
    for k in positions:
        if not -count <= k < count:
            raise ValueError(f"{who}: argnums {k} is out of range for a function called with "
                             f"{count_text(count, 'argument')}")
    positions = tuple(k % count for k in positions)
    repeated = sorted({k for k in positions if positions.count(k) > 1})
    if repeated:
        raise ValueError(f"{who}: argnums names argument {repeated[0]} more than once ({argnums!r}); each "
                         f"position may appear once, as in torch.func")
    return positions, single


def _own_inputs(args: tuple[Any, ...], positions: tuple[int, ...], who: str
                ) -> tuple[list[Any], list[list[Value]], list[Any]]:
    """The arguments with those at `positions` replaced by the transform's own nodes; those nodes per
    position (flattened); and the structure of each."""
    own_args = list(args)
    leaves_per_position: list[list[Value]] = []
    specs: list[Any] = []
    for k in positions:
        leaves, spec = tree_flatten(own_args[k])
        own = [own_copy(x, f"an input of {who}") for x in leaves]
        own_args[k] = tree_unflatten(spec, own)
        leaves_per_position.append(own)
        specs.append(spec)
    return own_args, leaves_per_position, specs


def _scalar_output(out: Any, who: str) -> Value:
    if isinstance(out, Value):
        return out
    if isinstance(out, (int, float)) and not isinstance(out, bool):
        return Value(float(out))  # a constant: its gradient is 0
    raise TypeError(f"{who} needs the function to return one scalar (a Value or a number), not {type(out).__name__}")


def grad_and_value(func: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
                   ) -> Callable[..., Any]:
    """A function returning (gradient, value), or (gradient, (value, aux)) with ``has_aux``, as
    `torch.func.grad_and_value`: the gradient of func's one scalar output with respect to the arguments
    at `argnums`, each with that argument's structure (a tuple of them when argnums is a tuple)."""
    return _grad_and_value(func, argnums, has_aux, "grad_and_value")


def _grad_and_value(func: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool, who: str
                    ) -> Callable[..., Any]:
    """grad_and_value, whose errors name `who`: the transform the user called."""

    def wrapper(*args: Any) -> Any:
        positions, single = _argnums(argnums, len(args), who)
        graph = wants_graph(args)
        own_args, own, specs = _own_inputs(args, positions, who)
        with transform_level():
            out, aux = split_aux(func(*own_args), has_aux, who)
        out = _scalar_output(out, who)
        flat = [x for leaves in own for x in leaves]
        found = _reverse(out, flat, create_graph=graph) if flat else ()
        grads, start = [], 0
        for leaves, spec in zip(own, specs):
            grads.append(tree_unflatten(spec, list(found[start:start + len(leaves)])))
            start += len(leaves)
        result = grads[0] if single else tuple(grads)
        value: Any = out
        if not graph:
            result, value, aux = as_numbers(result), as_numbers(value), as_numbers(aux)
        return (result, (value, aux)) if has_aux else (result, value)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of func (one scalar output) as a function, as `torch.func.grad`: returns the
    gradient, or (gradient, aux) with ``has_aux``. Not to be confused with `chainrule.grad(output,
    inputs)`, the autograd form (as `torch.autograd.grad`), which this one calls."""
    with_value = _grad_and_value(func, argnums, has_aux, "grad")

    def wrapper(*args: Any) -> Any:
        gradient, value = with_value(*args)
        return (gradient, value[1]) if has_aux else gradient

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """(output, vjp_fn) or (output, vjp_fn, aux), as `torch.func.vjp`: vjp_fn(cotangents), with
    cotangents in the output's structure, returns a tuple with, for each primal, the sum over outputs of
    cotangent x d output / d primal, in that primal's structure."""
    graph = wants_graph(primals)
    own_args, own, specs = _own_inputs(primals, tuple(range(len(primals))), "vjp")
    with transform_level():
        output, aux = split_aux(func(*own_args), has_aux, "vjp")
    outputs, out_spec = tree_flatten(output)
    outputs = [_scalar_output(v, "vjp") for v in outputs]
    flat = [x for leaves in own for x in leaves]

    def vjp_fn(cotangents: Any) -> tuple[Any, ...]:
        cots, cot_spec = tree_flatten(cotangents)
        if len(cots) != len(outputs) or cot_spec != out_spec:
            raise ValueError(f"vjp_fn takes cotangents in the output's structure "
                             f"({count_text(len(outputs), 'scalar')}), not {cotangents!r}")
        with_graph = graph or wants_graph(cots)  # called inside a transform, or with Values
        found = _reverse(outputs, flat, create_graph=with_graph, grad_outputs=cots) if flat else ()
        grads, start = [], 0
        for leaves, spec in zip(own, specs):
            grads.append(tree_unflatten(spec, list(found[start:start + len(leaves)])))
            start += len(leaves)
        return tuple(grads) if with_graph else tuple(as_numbers(g) for g in grads)

    value = tree_unflatten(out_spec, outputs)
    if not graph:
        value, aux = as_numbers(value), as_numbers(aux)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jacrev(func: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False
           ) -> Callable[..., Any]:
    """The Jacobian by reverse mode, one vector-Jacobian product per output scalar, as
    `torch.func.jacrev`: the output's structure, each scalar holding the structure of the inputs at
    `argnums` (a tuple over them when argnums is a tuple)."""

    def wrapper(*args: Any) -> Any:
        positions, single = _argnums(argnums, len(args), "jacrev")
        graph = wants_graph(args)
        own_args, own, specs = _own_inputs(args, positions, "jacrev")
        with transform_level():
            output, aux = split_aux(func(*own_args), has_aux, "jacrev")
        outputs, out_spec = tree_flatten(output)
        outputs = [_scalar_output(v, "jacrev") for v in outputs]
        flat = [x for leaves in own for x in leaves]
        rows = []
        for out in outputs:
            found = _reverse(out, flat, create_graph=graph)
            per_position, start = [], 0
            for leaves, spec in zip(own, specs):
                per_position.append(tree_unflatten(spec, list(found[start:start + len(leaves)])))
                start += len(leaves)
            rows.append(per_position[0] if single else tuple(per_position))
        jacobian = tree_unflatten(out_spec, rows)
        if not graph:
            jacobian, aux = as_numbers(jacobian), as_numbers(aux)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False
           ) -> Callable[..., Any]:
    """The Jacobian by forward mode, one jvp per input scalar, as `torch.func.jacfwd` (the same
    structure as `jacrev`)."""
    return _jacfwd(func, argnums, has_aux, "jacfwd")


def _jacfwd(func: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool, who: str) -> Callable[..., Any]:
    """jacfwd, whose errors name `who`: the transform the user called."""

    def wrapper(*args: Any) -> Any:
        positions, single = _argnums(argnums, len(args), who)
        graph = wants_graph(args)
        flats, specs = [], []
        for k in positions:
            leaves, spec = tree_flatten(args[k])
            flats.append(leaves)
            specs.append(spec)
        flat = [x for leaves in flats for x in leaves]

        def of_flat(*xs: Any) -> Any:
            call, start = list(args), 0
            for k, leaves, spec in zip(positions, flats, specs):
                call[k] = tree_unflatten(spec, list(xs[start:start + len(leaves)]))
                start += len(leaves)
            return func(*call)

        columns, out_spec, aux = [], None, None
        for j in range(len(flat)):
            direction = [1.0 if i == j else 0.0 for i in range(len(flat))]
            found = jvp_tree(of_flat, flat, direction, has_aux=has_aux, who=who)
            out, column = found[0], found[1]
            if has_aux:
                aux = found[2]
            columns.append(tree_flatten(column)[0])
            out_spec = tree_flatten(out)[1]
        if not flat:
            raise ValueError(f"{who}: the arguments at argnums hold no scalar to differentiate")
        rows = []
        for i in range(len(columns[0])):
            per_position, start = [], 0
            for leaves, spec in zip(flats, specs):
                per_position.append(tree_unflatten(spec, [columns[j][i] for j in range(start, start + len(leaves))]))
                start += len(leaves)
            rows.append(per_position[0] if single else tuple(per_position))
        jacobian = tree_unflatten(out_spec, rows)
        if not graph:
            jacobian = as_numbers(jacobian)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


def hessian(func: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Hessian, forward-over-reverse, as `torch.func.hessian`: ``jacfwd(jacrev(func, argnums),
    argnums)``."""
    return _jacfwd(jacrev(func, argnums), argnums, False, "hessian")


def hvp(func: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, ...]:
    """(func's value, the Hessian of func at `primals` times `tangents`), as
    `torch.autograd.functional.hvp` shapes it: forward-over-reverse, the jvp of the gradient, in one
    sweep each way (see the module docstring for where it and reverse-over-reverse differ). `primals`
    and `tangents` hold one scalar per argument of func."""
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"hvp needs one tangent per primal: {len(primals)} primals, {len(tangents)} tangents")
    every = tuple(range(len(primals)))
    with_value = _grad_and_value(func, every, False, "hvp")
    (gradient, value), (products, _) = jvp_tree(lambda *xs: with_value(*xs), primals, tangents,
                                                lists_as_tuples=True, who="hvp")
    return value, products


def custom_vjp(forward: Callable[..., float], backward: Callable[..., tuple[Any, ...]], name: str = "") -> Callable[..., Any]:
    """A function of one or two scalars with its own gradient rule, as `jax.custom_vjp` (and a
    `torch.autograd.Function`): ``forward(*xs)`` computes the value from floats, ``backward(g, *xs, out)``
    returns one gradient per input for the gradient g arriving at the result (None: masked, nothing passes).

    The result is one node of an op made for it, so every transform and `compile` honour the rule: grad,
    vjp, jacrev, backward() and compiled replay call `backward` (replay element by element, with floats);
    forward mode (jvp, jacfwd) reads it as every op's pullback is read, with the tangent in place of g, which
    is the jvp for a rule linear in g (a true vjp) and that rule's own tangent otherwise. Second derivatives
    (hessian, a grad of a grad) call `backward` with Values: write it with operators and Value methods, as
    the op table's pullbacks are, or they raise the TypeError of the float function it used."""
    label = name or getattr(forward, "__name__", "custom")
    made: dict[int, Op] = {}

    def op_for(arity: int) -> Op:
        if arity not in (1, 2):
            raise TypeError(f"custom_vjp: {label} takes one or two scalars (a node has at most two inputs), "
                            f"not {arity}")
        if arity not in made:
            made[arity] = Op(
                name=f"custom_vjp:{label}", symbol=label, arity=arity, forward=forward, pullback=backward,
                formula="{out} = " + label + ("({a})" if arity == 1 else "({a}, {b})"),
                local_text=("custom",) * arity, doc=f"{label}, with its own gradient rule (custom_vjp)",
                array_forward=_elementwise(forward, arity, 1), array_pullback=_elementwise_pullback(backward, arity),
            )
        return made[arity]

    def call(*args: Any) -> Any:
        op = op_for(len(args))
        if not any(isinstance(x, Value) for x in args) and not transforms_running():
            return float(op.forward(*(float(x) for x in args)))
        return Value.apply(op, *args)

    call.__name__ = label
    return call


def checkpoint(segment: Callable[..., Any], name: str = "") -> Callable[..., Any]:
    """`segment` (a function of one or two scalars) kept as one node: its inner graph is not stored but
    made again, one segment at a time, when a gradient arrives (gradient checkpointing, as
    `torch.utils.checkpoint`). A chain of N ops cut into segments of k keeps about N / k nodes plus one
    segment's k during the backward pass, for one more forward sweep. Every transform honours it, as a
    `custom_vjp` rule; second derivatives differentiate the segment made again."""
    label = name or getattr(segment, "__name__", "checkpoint")

    def forward(*xs: float) -> float:
        with no_grad():
            return float(segment(*(Value(x) for x in xs)))

    def backward(g: Any, *inputs_and_out: Any) -> tuple[Any, ...]:
        xs = inputs_and_out[:-1]
        graph = any(isinstance(x, Value) for x in (g, *xs))
        leaves = [own_copy(x, f"an input of {label}") for x in xs]
        with enable_grad():
            out = _scalar_output(segment(*leaves), label)
            found = _reverse(out, leaves, create_graph=graph)
        return tuple(g * d if graph else g * d.data for d in found)

    return custom_vjp(forward, backward, name=label)


def _elementwise(function: Callable[..., Any], arity: int, outputs: int) -> Callable[..., Any]:
    """The float rule on NumPy arrays, element by element: what compiled replay runs for a custom rule."""
    def on_arrays(*arrays: Any) -> Any:
        import numpy

        found = numpy.frompyfunc(function, arity, outputs)(*arrays)
        if outputs == 1:
            return numpy.asarray(found, dtype=numpy.float64)
        return tuple(numpy.asarray(part, dtype=numpy.float64) for part in found)
    return on_arrays


def _elementwise_pullback(backward: Callable[..., tuple[Any, ...]], arity: int) -> Callable[..., tuple[Any, ...]]:
    def one(*numbers: float) -> Any:
        passed = tuple(0.0 if p is None else p for p in backward(*numbers))  # masked: exactly 0
        return passed[0] if arity == 1 else passed

    rule = _elementwise(one, arity + 2, arity)
    return lambda g, *inputs_and_out: (rule(g, *inputs_and_out),) if arity == 1 else rule(g, *inputs_and_out)
