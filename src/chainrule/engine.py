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

import math
import numbers
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, cast

from chainrule import modes, ops
from chainrule.modes import (
    AnomalyError,
    detect_anomaly,
    enable_grad,
    is_grad_enabled,
    no_grad,
    tracing,
)
from chainrule.ops import (
    ABS,
    ADD,
    ATAN,
    COS,
    DIV,
    ERF,
    EXP,
    GREATER,
    IS_ZERO,
    LOG,
    LOG1P,
    LOGADDEXP,
    MASK,
    MAXIMUM,
    MINIMUM,
    MUL,
    NEG,
    POW,
    RELU,
    SIGMOID,
    SIN,
    SOFTPLUS,
    SQRT,
    STOP_GRADIENT,
    SUB,
    TANH,
    Op,
    clamp_op,
    power_op,
    watch_ops,
)

__all__ = [
    "Value", "grad", "where", "stop_gradient", "no_grad", "enable_grad", "is_grad_enabled", "zero_grad", "gradcheck",
    "detect_anomaly", "AnomalyError", "GradcheckError", "topological_order", "reverse_sweep",
    "tracing",
]

_mul = MUL.forward
_add = ADD.forward
_sub = SUB.forward

# True while no thread has a mode open (no_grad, detect_anomaly, ...): then an op records its node with
# no further check. A global read costs less than a thread-local; `modes` keeps it up to date.
_plain = True


def _set_plain(plain: bool) -> None:
    global _plain
    _plain = plain


modes.watch_plain(_set_plain)


def to_float(x: Any) -> float:
    """A Python number as float, or a TypeError that names what was given and what is allowed."""
    number = real_or_none(x)
    if number is None:
        raise TypeError(
            f"a Value holds a real number (int or float), not {type(x).__name__}: {_short_repr(x)}"
        )
    return number


def real_or_none(x: Any) -> float | None:
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
                self.data = to_float(data)
            self._a = self._b = None
            self._op = None
        elif _plain:
            self._a = _a
            self._b = _b
            self._op = _op
        else:
            modes.record(self, _a, _b, _op)

    # --- arithmetic: each method computes with the op table and remembers its inputs ---------------

    def __add__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            operand = _operand(other)
            if operand is None:
                return NotImplemented
            other = operand
        return Value(_add(self.data, other.data), self, other, ADD)

    def __mul__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            operand = _operand(other)
            if operand is None:
                return NotImplemented
            other = operand
        return Value(_mul(self.data, other.data), self, other, MUL)

    def __sub__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            operand = _operand(other)
            if operand is None:
                return NotImplemented
            other = operand
        return Value(_sub(self.data, other.data), self, other, SUB)

    def __truediv__(self, other: "Value | float") -> "Value":
        if other.__class__ is not Value:
            operand = _operand(other)
            if operand is None:
                return NotImplemented
            other = operand
        return Value(DIV.forward(self.data, other.data), self, other, DIV)

    def __pow__(self, exponent: "Value | float") -> "Value":
        if isinstance(exponent, Value):
            return Value(POW.forward(self.data, exponent.data), self, exponent, POW)
        k = exponent if exponent.__class__ is float else real_or_none(exponent)
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
        value = _operand(other)
        return NotImplemented if value is None else value + self

    def __rmul__(self, other: float) -> "Value":
        value = _operand(other)
        return NotImplemented if value is None else value * self

    def __rsub__(self, other: float) -> "Value":
        value = _operand(other)
        return NotImplemented if value is None else value - self

    def __rtruediv__(self, other: float) -> "Value":
        value = _operand(other)
        return NotImplemented if value is None else value / self

    def __rpow__(self, base: float) -> "Value":
        value = _operand(base)
        return NotImplemented if value is None else value ** self

    # --- the ops called by name: one method each, into the op table (ops.py) ---------------------------

    def exp(self) -> "Value":
        return Value(EXP.forward(self.data), self, None, EXP)

    def log(self) -> "Value":
        return Value(LOG.forward(self.data), self, None, LOG)

    def tanh(self) -> "Value":
        return Value(TANH.forward(self.data), self, None, TANH)

    def sigmoid(self) -> "Value":
        return Value(SIGMOID.forward(self.data), self, None, SIGMOID)

    def relu(self) -> "Value":
        return Value(RELU.forward(self.data), self, None, RELU)

    def abs(self) -> "Value":
        return Value(ABS.forward(self.data), self, None, ABS)

    def sin(self) -> "Value":
        return Value(SIN.forward(self.data), self, None, SIN)

    def cos(self) -> "Value":
        return Value(COS.forward(self.data), self, None, COS)

    def sqrt(self) -> "Value":
        return Value(SQRT.forward(self.data), self, None, SQRT)

    def log1p(self) -> "Value":
        return Value(LOG1P.forward(self.data), self, None, LOG1P)

    def softplus(self) -> "Value":
        return Value(SOFTPLUS.forward(self.data), self, None, SOFTPLUS)

    def erf(self) -> "Value":
        return Value(ERF.forward(self.data), self, None, ERF)

    def atan(self) -> "Value":
        return Value(ATAN.forward(self.data), self, None, ATAN)

    def logaddexp(self, other: "Value | float") -> "Value":
        return _binary(LOGADDEXP, self, other)

    def maximum(self, other: "Value | float") -> "Value":
        return _binary(MAXIMUM, self, other)

    def minimum(self, other: "Value | float") -> "Value":
        return _binary(MINIMUM, self, other)

    def greater(self, other: "Value | float") -> "Value":
        return _binary(GREATER, self, other)

    def clamp(self, low: float | None = None, high: float | None = None) -> "Value":
        """self held within [low, high] (either bound may be None), as `torch.clamp`: the gradient passes
        where low <= self <= high and is 0 outside."""
        return _unary(clamp_op(low, high), self)

    def detach(self) -> "Value":
        """self's value, passing no gradient back (`stop_gradient`, as `torch.Tensor.detach` and JAX's
        `lax.stop_gradient`). A node, not a new leaf, so compiled code keeps it per example."""
        return Value(STOP_GRADIENT.forward(self.data), self, None, STOP_GRADIENT)

    @staticmethod
    def apply(op: Op, *inputs: "Value | float") -> "Value":
        """A node of any op of the table on these inputs (numbers become constant leaves): what the
        operators and the ops' methods make, for code that holds the op itself (`ops.apply`)."""
        if len(inputs) != op.arity:
            raise TypeError(f"{op.name} takes {op.arity} input{'s' if op.arity > 1 else ''}, got {len(inputs)}")
        values = []
        for x in inputs:
            v = x if isinstance(x, Value) else _operand(x)
            if v is None:
                raise TypeError(f"{op.name} takes Values or real numbers, not {type(x).__name__}")
            values.append(v)
        if op.arity == 1:
            return Value(op.forward(values[0].data), values[0], None, op)
        return Value(op.forward(values[0].data, values[1].data), values[0], values[1], op)

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
        anomaly = None if _plain else modes.current_anomaly()
        reverse_sweep(order, inspect=None if anomaly is None else anomaly.check_pullback)

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



if TYPE_CHECKING:
    class Interior(Value):
        """For the type checker only: a node an op made, so it has an op and a first input. The backward
        sweep's order lists only these (`topological_order(..., leaves=False)`); at run time each is a Value."""

        _a: Value
        _op: Op


def _unary(op: Op, a: Value) -> Value:
    return Value(op.forward(a.data), a, None, op)


def _binary(op: Op, a: Value, other: Any) -> Value:
    if other.__class__ is not Value:
        b = _operand(other)
        if b is None:
            raise TypeError(f"{op.function} takes a Value or a real number, not {type(other).__name__}")
        other = b
    return Value(op.forward(a.data, other.data), a, other, op)


_BUILT_IN = {op.function for op in ops.OPS.values()}  # the ops whose methods are written in the class


def _check_function_name(op: Op, added: bool) -> None:
    """An op registered at run time is made with `Value.apply(op, x)` (or `ops.apply`); its function name
    (the expression language's) must still not be one of Value's attributes, so that `x.name()` never
    means something else than `name(x)`."""
    name = op.function
    if not added or name is None or name in _BUILT_IN or op.arity not in (1, 2):
        return
    if name in Value.__dict__ or name.startswith("_"):
        raise ValueError(f"{name!r} cannot be an op's function name: Value already has an attribute of that name")


def _operand(x: Any) -> Value | None:
    """The other operand of an arithmetic op as a Value (a real number becomes a constant leaf), or
    None for anything else, which the caller turns into NotImplemented."""
    if x.__class__ is float:  # the common case first: no isinstance, no ABC check
        return Value(x)
    if isinstance(x, Value):
        return x
    number = real_or_none(x)
    return None if number is None else Value(number)


watch_ops(_check_function_name)


def where(condition: "Value | bool", a: "Value | float", b: "Value | float") -> Value:
    """a where condition holds, else b, as `torch.where`: `condition` is a bool or a Value, true where it is
    not 0 (`x.greater(y)` makes one). The gradient goes to the chosen input only (the other gets exactly 0,
    even from an inf), and the choice is a node, so compiled code makes it per example. One difference:
    a chosen -0.0 comes out as 0.0 (the choice is a sum of the chosen input and an exact 0)."""
    c = condition if isinstance(condition, Value) else Value(1.0 if _truth(condition) else 0.0)
    a_value, b_value = _operand(a), _operand(b)
    if a_value is None or b_value is None:
        raise TypeError(f"where() chooses between Values or real numbers, not {type(a if a_value is None else b).__name__}")
    return Value.apply(MASK, a_value, Value.apply(IS_ZERO, c)) + Value.apply(MASK, b_value, c)


def _truth(condition: Any) -> bool:
    if isinstance(condition, bool):
        return condition
    raise TypeError(f"where() takes a condition that is a bool or a Value (x.greater(y)), not {type(condition).__name__}")


def stop_gradient(x: "Value | float") -> Value:
    """x's value, passing no gradient back: `x.detach()`, by JAX's name."""
    value = _operand(x)
    if value is None:
        raise TypeError(f"stop_gradient() takes a Value or a real number, not {type(x).__name__}")
    return value.detach()


# --- graph walks -------------------------------------------------------------------------------------


def topological_order(root: Value, leaves: bool = True, reset_grads: bool = False) -> list[Value]:
    """Every node that `root` depends on, inputs before the nodes made from them, `root` last.

    An explicit stack, no recursion. A node whose inputs are all listed is listed at once; otherwise it
    goes back on the stack behind a None ("list the next node when you pop me") with its inputs on top.
    A node is marked when popped, not when pushed: one pushed twice is skipped the second time, and a
    marked input is always listed already (a marked, unlisted node is an ancestor of the current one,
    which a graph without cycles rules out). Values hash by identity, so the set holds the nodes
    themselves, cheaper than their ids. With `leaves=False` only interior nodes are listed (the
    backward pass needs no order for leaves); `reset_grads` zeroes the listed nodes' gradients (what
    `backward()` needs before it sweeps). This is the engine's one graph walk: the backward sweep,
    forward mode, traces and pictures all list a graph with it.
    """
    seen: set[Value] = set()
    order: list[Value] = []
    stack: list[Value | None] = [root]
    push, pop, emit, mark = stack.append, stack.pop, order.append, seen.add
    while stack:
        node = pop()
        if node is None:
            emit(pop())  # type: ignore[arg-type]  # below a None marker is always the node it marks
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


# --- the backward sweep ------------------------------------------------------------------------------


def reverse_sweep(
    order: Sequence[Value],
    grads: dict[Value, Any] | None = None,
    differentiable: bool = False,
    inspect: Callable[[Value, Any, tuple[Any, ...]], None] | None = None,
) -> None:
    """The backward pass, written once: `backward()`, `grad()` (with and without `create_graph`),
    anomaly mode and the step trace all run this loop.

    `order` lists interior nodes, inputs before the nodes made from them (`topological_order(...,
    leaves=False)`). Each node, newest first, hands each input what its op's pullback gives for the
    node's gradient, added into the input's gradient (uses of one value add up; a masked slope, None,
    passes nothing). Where gradients live:

    * `grads=None`: in each node's `.grad` (`backward()`, which zeroes the interior nodes and sets the
      output's to 1 first). Attribute slots are the fast path: a dict costs a third more on a sum of
      products (instruction counts in docs/performance.md).
    * a dict node -> gradient (missing = 0) holding the seed, usually {output: 1.0}: `.grad` untouched.

    With `differentiable` the pullbacks get the Values themselves, so the gradients are built as Values
    (run it with graph recording on). `inspect(node, gradient, passed)` sees each node's pullback before
    it is added (anomaly checks, trace steps).
    """
    in_slots = grads is None
    table: dict[Value, Any] = {} if grads is None else grads  # with in_slots: never read
    get = table.get
    plain = not differentiable and inspect is None  # the hot path: one test per node
    # `order` holds interior nodes only (each has an op and a first input): said once to the type checker
    # here, not checked per node.
    for node in cast("Iterable[Interior]", reversed(order)):
        g: float | Value | None  # a Value when `differentiable`
        if in_slots:
            g = node.grad
        else:
            g = get(node)
            if g is None:  # reached only through constant ops (sign): no gradient at all, as PyTorch's
                continue  # undefined one, so 0 x an infinite slope upstream cannot make a nan
        a = node._a
        b = node._b
        if not plain:
            passed = _inspected_pullback(node, g, differentiable, inspect)
        elif b is None:
            passed = node._op.pullback(g, a.data, node.data)
        else:
            passed = node._op.pullback(g, a.data, b.data, node.data)
        if b is None:
            da = passed[0]
            db = None
        else:
            da, db = passed
        if da is not None:  # a first, then b: with a * a the order of the two additions shows in the bits
            if in_slots:
                a.grad += da
            else:
                table[a] = get(a, 0.0) + da
        elif not in_slots and a not in table and not node._op.constant:
            table[a] = 0.0  # masked (relu left of 0): a zero gradient, as PyTorch's threshold_backward gives
        # db is None whenever b is (set just above): the type checker cannot see that, and a test of b
        # per node here would cost the hot path.
        if db is not None:
            if in_slots:
                b.grad += db  # type: ignore[union-attr]  # b is a Value here: see above
            else:
                table[b] = get(b, 0.0) + db  # type: ignore[index, arg-type]  # b is a Value here: see above
        elif b is not None and not in_slots and b not in table and not node._op.constant:
            table[b] = 0.0


def _inspected_pullback(
    node: Interior, g: Any, differentiable: bool, inspect: Callable[[Value, Any, tuple[Any, ...]], None] | None,
) -> tuple[Any, ...]:
    """A node's pullback off the hot path: on the Values themselves (`differentiable`), then shown to
    `inspect` before the sweep adds it."""
    inputs = node._prev if differentiable else tuple(p.data for p in node._prev)
    passed = node._op.pullback(g, *inputs, node if differentiable else node.data)
    if inspect is not None:
        inspect(node, g, passed)
    return passed


# --- functional gradients ----------------------------------------------------------------------------


def grad(
    output: Value | Sequence[Value], inputs: Sequence[Value] | Value, create_graph: bool = False, *,
    grad_outputs: Sequence[Any] | None = None,
) -> tuple[Value, ...]:
    """d output / d input for each input, as Values, without touching any `.grad`.

    With `create_graph=True` the gradients are themselves built from Values, so they can be
    differentiated again (second derivatives). Inputs the output does not depend on get 0. As in
    `torch.autograd.grad`, `output` may be a sequence of Values and `grad_outputs` their cotangents
    (numbers or Values, default 1 each): the result is then the vector-Jacobian product, sum over k of
    grad_outputs[k] x d output[k] / d input.
    """
    wrt = (inputs,) if isinstance(inputs, Value) else tuple(inputs)
    for x in wrt:
        if not isinstance(x, Value):
            raise TypeError(f"grad() takes Values as inputs, not {type(x).__name__}")
    outputs = (output,) if isinstance(output, Value) else tuple(output) if isinstance(output, (list, tuple)) else None
    if outputs is None or not all(isinstance(out, Value) for out in outputs):
        raise TypeError(f"grad() takes a Value (or a sequence of Values) as output, not {type(output).__name__}")
    if grad_outputs is None:
        seeds: Sequence[Any] = [1.0] * len(outputs)
    else:
        seeds = list(grad_outputs)
        if len(seeds) != len(outputs):
            raise ValueError(f"grad() needs one grad_output per output: {len(outputs)} outputs, {len(seeds)} given")
    tracer = None if _plain else modes.current_tracer()
    if tracer is not None and not create_graph:
        for out in outputs:
            tracer.numbers(out, "chainrule.grad(...) without create_graph=True")
    grads: dict[Value, Any] = {}
    for out, seed in zip(outputs, seeds):
        if create_graph:
            seed = seed if isinstance(seed, Value) else Value(to_float(seed))
        elif isinstance(seed, Value):
            seed = seed.data
        else:
            seed = to_float(seed)
        grads[out] = grads[out] + seed if out in grads else seed
    anomaly = None if _plain else modes.current_anomaly()
    check = None if anomaly is None else anomaly.check_pullback
    order = topological_order(outputs[0], leaves=False) if len(outputs) == 1 else _merged_order(outputs)
    if create_graph:
        with enable_grad():
            reverse_sweep(order, grads, differentiable=True, inspect=check)
        found = [grads.get(x, 0.0) for x in wrt]
        return tuple(g if isinstance(g, Value) else Value(g) for g in found)
    reverse_sweep(order, grads, inspect=check)
    return tuple(Value(float(grads.get(x, 0.0))) for x in wrt)


def _merged_order(outputs: Sequence[Value]) -> list[Value]:
    """The interior nodes of several outputs' graphs, each once, inputs before the nodes made from them."""
    seen: set[Value] = set()
    order: list[Value] = []
    for out in outputs:
        for node in topological_order(out, leaves=False):
            if node not in seen:
                seen.add(node)
                order.append(node)
    return order


def zero_grad(values: Iterable[Value]) -> None:
    """Set `.grad` of each given Value (typically a model's parameters) to 0."""
    for v in values:
        v.grad = 0.0


class GradcheckError(AssertionError):
    """Analytic and numerical gradients disagree."""


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
    point = [x.data if isinstance(x, Value) else to_float(x) for x in inputs]
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
