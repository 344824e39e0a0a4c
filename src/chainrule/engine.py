"""`Value`: a float that remembers how it was made, and the backward pass over the graph it builds.

Design choices, each for a measured reason (see docs/performance.md):

* A node stores its (at most two) inputs in two slots, `_a` and `_b`, and its `Op` from the one table in
  `ops.py`; there are no per-node closures or tuples, so a node points only at its inputs, never back at
  itself. A graph you drop is freed at once by reference counting, and each node is a single
  GC-tracked object, which halves the cyclic collector's work while a graph grows.
* The walk that orders the graph is an explicit stack, never recursion, so a chain a million nodes
  deep is fine. It visits only interior nodes: leaves need no ordering, they just collect gradients.
* `__slots__` keeps an interior node near 100 bytes (the node and its float).

Gradient rule for repeated `backward()` calls, as in PyTorch: every interior node's gradient is
recomputed from scratch on each call, while leaf gradients accumulate (call `zero_grad` between steps).
"""

from __future__ import annotations

import linecache
import math
import numbers
import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Sequence

from chainrule import ops
from chainrule.ops import (
    ABS, ADD, DIV, EXP, LOG, LOGADDEXP, MUL, NEG, POW, RELU, SIGMOID, SUB, TANH, Op, power_op,
)

__all__ = [
    "Value", "grad", "no_grad", "enable_grad", "is_grad_enabled", "zero_grad", "gradcheck",
    "detect_anomaly", "AnomalyError", "GradcheckError", "topological_order",
]

_mul = MUL.forward
_add = ADD.forward
_sub = SUB.forward
_tanh = TANH.forward

# Graph-recording modes are per thread, as in PyTorch: `no_grad()` in one thread must not change the
# graphs another thread builds. Reading a thread-local on every op would cost, so `_plain` is a global
# fast-path flag: True while no thread has any mode active, and then an op checks nothing else.
_thread = threading.local()  # .grad_enabled (default True), .anomaly (default None)
_active_modes = 0  # mode blocks open in any thread
_plain = True
_state_lock = threading.Lock()


def _grad_enabled() -> bool:
    return getattr(_thread, "grad_enabled", True)


def _anomaly() -> "_AnomalyMode | None":
    return getattr(_thread, "anomaly", None)


@contextmanager
def _mode(**settings: Any) -> Iterator[None]:
    """Set this thread's mode attributes for the block; restore them afterwards, also on error."""
    global _active_modes, _plain
    previous = {name: getattr(_thread, name, None) for name in settings}
    with _state_lock:
        _active_modes += 1
        _plain = False
    for name, value in settings.items():
        setattr(_thread, name, value)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                _thread.__dict__.pop(name, None)  # back to the default
            else:
                setattr(_thread, name, value)
        with _state_lock:
            _active_modes -= 1
            _plain = _active_modes == 0


def _to_float(x: Any) -> float:
    """A Python number as float, or a TypeError that names what was given and what is allowed."""
    number = _real_or_none(x)
    if number is None:
        raise TypeError(
            f"a Value holds a real number (int or float), not {type(x).__name__}: {_short_repr(x)}"
        )
    return number


def _real_or_none(x: Any) -> float | None:
    """x as a float if it is a real number (int, float, bool, Fraction, NumPy scalar...), else None.
    A real number beyond the float range is an OverflowError that says so."""
    if isinstance(x, float):
        return float(x)
    if not isinstance(x, numbers.Real):
        return None
    try:
        return float(x)
    except OverflowError:
        try:
            size = f"about 10^{math.floor(math.log10(abs(x)))}"
        except (OverflowError, ValueError, TypeError):
            size = "beyond the float range"
        raise OverflowError(
            f"the {type(x).__name__} given ({size}) is too large for a float; "
            f"a Value holds a float64, at most about {sys.float_info.max:.3g} in size"
        ) from None
    except (TypeError, ValueError):
        return None


def _short_repr(x: Any) -> str:
    try:
        return f"{x!r:.60}"
    except Exception:  # a huge int (digit limit) or a broken __repr__ must not hide the real error
        return f"<{type(x).__name__}>"


def _micrograd_style_call() -> TypeError:
    return TypeError(
        "Value(data, children, op) is micrograd's constructor; chainrule.Value records its inputs "
        "itself when you combine Values (a + b, a * b, a.tanh()) and takes only Value(data, label=...). "
        "For code written against micrograd (children as a tuple, _op as a string, _backward closures), "
        "import Value from chainrule.micrograd.engine instead"
    )


class Value:
    """A scalar in a computation graph: its value, its gradient and the op that made it."""

    __slots__ = ("data", "grad", "_a", "_b", "_op", "label")

    data: float
    grad: float
    _a: "Value | None"  # first input (None for a leaf)
    _b: "Value | None"  # second input (None for a leaf or a one-input op)
    _op: Op | None
    label: str

    def __init__(
        self, data: float, _a: "Value | None" = None, _b: "Value | None" = None,
        _op: Op | None = None, label: str = "",
    ) -> None:
        self.data = data
        self.grad = 0.0
        self.label = label
        if _op is None:  # a leaf made by the user: check what it holds
            if _a is not None:  # Value(5.0, (a, b), '+'): micrograd's children tuple in our input slot
                raise _micrograd_style_call()
            if data.__class__ is not float:
                self.data = _to_float(data)
            self._a = self._b = None
            self._op = None
        elif _plain:
            self._a = _a
            self._b = _b
            self._op = _op
        else:
            _record_slow_path(self, _a, _b, _op)

    # --- arithmetic: each method computes with the op table and remembers its inputs ---------------

    def __add__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return Value(_add(self.data, other.data), self, other, ADD)

    def __mul__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return Value(_mul(self.data, other.data), self, other, MUL)

    def __sub__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return Value(_sub(self.data, other.data), self, other, SUB)

    def __truediv__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return Value(DIV.forward(self.data, other.data), self, other, DIV)

    def __pow__(self, exponent: "Value | float") -> "Value":
        if isinstance(exponent, Value):
            return Value(POW.forward(self.data, exponent.data), self, exponent, POW)
        k = exponent if exponent.__class__ is float else _real_or_none(exponent)
        if k is None:
            return NotImplemented
        op = power_op(k)
        return Value(op.forward(self.data), self, None, op)

    def __neg__(self) -> "Value":
        return Value(NEG.forward(self.data), self, None, NEG)

    def __abs__(self) -> "Value":
        return Value(ABS.forward(self.data), self, None, ABS)

    def __pos__(self) -> "Value":
        return self

    # Reflected forms: the constant on the left becomes a leaf Value, so `2 * v`, `1 - v`, `2 ** v` work.
    # An operand that is not a real number gives NotImplemented, as Python's data model asks: the other
    # operand's own method then gets its turn (`Value * ndarray` works like `ndarray * Value`), and when
    # both refuse Python raises "unsupported operand type(s) for *: 'Value' and '...'".
    def __radd__(self, other: float) -> "Value":
        other = _operand(other)
        return NotImplemented if other is None else other + self

    def __rmul__(self, other: float) -> "Value":
        other = _operand(other)
        return NotImplemented if other is None else other * self

    def __rsub__(self, other: float) -> "Value":
        other = _operand(other)
        return NotImplemented if other is None else other - self

    def __rtruediv__(self, other: float) -> "Value":
        other = _operand(other)
        return NotImplemented if other is None else other / self

    def __rpow__(self, base: float) -> "Value":
        base = _operand(base)
        return NotImplemented if base is None else base ** self

    def tanh(self) -> "Value":
        return Value(_tanh(self.data), self, None, TANH)

    def exp(self) -> "Value":
        return Value(EXP.forward(self.data), self, None, EXP)

    def log(self) -> "Value":
        return Value(LOG.forward(self.data), self, None, LOG)

    def relu(self) -> "Value":
        return Value(RELU.forward(self.data), self, None, RELU)

    def sigmoid(self) -> "Value":
        return Value(SIGMOID.forward(self.data), self, None, SIGMOID)

    def logaddexp(self, other: "Value | float") -> "Value":
        """log(exp(self) + exp(other)), computed without overflow (see ops.LOGADDEXP)."""
        if other.__class__ is not Value:
            other = _operand(other)
            if other is None:
                raise TypeError("logaddexp takes a Value or a real number")
        return Value(LOGADDEXP.forward(self.data, other.data), self, other, LOGADDEXP)

    # --- the backward pass ---------------------------------------------------------------------------

    def backward(self) -> None:
        """Fill `.grad` of every node with d(self)/d(node).

        Start with gradient 1 at self, then visit nodes in reverse topological order, each adding
        local derivative x its own gradient into its inputs' gradients (`+=`, so uses add up).
        """
        if self._op is None:  # a leaf: d self / d self = 1, accumulated like any leaf gradient
            self.grad += 1.0
            return
        order = topological_order(self, leaves=False, reset_grads=True)
        self.grad = 1.0
        anomaly = None if _plain else _anomaly()
        if anomaly is not None:
            anomaly.checked_backward(order)
            return
        for node in reversed(order):
            a = node._a
            b = node._b
            # The op table's pullback forms local derivative x g (dividing g where the slope has a
            # denominator); None is a masked slope: it passes nothing, not 0 x g.
            if b is not None:
                da, db = node._op.pullback(node.grad, a.data, b.data, node.data)
                if da is not None:
                    a.grad += da
                if db is not None:
                    b.grad += db
            else:
                da = node._op.pullback(node.grad, a.data, node.data)[0]
                if da is not None:
                    a.grad += da

    def zero_grad(self) -> None:
        """Set the gradient of every node in this graph, leaves included, back to 0."""
        for node in topological_order(self):
            node.grad = 0.0

    # --- conveniences -------------------------------------------------------------------------------

    @property
    def op(self) -> str:
        """The name of the op that made this value ('' for a leaf)."""
        return "" if self._op is None else self._op.name

    @property
    def _prev(self) -> tuple["Value", ...]:
        """The inputs, in order: () for a leaf, (a,) or (a, b) for an op."""
        if self._a is None:
            return ()
        return (self._a,) if self._b is None else (self._a, self._b)

    @property
    def inputs(self) -> tuple["Value", ...]:
        return self._prev

    def is_leaf(self) -> bool:
        return self._op is None

    def item(self) -> float:
        return self.data

    def __float__(self) -> float:
        return self.data

    def __repr__(self) -> str:
        label = f", label={self.label!r}" if self.label else ""
        op = f", op={self._op.name}" if self._op is not None else ""
        return f"Value(data={self.data:.6g}, grad={self.grad:.6g}{op}{label})"



def _operand(x: Any) -> Value | None:
    """The other operand of an arithmetic op as a Value (a real number becomes a constant leaf), or
    None for anything else, which the caller turns into NotImplemented."""
    if x.__class__ is float:  # the common case first: no isinstance, no ABC check
        return Value(x)
    if isinstance(x, Value):
        return x
    number = _real_or_none(x)
    return None if number is None else Value(number)


# --- graph walks -------------------------------------------------------------------------------------


def topological_order(root: Value, leaves: bool = True, reset_grads: bool = False) -> list[Value]:
    """Every node that `root` depends on, inputs before the nodes made from them, `root` last.

    An explicit stack, no recursion. A node whose inputs are all listed is listed at once; otherwise it
    goes back on the stack behind a None ("list the next node when you pop me") with its inputs on top.
    A node is marked when popped, not when pushed: one pushed twice is skipped the second time, and a
    marked input is always listed already (a marked, unlisted node is an ancestor of the current one,
    which a graph without cycles rules out). Values hash by identity, so the set holds the nodes
    themselves, cheaper than their ids. With `leaves=False` only interior nodes are listed (the
    backward pass needs no order for leaves); `reset_grads` zeroes the listed nodes' gradients.
    """
    seen: set[Value] = set()
    order: list[Value] = []
    stack: list[Value | None] = [root]
    push, pop, emit, mark = stack.append, stack.pop, order.append, seen.add
    while stack:
        node = pop()
        if node is None:
            emit(pop())
            continue
        if node in seen:
            continue
        mark(node)
        a = node._a
        if a is None:  # a leaf
            if leaves:
                emit(node)
            continue
        if reset_grads:
            node.grad = 0.0
        b = node._b
        # Cheap tests first: in a backward pass (leaves=False) a leaf input costs no set lookup.
        todo_a = (a._a is not None or leaves) and a not in seen
        todo_b = b is not None and (b._a is not None or leaves) and b not in seen
        if todo_a or todo_b:
            push(node)
            push(None)
            if todo_b:  # pushed first so that a's side is listed first
                push(b)
            if todo_a:
                push(a)
        else:
            emit(node)
    return order


# --- functional gradients ----------------------------------------------------------------------------


def grad(output: Value, inputs: Sequence[Value] | Value, create_graph: bool = False) -> tuple[Value, ...]:
    """d output / d input for each input, as Values, without touching any `.grad`.

    With `create_graph=True` the gradients are themselves built from Values, so they can be
    differentiated again (second derivatives). Inputs the output does not depend on get 0.
    """
    single = isinstance(inputs, Value)
    inputs = (inputs,) if single else tuple(inputs)
    for x in inputs:
        if not isinstance(x, Value):
            raise TypeError(f"grad() takes Values as inputs, not {type(x).__name__}")
    if not isinstance(output, Value):
        raise TypeError(f"grad() takes a Value as output, not {type(output).__name__}")
    if _tracer is not None and not create_graph:
        _tracer.numbers(output, "chainrule.grad(...) without create_graph=True")
    order = topological_order(output, leaves=False)
    # Keyed by id: the nodes of `order` stay alive during the call, so their ids stay unique.
    grads: dict[int, Any] = {id(output): Value(1.0) if create_graph else 1.0}
    if create_graph:
        with enable_grad():
            for node in reversed(order):
                g = grads.get(id(node))
                if g is None:  # reached only through masked slopes: its gradient is a constant 0
                    g = grads[id(node)] = Value(0.0)
                prev = node._prev
                for child, contribution in zip(prev, node._op.pullback(g, *prev, node)):
                    if contribution is None:  # masked: passes nothing
                        continue
                    key = id(child)
                    grads[key] = grads[key] + contribution if key in grads else contribution
        result = []
        for x in inputs:
            g = grads.get(id(x), 0.0)
            result.append(g if isinstance(g, Value) else Value(g))
        return tuple(result)
    for node in reversed(order):
        prev = node._prev
        contributions = node._op.pullback(grads.get(id(node), 0.0), *[p.data for p in prev], node.data)
        for child, contribution in zip(prev, contributions):
            if contribution is not None:
                key = id(child)
                grads[key] = grads.get(key, 0.0) + contribution
    return tuple(Value(float(grads.get(id(x), 0.0))) for x in inputs)


def zero_grad(values: Iterable[Value]) -> None:
    """Set `.grad` of each given Value (typically a model's parameters) to 0."""
    for v in values:
        v.grad = 0.0


# --- modes: no_grad, detect_anomaly ------------------------------------------------------------------


@contextmanager
def no_grad() -> Iterator[None]:
    """Inside this block, this thread's ops compute values but record no graph (results are leaves)."""
    with _mode(grad_enabled=False):
        yield


@contextmanager
def enable_grad() -> Iterator[None]:
    """Record the graph again inside a `no_grad` block (this thread only)."""
    with _mode(grad_enabled=True):
        yield


def is_grad_enabled() -> bool:
    """Whether this thread's ops record a graph."""
    return _grad_enabled()


class AnomalyError(FloatingPointError):
    """A NaN or infinity appeared; the message names the op and where its node was created."""


class GradcheckError(AssertionError):
    """Analytic and numerical gradients disagree."""


_ENGINE_FILES = {os.path.abspath(__file__), os.path.abspath(ops.__file__)}


def _creation_site() -> str:
    """file:line of the first frame outside the engine: the user's line that made the node."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) in _ENGINE_FILES:
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    filename, line = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, line).strip()
    return f"{filename}:{line}" + (f" ({source})" if source else "")


class _AnomalyMode:
    """Remembers where each node was made, and checks every value and gradient for NaN and inf."""

    def __init__(self) -> None:
        self.sites: dict[int, tuple[Value, str]] = {}

    def record(self, node: Value) -> None:
        site = _creation_site()
        self.sites[id(node)] = (node, site)  # keeps node alive: ids stay unique while we look
        if not math.isfinite(node.data):
            inputs = ", ".join(f"{p.data:g}" for p in node._prev)
            raise AnomalyError(
                f"forward: {node._op.name}({inputs}) gave {node.data}; node created at {site}"
            )

    def site(self, node: Value) -> str:
        entry = self.sites.get(id(node))
        return entry[1] if entry else "<created outside detect_anomaly>"

    def checked_backward(self, order: list[Value]) -> None:
        for node in reversed(order):
            g = node.grad
            prev = node._prev
            inputs = [p.data for p in prev]
            for k, (child, contribution) in enumerate(zip(prev, node._op.pullback(g, *inputs, node.data))):
                if contribution is None:  # masked
                    continue
                if not math.isfinite(contribution):
                    raise AnomalyError(
                        f"backward: {node._op.name} passed {contribution} to its input "
                        f"(local derivative {node._op.local(*inputs, node.data)[k]}, upstream gradient "
                        f"{g}); node created at {self.site(node)}"
                    )
                child.grad += contribution


@contextmanager
def detect_anomaly() -> Iterator[_AnomalyMode]:
    """Raise `AnomalyError` at the first NaN or inf, forward or backward, naming op and file:line.

    Covers the ops of this thread inside the block, and `backward()` calls made inside it.
    """
    mode = _AnomalyMode()
    with _mode(anomaly=mode):
        yield mode


def _record_slow_path(node: Value, a: Value | None, b: Value | None, op: Op) -> None:
    """Node construction while some thread has a mode active: read this thread's own modes."""
    recording = _grad_enabled()
    tracer = _tracer
    traced = tracer is not None and tracer.node(node, a, b, recording)
    if not recording:
        node._a = node._b = None
        node._op = None
        return
    node._a = a
    node._b = b
    node._op = op
    anomaly = _anomaly()
    if anomaly is not None and not traced:  # a traced node has no number to check yet
        anomaly.record(node)


# --- the hook of chainrule.compile's tracer -------------------------------------------------------------
# While any thread traces, every op node made in ANY thread is shown to the tracer (a worker thread the
# traced function starts must see placeholders too): `tracer.node(node, a, b, recording)` marks a node
# made from a placeholder as one (returns True) and refuses one made under no_grad; `tracer.numbers(v,
# what)` refuses engine functions that would compute with a placeholder's missing number.
_tracer: Any = None
_traces_active = 0


@contextmanager
def tracing(tracer: Any) -> Iterator[None]:
    """Show every op node made inside the block (any thread) to `tracer`; this thread records graphs."""
    global _tracer, _traces_active
    with _state_lock:
        _traces_active += 1
        _tracer = tracer
    try:
        with _mode(grad_enabled=True):
            yield
    finally:
        with _state_lock:
            _traces_active -= 1
            if _traces_active == 0:
                _tracer = None


# --- numerical check ---------------------------------------------------------------------------------


def gradcheck(
    f: Callable[..., Value],
    inputs: Sequence[float | Value],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Compare `grad` of f with central differences (f(x+eps) - f(x-eps)) / 2eps at `inputs`.

    f takes one Value per input and returns a Value. Returns True when every partial derivative
    agrees within atol + rtol * |numerical|; otherwise raises GradcheckError listing each mismatch
    (or returns False when raise_exception is False).
    """
    point = [x.data if isinstance(x, Value) else _to_float(x) for x in inputs]
    leaves = [Value(x) for x in point]
    analytic = [g.data for g in grad(f(*leaves), leaves)]
    mismatches = []
    with no_grad():
        for i, x in enumerate(point):
            up = list(point)
            down = list(point)
            up[i] = x + eps
            down[i] = x - eps
            numerical = (f(*map(Value, up)).data - f(*map(Value, down)).data) / (2 * eps)
            if not abs(analytic[i] - numerical) <= atol + rtol * abs(numerical):
                mismatches.append(f"input {i}: analytic {analytic[i]!r}, numerical {numerical!r}")
    if mismatches and raise_exception:
        raise GradcheckError("gradients disagree at " + "; ".join(mismatches))
    return not mismatches
