"""`compile(fn, params)`: trace a per-example function once, then replay its graph over a batch with NumPy.

Tracing: `fn` is called once with placeholder Values (no number yet). Every Value computed from a
placeholder is itself a placeholder, so the graph records which parts depend on the example and which
only on parameters and constants. Asking a placeholder for its number (``float(x)``, ``x.data``,
``x.item()``, ``bool(x)``, ``x > 0``) raises `TracingError`: the graph must be the same for every example.

Replay ("vectorised by levels"): the graph becomes a short program over two stores, one number per
uniform node (parameters, constants and what is computed from them alone) and one row of N numbers per
varying node (one column per example). Chains of additions are fused into sums; a term
``coefficient * input`` whose coefficient is uniform is folded into the sum, so sums that share their
inputs (the neurons of a layer) become one matrix product. Every other op runs once per level for all
its nodes at that level, over index arrays, with the array forms of its rules from the table in
`ops.py`. The backward pass runs the program in reverse, adding gradients with `numpy.add.at` or
`numpy.bincount` where an index repeats.
"""

from __future__ import annotations

import inspect
import math
import sys
from operator import attrgetter
from typing import Any, Callable, Sequence

from chainrule import engine
from chainrule.engine import Value, observe_nodes, topological_order
from chainrule.ops import ADD, MUL, Op, array_pullback_of, array_sum_of_products, array_sum_of_products_pullback

__all__ = ["compile", "CompiledFunction", "TracingError"]

_ENGINE_GLOBALS = vars(engine)
_DATA = Value.__dict__["data"]  # the slot that holds a Value's number
_get_data = attrgetter("data")


class TracingError(TypeError):
    """A traced function asked a placeholder for its number, which it does not have yet."""


def _refuse(what: str) -> TracingError:
    return TracingError(
        f"{what} is not allowed on a traced value. chainrule.compile calls your function once with "
        "placeholders, which have no number yet, and replays the graph it records for every example, "
        "so that graph must not depend on the numbers. Combine Values with + - * / ** and their "
        "methods (tanh, exp, log, relu, sigmoid, abs); do not read a value's number (float(x), x.data, "
        "x.item()), compare values (x > 0) or branch on them (if x, bool(x)). For example, write "
        "x.relu() instead of `x if x > 0 else 0`."
    )


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise ImportError(
            "chainrule.compile needs NumPy, which is not installed; install it with `pip install numpy` "
            "(the rest of chainrule works without it)"
        ) from None
    return numpy


# --- placeholders --------------------------------------------------------------------------------------


class _Traced(Value):
    """A Value without a number: a placeholder input, or anything computed from one.

    The engine's own methods still see a number (nan) so that they can build nodes; everything else is
    refused. It reports `Value` as its ``__class__`` (as unittest.mock's objects do), so the exact-class
    checks of the engine and of chainrule.nn accept it; ``type(x)`` tells the truth.
    """

    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105
        return Value

    @property
    def data(self) -> float:  # type: ignore[override]
        if sys._getframe(1).f_globals is _ENGINE_GLOBALS:
            return _DATA.__get__(self)
        raise _refuse("reading x.data")

    @data.setter
    def data(self, value: float) -> None:
        if sys._getframe(1).f_globals is _ENGINE_GLOBALS:
            _DATA.__set__(self, value)
            return
        raise _refuse("setting x.data")

    def __repr__(self) -> str:
        op = f", op={self._op.name}" if self._op is not None else ""
        return f"Value(traced: no number until replayed{op})"


# What a placeholder refuses, and how the message names it.
_REFUSED = {
    "__float__": "float(x)", "__int__": "int(x)", "__index__": "using x as an index",
    "__bool__": "bool(x) (also `if x:`, `while x:`, `x and y`)", "__round__": "round(x)",
    "__trunc__": "math.trunc(x)", "__floor__": "math.floor(x)", "__ceil__": "math.ceil(x)",
    "__lt__": "comparing (x < y)", "__le__": "comparing (x <= y)", "__gt__": "comparing (x > y)",
    "__ge__": "comparing (x >= y)", "item": "x.item()", "backward": "backward()",
}


def _refusing(what: str) -> Callable[..., Any]:
    def refuse(self: Value, *args: Any) -> Any:
        raise _refuse(what)

    return refuse


for _name, _what in _REFUSED.items():
    setattr(_Traced, _name, _refusing(_what))


def _mark_traced(node: Value) -> None:
    """Observer during tracing: a node the engine made from a placeholder is a placeholder too
    (this covers `Value.relu(x)` called on the class, as chainrule.nn does)."""
    if type(node._a) is _Traced or type(node._b) is _Traced:
        node.__class__ = _Traced


def _count_inputs(fn: Callable[..., Any]) -> int:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        raise TypeError("chainrule.compile cannot read the function's parameters; pass n_inputs=") from None
    count = 0
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            raise TypeError("the function takes *args; say how many inputs it has with n_inputs=")
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD) \
                and parameter.default is parameter.empty:
            count += 1
    return count


def _check_params(params: Sequence[Value]) -> list[Value]:
    if isinstance(params, Value):
        raise TypeError("params must be a list of Values (e.g. model.parameters()), not one Value")
    params = list(params)
    for p in params:
        if not isinstance(p, Value):
            raise TypeError(f"params must be Values, got {type(p).__name__}")
        if p._op is not None:
            raise ValueError(f"params must be leaf Values (made by Value(number)), got the result of {p.op}")
    if len({id(p) for p in params}) != len(params):
        raise ValueError("a parameter appears twice in params; list each once")
    return params


def compile(  # noqa: A001 - chainrule.compile, as the library's public name
    fn: Callable[..., Value], params: Sequence[Value], n_inputs: int | None = None
) -> "CompiledFunction":
    """Trace `fn` (Values in, one Value out) once; return a `CompiledFunction` that replays it.

    `params` are the leaf Values to differentiate with respect to; their `.data` is read at every
    call. Any other leaf the graph meets is a constant, fixed at its value now. `n_inputs` is the
    number of placeholder arguments (default: fn's parameters without defaults).
    """
    _numpy()
    params = _check_params(params)
    if n_inputs is None:
        n_inputs = _count_inputs(fn)
    if isinstance(n_inputs, bool) or not isinstance(n_inputs, int) or n_inputs < 0:
        raise ValueError(f"n_inputs must be a whole number >= 0, not {n_inputs!r}")
    placeholders = []
    for i in range(n_inputs):
        x = Value(math.nan, label=f"input{i}")
        x.__class__ = _Traced
        placeholders.append(x)
    with observe_nodes(_mark_traced):
        out = fn(*placeholders)
    if not isinstance(out, Value):
        hint = " (pick one element, e.g. model(x)[0])" if isinstance(out, (list, tuple)) else ""
        raise TypeError(f"the compiled function must return one Value, not {type(out).__name__}{hint}")
    return CompiledFunction(out, placeholders, params)


# --- the program -------------------------------------------------------------------------------------

# Each instruction computes a group of nodes into a store: U (one number per uniform node) or V (a
# row of N numbers per varying node). An index is a slice when its slots are consecutive (no copy).


def _index(np: Any, slots: Sequence[int]) -> Any:
    if len(slots) and list(slots) == list(range(slots[0], slots[0] + len(slots))):
        return slice(slots[0], slots[0] + len(slots))
    return np.asarray(slots, dtype=np.intp)


def _is_unique(slots: Sequence[int]) -> bool:
    return len(set(slots)) == len(slots)


class _Input:
    """Where one operand of an instruction comes from, and whether it needs its gradient."""

    __slots__ = ("varying", "index", "unique", "needs_grad", "column")

    def __init__(self, np: Any, varying: bool, slots: list[int], needs_grad: bool, out_varying: bool) -> None:
        self.varying = varying
        self.index = _index(np, slots)
        self.unique = _is_unique(slots)
        self.needs_grad = needs_grad
        self.column = out_varying and not varying  # a uniform operand broadcast over the examples

    def read(self, U: Any, V: Any) -> Any:
        if self.varying:
            return V[self.index]
        values = U[self.index]
        return values[:, None] if self.column else values

    def add_grad(self, np: Any, GU: Any, GV: Any, contribution: Any) -> None:
        if self.column:
            contribution = contribution.sum(axis=1)
        target = GV if self.varying else GU
        if self.unique:
            target[self.index] += contribution
        else:
            np.add.at(target, self.index, contribution)


class _Elementwise:
    """All nodes of one op at one level: out = op(a[, b]) with the op's array forms."""

    def __init__(self, np: Any, op: Op, out_varying: bool, out_slots: list[int], inputs: list[_Input]) -> None:
        self.np = np
        self.forward_rule = op.array_forward or op.forward
        self.pullback = array_pullback_of(op)
        self.varying = out_varying
        self.out = _index(np, out_slots)
        self.inputs = inputs
        self.needs_grad = any(i.needs_grad for i in inputs)

    def forward(self, U: Any, V: Any) -> None:
        (V if self.varying else U)[self.out] = self.forward_rule(*[i.read(U, V) for i in self.inputs])

    def backward(self, U: Any, V: Any, GU: Any, GV: Any) -> None:
        if not self.needs_grad:
            return
        store, grads = (V, GV) if self.varying else (U, GU)
        contributions = self.pullback(grads[self.out], *[i.read(U, V) for i in self.inputs], store[self.out])
        for source, contribution in zip(self.inputs, contributions):
            if source.needs_grad and contribution is not None:
                source.add_grad(self.np, GU, GV, contribution)


class _MatrixSum:
    """Sums over the same varying inputs (a layer): out = W @ X + bias, W[j, k] the uniform coefficient
    of input k in sum j (1 for a bare term), bias[j] the sum of sum j's uniform terms."""

    def __init__(self, np: Any, out_slots: list[int], inputs: _Input, coefficients: list[list[int]],
                 coefficients_need_grad: bool, bias_terms: list[tuple[int, int]], bias_needs_grad: bool) -> None:
        self.np = np
        self.out = _index(np, out_slots)
        self.count = len(out_slots)
        self.inputs = inputs
        self.coefficients = np.asarray(coefficients, dtype=np.intp)
        self.flat_coefficients = self.coefficients.ravel()
        self.coefficients_unique = _is_unique(self.flat_coefficients.tolist())
        self.coefficients_need_grad = coefficients_need_grad
        self.bias_owner = np.asarray([j for j, _ in bias_terms], dtype=np.intp)
        self.bias = _Input(np, False, [slot for _, slot in bias_terms], bias_needs_grad, False)
        self.has_bias = bool(bias_terms)
        self.needs_grad = inputs.needs_grad or coefficients_need_grad or (self.has_bias and bias_needs_grad)

    def forward(self, U: Any, V: Any) -> None:
        in_place = self.out.__class__ is slice  # write straight into the store
        out = array_sum_of_products(U[self.coefficients], V[self.inputs.index], V[self.out] if in_place else None)
        if self.has_bias:
            out += self.np.bincount(self.bias_owner, self.bias.read(U, V), self.count)[:, None]
        if not in_place:
            V[self.out] = out

    def backward(self, U: Any, V: Any, GU: Any, GV: Any) -> None:
        if not self.needs_grad:
            return
        np = self.np
        upstream = GV[self.out]
        weights_grad, inputs_grad = array_sum_of_products_pullback(
            upstream, U[self.coefficients], V[self.inputs.index]
        )
        if self.inputs.needs_grad:
            self.inputs.add_grad(np, GU, GV, inputs_grad)
        if self.coefficients_need_grad:
            if self.coefficients_unique:
                GU[self.flat_coefficients] += weights_grad.ravel()
            else:
                GU += np.bincount(self.flat_coefficients, weights_grad.ravel(), GU.shape[0])
        if self.has_bias and self.bias.needs_grad:
            self.bias.add_grad(np, GU, GV, upstream.sum(axis=1)[self.bias_owner])


class _UniformSum:
    """Sums of uniform terms only (an L2 penalty): one bincount per level."""

    def __init__(self, np: Any, out_slots: list[int], terms: list[tuple[int, int]], needs_grad: bool) -> None:
        self.np = np
        self.out = _index(np, out_slots)
        self.count = len(out_slots)
        self.owner = np.asarray([j for j, _ in terms], dtype=np.intp)
        self.terms = _Input(np, False, [slot for _, slot in terms], needs_grad, False)
        self.needs_grad = needs_grad

    def forward(self, U: Any, V: Any) -> None:
        U[self.out] = self.np.bincount(self.owner, self.terms.read(U, V), self.count)

    def backward(self, U: Any, V: Any, GU: Any, GV: Any) -> None:
        if self.needs_grad:
            self.terms.add_grad(self.np, GU, GV, GU[self.out][self.owner])


# --- from the traced graph to the program ------------------------------------------------------------


class _Planner:
    """Reads the traced graph once: which nodes vary, which sums fuse, levels, groups and slots."""

    def __init__(self, np: Any, out: Value, placeholders: list[Value], params: list[Value]) -> None:
        self.np = np
        self.out = out
        order = topological_order(out)
        self.order = order
        placeholder_index = {x: i for i, x in enumerate(placeholders)}
        param_set = set(params)
        self.varying: dict[Value, bool] = {}
        self.needs_grad: dict[Value, bool] = {}
        self.uses: dict[Value, int] = {}
        self.consumer: dict[Value, Value] = {}
        for node in order:
            inputs = node._prev
            if not inputs:
                self.varying[node] = node in placeholder_index
                self.needs_grad[node] = node in param_set
                continue
            self.varying[node] = any(self.varying[c] for c in inputs)
            self.needs_grad[node] = any(self.needs_grad[c] for c in inputs)
            for c in inputs:
                self.uses[c] = self.uses.get(c, 0) + 1
                self.consumer[c] = node
        # Slots: U[0] holds 1.0 (the coefficient of a bare term), then parameters and constants.
        self.u_slots: dict[Value, int] = {}
        self.v_slots: dict[Value, int] = {x: i for i, x in enumerate(placeholders)}
        self.u_values: list[float] = [1.0]
        self.graph_params = [p for p in params if p in self.varying]
        for p in self.graph_params:
            self._new_u_slot(p, 0.0)
        for node in order:
            if not node._prev and node not in placeholder_index and node not in self.u_slots:
                self._new_u_slot(node, node.data)  # a constant, fixed at compile time
        self.instructions: list[Any] = []
        self._plan()

    def _new_u_slot(self, node: Value, value: float) -> int:
        self.u_slots[node] = len(self.u_values)
        self.u_values.append(value)
        return self.u_slots[node]

    def _slot(self, node: Value) -> int:
        return self.v_slots[node] if self.varying[node] else self.u_slots[node]

    # -- fusion --

    def _in_sum(self, node: Value) -> bool:
        """An addition folded into the sum that consumes it (its only use)."""
        return (node._op is ADD and node is not self.out and self.uses.get(node) == 1
                and self.consumer[node]._op is ADD)

    def _coefficient_term(self, node: Value) -> tuple[Value, Value] | None:
        """(uniform coefficient, varying input) if node is such a product used only by its sum."""
        if node._op is not MUL or self.uses.get(node) != 1:
            return None
        a, b = node._a, node._b
        if self.varying[a] and not self.varying[b]:
            return b, a
        if self.varying[b] and not self.varying[a]:
            return a, b
        return None

    def _terms(self, root: Value) -> list[Value]:
        terms: list[Value] = []
        stack = list(reversed(root._prev))  # left operand first, as the sum was written
        while stack:
            node = stack.pop()
            if self._in_sum(node):
                stack.extend(reversed(node._prev))
            else:
                terms.append(node)
        return terms

    def _plan(self) -> None:
        level: dict[Value, int] = {}
        groups: dict[tuple, list] = {}
        for node in self.order:
            if not node._prev:
                level[node] = 0
                continue
            if self._in_sum(node) or (self._coefficient_term(node) and self._in_sum_root(node)):
                continue  # computed inside the sum that consumes it
            if node._op is ADD:
                item = self._sum_item(node)
                depth = 1 + max(level[d] for d in item[1])
                if self.varying[node]:
                    key = ("matrix", depth, tuple(x for _, x in item[2]))
                else:
                    key = ("uniform", depth)
            else:
                item = node
                depth = 1 + max(level[c] for c in node._prev)
                kinds = tuple(self.varying[c] for c in node._prev)
                key = ("op", depth, node._op, kinds)
            level[node] = depth
            groups.setdefault(key, []).append(item)
        for key in sorted(groups, key=lambda k: k[1]):
            kind = key[0]
            if kind == "op":
                self._emit_elementwise(key[2], groups[key])
            elif kind == "uniform":
                self._emit_uniform_sum(groups[key])
            else:
                self._emit_matrix_sum(groups[key])

    def _in_sum_root(self, node: Value) -> bool:
        consumer = self.consumer.get(node)
        return consumer is not None and consumer._op is ADD

    def _sum_item(self, root: Value) -> tuple:
        """(root, the materialised nodes it reads, [(coefficient or None, varying input)], uniform terms)."""
        products: list[tuple[Value | None, Value]] = []
        uniform: list[Value] = []
        for term in self._terms(root):
            pair = self._coefficient_term(term)
            if pair is not None:
                products.append(pair)
            elif self.varying[term]:
                products.append((None, term))
            else:
                uniform.append(term)
        reads = [x for pair in products for x in pair if x is not None] + uniform
        return root, reads, products, uniform

    def _new_outputs(self, nodes: list[Value]) -> list[int]:
        slots = []
        for node in nodes:
            if self.varying[node]:
                self.v_slots[node] = len(self.v_slots)
                slots.append(self.v_slots[node])
            else:
                slots.append(self._new_u_slot(node, 0.0))
        return slots

    def _emit_elementwise(self, op: Op, nodes: list[Value]) -> None:
        out_varying = self.varying[nodes[0]]
        inputs = []
        for position in range(len(nodes[0]._prev)):
            operands = [n._prev[position] for n in nodes]
            inputs.append(_Input(
                self.np, self.varying[operands[0]], [self._slot(x) for x in operands],
                any(self.needs_grad[x] for x in operands), out_varying,
            ))
        self.instructions.append(_Elementwise(self.np, op, out_varying, self._new_outputs(nodes), inputs))

    def _emit_uniform_sum(self, items: list[tuple]) -> None:
        terms = [(j, self.u_slots[t]) for j, item in enumerate(items) for t in item[3]]
        needs_grad = any(self.needs_grad[t] for item in items for t in item[3])
        self.instructions.append(_UniformSum(self.np, self._new_outputs([i[0] for i in items]), terms, needs_grad))

    def _emit_matrix_sum(self, items: list[tuple]) -> None:
        columns = [x for _, x in items[0][2]]
        inputs = _Input(self.np, True, [self.v_slots[x] for x in columns],
                        any(self.needs_grad[x] for x in columns), True)
        coefficients = [[0 if c is None else self.u_slots[c] for c, _ in item[2]] for item in items]
        coefficients_need_grad = any(c is not None and self.needs_grad[c] for item in items for c, _ in item[2])
        bias = [(j, self.u_slots[t]) for j, item in enumerate(items) for t in item[3]]
        bias_needs_grad = any(self.needs_grad[t] for item in items for t in item[3])
        self.instructions.append(_MatrixSum(
            self.np, self._new_outputs([i[0] for i in items]), inputs, coefficients,
            coefficients_need_grad, bias, bias_needs_grad,
        ))


class CompiledFunction:
    """A traced function, replayed over batches: `value_and_grad(*columns)` and `values(*columns)`."""

    def __init__(self, out: Value, placeholders: list[Value], params: list[Value]) -> None:
        np = _numpy()
        self._np = np
        self.params = params
        self.n_inputs = len(placeholders)
        plan = _Planner(np, out, placeholders, params)
        self._instructions = plan.instructions
        self._reverse = plan.instructions[::-1]
        self._graph_params = plan.graph_params
        self._param_slots = np.asarray([plan.u_slots[p] for p in plan.graph_params], dtype=np.intp)
        position = {id(p): i for i, p in enumerate(params)}
        self._param_positions = np.asarray([position[id(p)] for p in plan.graph_params], dtype=np.intp)
        self._u_template = np.asarray(plan.u_values, dtype=np.float64)
        self._v_count = len(plan.v_slots)
        self._out_varying = plan.varying[out]
        self._out_slot = plan._slot(out)
        self.node_count = len(plan.order)
        self.instruction_count = len(plan.instructions)

    def _columns(self, columns: tuple) -> list[Any]:
        np = self._np
        if len(columns) != self.n_inputs:
            raise TypeError(f"this compiled function takes {self.n_inputs} columns (one per input), "
                            f"got {len(columns)}")
        arrays = []
        for i, column in enumerate(columns):
            try:
                array = np.asarray(column, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"column {i} must be numbers (a 1-D array of shape (N,)), "
                                f"not {type(column).__name__}") from None
            if array.ndim != 1:
                raise ValueError(f"column {i} must be 1-D, shape (N,), one number per example; "
                                 f"got shape {array.shape}")
            if arrays and array.shape != arrays[0].shape:
                raise ValueError(f"all columns must have the same length: column 0 has {arrays[0].shape[0]}, "
                                 f"column {i} has {array.shape[0]}")
            arrays.append(array)
        return arrays

    def _forward(self, columns: tuple) -> tuple[Any, Any, int]:
        np = self._np
        arrays = self._columns(columns)
        n = arrays[0].shape[0] if arrays else 1
        U = self._u_template.copy()
        U[self._param_slots] = np.fromiter(map(_get_data, self._graph_params), np.float64,
                                           len(self._graph_params))
        V = np.empty((self._v_count, n))
        for i, array in enumerate(arrays):
            V[i] = array
        for instruction in self._instructions:
            instruction.forward(U, V)
        return U, V, n

    def _output(self, U: Any, V: Any, n: int) -> Any:
        if self._out_varying:
            return V[self._out_slot].copy()
        return self._np.full(n, U[self._out_slot])

    def values(self, *columns: Any) -> Any:
        """fn's value for each example: an array of shape (N,)."""
        with self._np.errstate(all="ignore"):
            return self._output(*self._forward(columns))

    def value_and_grad(self, *columns: Any) -> tuple[Any, Any]:
        """(values, grads): fn's value per example, shape (N,), and d(sum of the values)/d(param) for
        each param in the order given to `compile`, shape (P,)."""
        np = self._np
        with np.errstate(all="ignore"):
            U, V, n = self._forward(columns)
            GU = np.zeros(U.shape)
            GV = np.zeros(V.shape)
            if self._out_varying:
                GV[self._out_slot] = 1.0
            else:
                GU[self._out_slot] = float(n)  # n equal outputs
            for instruction in self._reverse:
                instruction.backward(U, V, GU, GV)
            grads = np.zeros(len(self.params))
            grads[self._param_positions] = GU[self._param_slots]
            return self._output(U, V, n), grads

    def __repr__(self) -> str:
        return (f"<CompiledFunction: {self.n_inputs} inputs, {len(self.params)} params, "
                f"{self.node_count} traced nodes, {self.instruction_count} instructions>")
