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
`numpy.bincount` where an index repeats. The program lives in `chainrule.replay`.
"""

from __future__ import annotations

import inspect
import math
import re
import sys
import threading
from contextlib import nullcontext
from operator import attrgetter
from typing import Any, Callable, Sequence, cast

from chainrule import engine, modes
from chainrule.engine import Value, topological_order, tracing
from chainrule.frozen_reads import FrozenReads, creation_site, site_text, user_frame
from chainrule.ops import functions
from chainrule.replay import Planner, index_of

__all__ = ["compile", "CompiledFunction", "TracingError"]

_ENGINE_GLOBALS = vars(engine)
_DATA = Value.__dict__["data"]  # the slot that holds a Value's number
_get_data = attrgetter("data")


class TracingError(TypeError):
    """A traced function asked a placeholder for its number, which it does not have yet."""


def _refuse(what: str, frozen: bool = False, frame: Any = None) -> TracingError:
    site = user_frame(frame or sys._getframe(2))
    error = _refusal(what, "parameter" if frozen else "placeholder",
                     "<unknown>" if site is None else site_text(site.f_code.co_filename, site.f_lineno))
    _Tracer.record(error)
    return error


def _refuse_read(what: str, site: str) -> TracingError:
    """A random draw or a clock read while tracing (chainrule.frozen_reads finds them)."""
    error = _refusal(what, "read", site)
    _Tracer.record(error)
    return error


def _refusal(what: str, kind: str, site: str) -> TracingError:
    if kind == "read":  # a random number or the time: the compiled graph would replay this one number
        return TracingError(
            f"{what} is not allowed while chainrule.compile traces the function: the number it gives is "
            "taken once, now, and would be frozen into the compiled graph, the same at every call. Pass what "
            "varies from call to call, such as a dropout mask or noise, as an input column (e.g. a column "
            f"of 0s and 1s drawn outside the function). Refused at {site}."
        )
    if kind == "parameter":  # a parameter's number, or Python state: it would be fixed at its value now
        return TracingError(
            f"{what} is not allowed while chainrule.compile traces the function: the number it gives is "
            "taken now and would be frozen into the compiled graph, while the replay reads the parameters' "
            ".data at every call only through the graph (an SGD step would not reach it). Compute with the "
            "Values themselves (p * x, not p.data * x; chainrule.grad(..., create_graph=True)), and pass "
            f"what varies from call to call, such as a dropout mask, as an input column. Refused at {site}."
        )
    return TracingError(
        f"{what} is not allowed on a traced value. chainrule.compile calls your function once with "
        "placeholders, which have no number yet, and replays the graph it records for every example, "
        "so that graph must not depend on the numbers. Combine Values with + - * / ** and their "
        f"methods ({', '.join(functions())}); do not read a value's number (float(x), x.data, "
        "x.item()), compare values (x > 0) or branch on them (if x, bool(x)). For example, write "
        f"x.relu() instead of `x if x > 0 else 0`. Refused at {site}."
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
    def data(self) -> float:
        if sys._getframe(1).f_globals is _ENGINE_GLOBALS:
            return cast(float, _DATA.__get__(self))
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


def _refusing(what: str, frozen: bool = False, name: str = "") -> Callable[..., Any]:
    def refuse(self: Value, *args: Any) -> Any:
        if frozen and not _Tracer.tracing_here():  # another thread's own eager work: as a Value
            return _as_a_value(self, name, args)
        raise _refuse(what, frozen)

    return refuse


def _as_a_value(value: Value, name: str, args: tuple[Any, ...]) -> Any:
    """What a plain Value does for the method `name` (a parameter used by a thread that is not tracing)."""
    method = getattr(Value, name, None)
    if method is not None:
        return method(value, *args)
    if name == "__bool__":
        return True
    if name in ("__lt__", "__le__", "__gt__", "__ge__"):
        return NotImplemented
    raise TypeError(f"{name} is not defined for a Value")


for _name, _what in _REFUSED.items():
    setattr(_Traced, _name, _refusing(_what))


class _FromParameters(Value):
    """While a trace runs: a parameter, or a Value computed from parameters and constants only. Its number is
    real but would be frozen if taken now (compile reads the parameters' .data at every call, through the
    graph), so reading it outside the engine (x.data, x.grad, float(x), comparisons, backward()) is refused;
    the class of these Values goes back to Value when the trace ends."""

    __slots__ = ()

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105
        return Value



def _guarded_slot(slot: Any, what: str) -> property:
    """A slot of _FromParameters: read by the engine, or in a thread that is not tracing, as usual; read by the
    traced function, refused."""

    def read(self: Value) -> float:
        if id(sys._getframe(1).f_globals) in _READERS or not _Tracer.tracing_here():
            return cast(float, slot.__get__(self))
        raise _refuse(what, True)

    return property(read, slot.__set__)


_SET_CLASS = object.__dict__["__class__"].__set__  # past the class's own __class__ property
_READERS = {id(vars(engine)), id(vars(modes))}  # the engine's own code reads numbers to build nodes
_FromParameters.data = _guarded_slot(  # type: ignore[assignment,misc]
    _DATA, "reading p.data of a parameter (or of a Value computed from parameters only)")
_FromParameters.grad = _guarded_slot(  # type: ignore[assignment,misc]
    Value.__dict__["grad"], "reading p.grad of a parameter (its last backward() pass)")
for _name, _what in _REFUSED.items():
    setattr(_FromParameters, _name, _refusing(re.sub(r"\bx\b", "p", _what) + " of a parameter", True, _name))


class _Tracer:
    """The engine's tracing hook (see `engine.tracing`), and the refusals made while a trace runs.

    A refusal raised inside the traced function and caught there (``try: float(x) except ...``), or
    raised in another thread the function started, still fails the compile: the graph would be wrong.
    """

    _lock = threading.Lock()
    _active: dict[int, list[TracingError]] = {}  # the refusals of each trace running now, by its thread
    _sites: dict[int, dict[int, tuple[str, int]]] = {}  # by thread: each node's user line (id -> file, line)
    _from_parameters: list[Value] = []  # Values made _FromParameters by the traces running now

    @classmethod
    def node(cls, node: Value, a: Value | None, b: Value | None, recording: bool) -> bool:
        """A node the engine made from a placeholder is a placeholder too (this covers `Value.relu(x)`
        called on the class, as chainrule.nn does, and nodes made in other threads); one made from
        parameters and constants only is marked as such, and computing it under no_grad() is refused."""
        sites = cls._sites.get(threading.get_ident())
        if sites is not None:
            sites[id(node)] = creation_site(sys._getframe(1))
        kinds = (type(a), type(b))
        if _Traced in kinds:
            if not recording:
                raise _refuse("computing under no_grad() (the result would be a constant)")
            node.__class__ = _Traced
            return True
        if _FromParameters in kinds and cls.tracing_here():
            if not recording:
                raise _refuse("computing under no_grad() from parameters (the result would be a constant)", True)
            node.__class__ = _FromParameters
            with cls._lock:
                cls._from_parameters.append(node)
        return False

    @classmethod
    def tracing_here(cls) -> bool:
        """Whether this thread runs a trace (a thread a traced function started cannot be told apart from
        any other: there a parameter is read as a plain Value)."""
        return threading.get_ident() in cls._active

    @staticmethod
    def numbers(value: Value, what: str) -> None:
        if type(value) is _Traced:
            raise _refuse(what)
        if type(value) is _FromParameters and _Tracer.tracing_here():
            raise _refuse(what + " of a Value computed from parameters only", True)

    @classmethod
    def record(cls, error: TracingError) -> None:
        """A refusal in a tracing thread belongs to its trace; one in another thread (started by a traced
        function, which cannot be told apart) to every trace running now."""
        with cls._lock:
            own = cls._active.get(threading.get_ident())
            for refusals in [own] if own is not None else cls._active.values():
                refusals.append(error)

    @classmethod
    def run(cls, fn: Callable[..., Any], placeholders: list[Value], params: list[Value],
            sites: dict[int, tuple[str, int]] | None, watch: FrozenReads | None = None) -> Any:
        """fn(*placeholders) with the hook on; a TracingError if anything was refused meanwhile, whatever
        the function raised then (a thread's refusal can surface as the function's own error). `sites`
        (if given) is filled with the line that made each node; `watch` refuses random draws and clock reads."""
        refusals: list[TracingError] = []
        me = threading.get_ident()
        with cls._lock:
            outer = cls._active.get(me)  # compile called inside a traced function: restored after
            outer_sites = cls._sites.get(me)
            cls._active[me] = refusals
            if sites is not None:
                cls._sites[me] = sites
            swapped = [p for p in params if type(p) is Value]
            for p in swapped:
                p.__class__ = _FromParameters
        failure: BaseException | None = None
        out = None
        try:
            with tracing(cls), watch or nullcontext():
                out = fn(*placeholders)
        except BaseException as error:  # noqa: BLE001 - re-raised below unless a refusal explains it
            failure = error
        finally:
            with cls._lock:
                if outer is None:
                    del cls._active[me]
                else:
                    cls._active[me] = outer
                if outer_sites is None:
                    cls._sites.pop(me, None)
                else:
                    cls._sites[me] = outer_sites
                if not cls._active:  # the last trace running: every marked Value is a Value again
                    for value in cls._from_parameters:
                        _SET_CLASS(value, Value)
                    cls._from_parameters.clear()
                for p in swapped:
                    _SET_CLASS(p, Value)
        if refusals:
            first = refusals[0]
            if failure is first:
                raise first
            how = ("caught inside the function or raised in a thread it started" if failure is None else
                   f"and the function then failed with {type(failure).__name__}: {failure}")
            raise TracingError(f"{first} (This was refused while tracing, {how}.)") from first
        if failure is not None:
            raise failure
        return out


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
    placeholders = _placeholders(n_inputs)
    out = _check_output(_Tracer.run(fn, placeholders, params, None))
    # Traced again with new placeholders: Python state read while tracing (a random draw, the clock, a
    # call counter, a list that grows) would be frozen into the graph. This call refuses random draws and
    # clock reads, and must record the same graph. (A draw in the first call only, such as weights made
    # on first use, is kept by eager code too, so it is allowed.)
    again, sites_again = _placeholders(n_inputs), dict[int, tuple[str, int]]()
    watch = FrozenReads(_refuse_read, lines=False)
    out_again = _check_output(_Tracer.run(fn, again, params, sites_again, watch))
    if watch.drew is not None or watch.unsure:  # once more, line by line, to name the line that draws
        lines = FrozenReads(_refuse_read, lines=True)
        _Tracer.run(fn, _placeholders(n_inputs), params, None, lines)
        if watch.drew is not None:  # the third call did not draw: the second one's refusal, without its line
            raise _refusal(f"drawing a random number from {watch.drew}", "read",
                           "a line that the function ran at its second call but not at its third")
    first, second = _graph_signature(out, placeholders, params), _graph_signature(out_again, again, params)
    if first != second:
        at = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b), min(len(first), len(second)))
        order = topological_order(out_again)  # its nodes' lines are known (the first call's are not kept)
        site = _site_of_node(order, min(at, len(order) - 1), sites_again)
        raise TracingError(
            "the function recorded a different graph when chainrule.compile called it a second time "
            f"({_entry_text(first, at)} in the first call, {_entry_text(second, at)} in the second), so it "
            "depends on Python state read while tracing (a call counter, a list that grows at every call, a "
            "global that changes): that state would be frozen into the compiled graph. Pass what varies "
            f"as an input column instead. The first difference is {'' if at < len(second) else 'after '}the node made at {site}."
        )
    return CompiledFunction(out, placeholders, params)


def _entry_text(signature: list[tuple[Any, Any]], at: int) -> str:
    """One entry of a graph signature, in words."""
    if at >= len(signature):
        return "no more nodes"
    kind, detail = signature[at]
    if kind == "constant":
        return f"the constant {float.fromhex(detail)!r}"
    if kind in ("input", "param"):
        return f"{'input' if kind == 'input' else 'parameter'} {detail}"
    return f"a {kind.name} node"


def _site_of_node(order: list[Value], at: int, sites: dict[int, tuple[str, int]]) -> str:
    """The user's line that made order[at], or for a leaf (a constant made by an op), the first node that
    uses it (directly or through nodes made without a line)."""
    reached = {order[at]}
    for node in order[at:]:
        if node is order[at] or any(child in reached for child in node._prev):
            reached.add(node)
            if id(node) in sites:
                return site_text(*sites[id(node)])
    return "<unknown>"


def _placeholders(n_inputs: int) -> list[Value]:
    placeholders = []
    for i in range(n_inputs):
        x = Value(math.nan, label=f"input{i}")
        x.__class__ = _Traced
        placeholders.append(x)
    return placeholders


def _check_output(out: Any) -> Value:
    if not isinstance(out, Value):
        hint = " (pick one element, e.g. model(x)[0])" if isinstance(out, (list, tuple)) else ""
        raise TypeError(f"the compiled function must return one Value, not {type(out).__name__}{hint}")
    return out


def _graph_signature(out: Value, placeholders: list[Value], params: list[Value]) -> list[tuple[Any, Any]]:
    """The recorded graph, comparable between two traces: for each node in order, its op and where its
    inputs come from; for a leaf, which placeholder or parameter it is, or a constant's bits."""
    order = topological_order(out)
    position = {node: i for i, node in enumerate(order)}
    names = {x: ("input", i) for i, x in enumerate(placeholders)}
    names.update((p, ("param", i)) for i, p in enumerate(params))
    signature: list[tuple[Any, Any]] = []
    for node in order:
        if node._op is not None:
            signature.append((node._op, tuple(position[c] for c in node._prev)))
        else:
            signature.append(names.get(node) or ("constant", _DATA.__get__(node).hex()))
    return signature


class CompiledFunction:
    """A traced function, replayed over batches: `value_and_grad(*columns)` and `values(*columns)`."""

    def __init__(self, out: Value, placeholders: list[Value], params: list[Value]) -> None:
        np = _numpy()
        self._np = np
        self._buffers = threading.local()  # per thread: the stores of the last batch size, reused
        self.params = params
        self.n_inputs = len(placeholders)
        plan = Planner(np, out, placeholders, params)
        self._instructions = plan.instructions
        self._reverse = plan.instructions[::-1]
        self._graph_params = plan.graph_params
        # Slices when consecutive (the usual case: every parameter in the graph, in order): views, not gathers.
        self._param_slots = index_of(np, [plan.u_slots[p] for p in plan.graph_params])
        position = {id(p): i for i, p in enumerate(params)}
        self._param_positions = index_of(np, [position[id(p)] for p in plan.graph_params])
        self._u_template = np.asarray(plan.u_values, dtype=np.float64)
        self._v_count = len(plan.v_slots)
        self._grad_rows_to_zero = plan.grad_rows_to_zero()
        self._out_varying = plan.varying[out]
        self._out_slot = plan._slot(out)
        self.node_count = len(plan.order)
        self.instruction_count = len(plan.instructions)

    def _columns(self, columns: tuple[Any, ...]) -> list[Any]:
        np = self._np
        if len(columns) != self.n_inputs:
            raise TypeError(f"this compiled function takes {self.n_inputs} columns (one per input), "
                            f"got {len(columns)}")
        arrays: list[Any] = []
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

    def _forward(self, columns: tuple[Any, ...], params: Any) -> tuple[Any, Any, int]:
        np = self._np
        arrays = self._columns(columns)
        n = arrays[0].shape[0] if arrays else 1
        U = self._u_template.copy()
        if params is None:
            U[self._param_slots] = np.fromiter(map(_get_data, self._graph_params), np.float64,
                                               len(self._graph_params))
        else:
            U[self._param_slots] = self._param_array(params)[self._param_positions]
        V = self._buffer("values", n)
        for i, array in enumerate(arrays):
            V[i] = array
        for instruction in self._instructions:
            instruction.forward(U, V)
        return U, V, n

    def _output(self, U: Any, V: Any, n: int) -> Any:
        if self._out_varying:
            return V[self._out_slot].copy()
        return self._np.full(n, U[self._out_slot])

    def _buffer(self, name: str, n: int) -> Any:
        """A (rows, n) array kept between calls of this thread: a new one each call costs page faults
        (about as much as a layer's work on a 64 x 1,000 batch). Results are copied out of it."""
        buffer = getattr(self._buffers, name, None)
        if buffer is None or buffer.shape[1] != n:
            buffer = self._np.empty((self._v_count, n))
            setattr(self._buffers, name, buffer)
        return buffer

    def _param_array(self, params: Any) -> Any:
        array = self._np.asarray(params, dtype=self._np.float64)
        if array.shape != (len(self.params),):
            raise ValueError(f"params= takes one number per parameter, shape ({len(self.params)},), "
                             f"in the order given to compile; got shape {array.shape}")
        return array

    def parameter_values(self) -> Any:
        """The parameters' current `.data`, as an array of shape (P,) for `params=`."""
        return self._np.fromiter(map(_get_data, self.params), self._np.float64, len(self.params))

    def load(self, params: Any) -> None:
        """Write an array of shape (P,) back into the parameters' `.data`."""
        for p, value in zip(self.params, self._param_array(params).tolist()):
            p.data = value

    def values(self, *columns: Any, params: Any = None) -> Any:
        """fn's value for each example: an array of shape (N,). `params` as in `value_and_grad`."""
        with self._np.errstate(all="ignore"):
            return self._output(*self._forward(columns, params))

    def value_and_grad(self, *columns: Any, params: Any = None) -> tuple[Any, Any]:
        """(values, grads): fn's value per example, shape (N,), and d(sum of the values)/d(param) for
        each param in the order given to `compile`, shape (P,).

        `params`, an array of shape (P,) in that order, is used instead of the parameters' `.data`: a
        training loop can keep its parameters in one array (``theta -= lr * grads``), without a Python
        loop over the Values at every step (`parameter_values` and `load` convert)."""
        np = self._np
        with np.errstate(all="ignore"):
            U, V, n = self._forward(columns, params)
            GU = np.zeros(U.shape)
            GV = self._buffer("grads", n)
            GV[self._grad_rows_to_zero] = 0.0
            if self._out_varying:
                GV[self._out_slot] = 1.0
            else:
                GU[self._out_slot] = float(n)  # n equal outputs
            for instruction in self._reverse:
                instruction.backward(U, V, GU, GV)
            grads = np.zeros(len(self.params))
            grads[self._param_positions] = GU[self._param_slots]
            return self._output(U, V, n), grads

    def per_example_grads(self, *columns: Any, params: Any = None) -> Any:
        """d(value of example n)/d(param p) for every example and parameter: an array of shape (N, P), what
        torch.func.vmap(torch.func.grad(fn)) gives (`value_and_grad` gives the sum of its rows). `params`
        as in `value_and_grad`.

        The same program as `value_and_grad`, forward unchanged; backward, the gradient of each uniform
        node (a parameter, or what is computed from parameters alone) is a row of N numbers, one per
        example, instead of their sum: a layer's weights get one outer product per example (its upstream
        gradient times its inputs), formed by broadcasting where `value_and_grad` sums them in a matrix
        product."""
        np = self._np
        with np.errstate(all="ignore"):
            U, V, n = self._forward(columns, params)
            GP = self._per_example_store("per-example grads", U.shape[0], n)
            GV = self._buffer("grads", n)
            GV[self._grad_rows_to_zero] = 0.0
            if self._out_varying:
                GV[self._out_slot] = 1.0
            else:
                GP[self._out_slot] = 1.0  # the same output for every example
            for instruction in self._reverse:
                instruction.backward_per_example(U, V, GP, GV)
            grads = np.zeros((n, len(self.params)))
            grads[:, self._param_positions] = GP[self._param_slots].T
            return grads

    def _per_example_store(self, name: str, rows: int, n: int) -> Any:
        """A (rows, n) array of zeros, kept between calls of this thread as `_buffer` keeps its stores."""
        store = getattr(self._buffers, name, None)
        if store is None or store.shape != (rows, n):
            store = self._np.zeros((rows, n))
            setattr(self._buffers, name, store)
        else:
            store.fill(0.0)
        return store

    def __repr__(self) -> str:
        return (f"<CompiledFunction: {self.n_inputs} inputs, {len(self.params)} params, "
                f"{self.node_count} traced nodes, {self.instruction_count} instructions>")
