"""The one table of operations: each op's forward rule and its local derivatives, side by side.

Everything else reads this table: `Value` computes forward values with `Op.forward`, the backward pass
(`engine.reverse_sweep`) hands each input what `Op.pullback` gives for the upstream gradient, forward mode
(`forward.py`) reads the same pullback with an input's tangent in place of the gradient, and the step
captions and docs show `Op.formula`, `Op.local` and `Op.local_text`. Change a rule here and it changes
everywhere; a new op is one `Op(...)` entry below (and, called by name, its one-line `Value` method in
engine.py, which tests/test_ops_selects.py asks for).

Conventions, with a and b the inputs and out the result:

* ``forward(a, b) -> float`` works on floats and follows IEEE/PyTorch float64 semantics: overflow gives
  inf, log(0) gives -inf, log of a negative number or a negative base to a fractional power gives nan,
  x / 0 gives inf, -inf or nan. It never raises and never returns a complex number.
* ``pullback(g, a, b, out) -> tuple`` returns, for each input, what the op passes back to it when the
  gradient ``g`` arrives at ``out``: the local derivative times ``g``, formed as PyTorch forms it. A
  slope with a denominator divides ``g`` (``g / b``, never ``(1 / b) * g``), so a subnormal denominator
  cannot overflow to inf and turn a zero gradient into nan. It is written with operators and the
  helpers below, so it works both on floats (the ordinary backward pass) and on `Value`s
  (``create_graph=True``, which makes the gradient itself differentiable). A slope that PyTorch masks
  with ``where()`` (relu left of 0, a zero exponent) gives ``None``, "masked": the input receives
  nothing, not 0 x g, so an inf or nan from above does not reach it; see `chain`.
* ``Op.local(a, b, out)`` is the pullback of ``g = 1``: the local derivatives, for captions and checks.
* ``array_forward`` and ``array_pullback`` are the same rules on NumPy float64 arrays, one element per
  example (`chainrule.compile` replays a graph with them). ``array_pullback(g, *inputs, out)`` returns
  what each input receives when the gradient ``g`` arrives at ``out``: local derivative x g, exactly 0
  where the float rule's slope is masked (``None`` when masked everywhere). ``None`` in the table means
  the float rule is written with operators only and works on arrays as it stands (see
  `array_pullback_of`). NumPy is imported only inside these functions, so the engine runs without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from chainrule.kernels import (  # noqa: F401  (re-exported: the table's rules, by their old names)
    INF,
    NAN,
    array_sum_of_products,
    array_sum_of_products_pullback,
    chain,
    clamp,
    data_of,
    div,
    erf_array,
    exp,
    log,
    logaddexp,
    maximum,
    maximum_array_pullback,
    minimum,
    minimum_array_pullback,
    power,
    probe_points,
    relu,
    safe_cos,
    safe_div,
    safe_exp,
    safe_log,
    safe_log1p,
    safe_pow,
    safe_sin,
    safe_sqrt,
    sign,
    softplus,
    softplus_array,
    softplus_slope,
    softplus_slope_array,
    stable_sigmoid,
    value_class,
)
from chainrule.kernels import (
    exp_array as _exp_array,
)
from chainrule.kernels import (
    is_float as _is_float,
)
from chainrule.kernels import (
    log_array as _log_array,
)
from chainrule.kernels import (
    log_array_pullback as _log_array_pullback,
)
from chainrule.kernels import (
    logaddexp_array as _logaddexp_array,
)
from chainrule.kernels import (
    masked as _masked,
)
from chainrule.kernels import (
    multiply_array_pullback as _multiply_array_pullback,
)
from chainrule.kernels import (
    negate_array_pullback as _negate_array_pullback,
)
from chainrule.kernels import (
    numpy_module as _np,
)
from chainrule.kernels import (
    pow_array_pullback as _pow_array_pullback,
)
from chainrule.kernels import (
    power_array as _power_array,
)
from chainrule.kernels import (
    power_array_pullback as _power_array_pullback,
)
from chainrule.kernels import (
    relu_array as _relu_array,
)
from chainrule.kernels import (
    relu_array_pullback as _relu_array_pullback,
)
from chainrule.kernels import (
    sigmoid_array as _sigmoid_array,
)
from chainrule.kernels import (
    sigmoid_array_pullback as _sigmoid_array_pullback,
)
from chainrule.kernels import (
    sign_array as _sign_array,
)
from chainrule.kernels import (
    subtract_array_pullback as _subtract_array_pullback,
)
from chainrule.kernels import (
    tanh_array as _tanh_array,
)
from chainrule.kernels import (
    tanh_array_pullback as _tanh_array_pullback,
)
from chainrule.kernels import (
    ufunc_form as _ufunc_form,
)

# --- the table ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Op:
    """One operation: how to compute it and how it passes gradients back. Built with keywords only.

    ``formula`` and ``local_text`` use the names {out}, {a} and {b}; the trace fills in real labels.
    ``function`` is the name the op is called by where it has no operator: a `Value` method (``x.sin()``),
    a function of the expression language (``sin(x)``, one-input ops) and the graph command's PyTorch
    check; ``torch`` names PyTorch's function for it (``"sin"`` for ``torch.sin``). Every op of `OPS` is
    also a node kind of the lessons' graphs, by its ``name``.
    """

    name: str
    symbol: str
    arity: int
    forward: Callable[..., float]
    pullback: Callable[..., tuple[Any, ...]]  # (g, *inputs, out) -> what each input receives; None = masked
    formula: str
    local_text: tuple[str, ...]
    doc: str = ""
    function: str | None = None  # x.function() and function(x) in expressions; None: written as an operator
    torch: str | None = None  # PyTorch's function, a name under `torch` ("sin", "nn.functional.softplus")
    nonnegative: bool = False  # every result is >= 0 or nan (compiled replay skips a minimum)
    constant: bool = False  # piecewise constant (sign, an indicator): no derivative at all, not even a 0 that
    # could meet an inf (forward mode gives it no tangent, as PyTorch's zero tensors in its formulas)
    exponent: float | None = None  # the fixed exponent of a constant power
    array_forward: Callable[..., Any] | None = None  # None: `forward` works on arrays
    array_pullback: Callable[..., tuple[Any, ...]] | None = None  # None: see array_pullback_of

    def local(self, *inputs_and_out: Any) -> tuple[Any, ...]:
        """d out / d input for each input (None where masked): the pullback of a gradient of 1."""
        return self.pullback(1.0, *inputs_and_out)


def apply(op: Op, *inputs: Any) -> Any:
    """`op` of floats, of Values or of NumPy arrays, whichever the inputs are: a pullback written with it
    works in the backward pass (floats), for second derivatives (Values) and in compiled replay (arrays)."""
    for x in inputs:
        if x.__class__ is float or x.__class__ is int:
            continue
        make = getattr(x.__class__, "apply", None)  # a Value: a new node (see engine.Value.apply)
        if make is not None:
            return make(op, *inputs)
        return (op.array_forward or op.forward)(*inputs)
    return op.forward(*inputs)


ADD = Op(
    name="add", symbol="+", arity=2, forward=lambda a, b: a + b,
    pullback=lambda g, a, b, out: (g, g),
    formula="{out} = {a} + {b}", local_text=("1", "1"),
    doc="Addition copies the gradient to both inputs: d(a+b)/da = d(a+b)/db = 1.",
    array_forward=_ufunc_form("add"),
)
SUB = Op(
    name="sub", symbol="-", arity=2, forward=lambda a, b: a - b,
    pullback=lambda g, a, b, out: (g, -g),
    formula="{out} = {a} - {b}", local_text=("1", "-1"),
    doc="Subtraction: d(a-b)/da = 1, d(a-b)/db = -1.",
    array_forward=_ufunc_form("subtract"), array_pullback=_subtract_array_pullback,
)
MUL = Op(
    name="mul", symbol="*", arity=2, forward=lambda a, b: a * b,
    pullback=lambda g, a, b, out: (g * b, g * a),
    formula="{out} = {a} * {b}", local_text=("{b}", "{a}"),
    doc="Multiplication swaps the factors: d(ab)/da = b, d(ab)/db = a.",
    array_forward=_ufunc_form("multiply"), array_pullback=_multiply_array_pullback,
)
DIV = Op(
    name="div", symbol="/", arity=2, forward=safe_div,
    pullback=lambda g, a, b, out: (div(g, b), -g * div(out, b)),  # as PyTorch: -g * ((a/b)/b)
    formula="{out} = {a} / {b}", local_text=("1 / {b}", "-{out} / {b}"),
    doc="Division: d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -(a/b)/b.",
    array_forward=_ufunc_form("divide"),
)
NEG = Op(
    name="neg", symbol="-", arity=1, forward=lambda a: -a,
    pullback=lambda g, a, out: (-g,),
    formula="{out} = -{a}", local_text=("-1",),
    doc="Negation: d(-a)/da = -1.",
    array_forward=_ufunc_form("negative"), array_pullback=_negate_array_pullback,
)


def _pow_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    # As PyTorch: a zero exponent masks the slope in the base (a ** 0 is constant). A zero base with a
    # non-negative exponent has slope 0 in the exponent (instead of out * log 0 = nan), but PyTorch
    # multiplies that 0 by g rather than masking it, so an inf or nan g still gives nan; we do the same.
    if _is_float(a) and _is_float(b):
        da = None if b == 0.0 else g * (b * power(a, b - 1.0))
        db = g * 0.0 if (a == 0.0 and b >= 0.0) else g * (out * log(a))
        return da, db
    # On Values the two choices are nodes (see MASK), so that the gradient graph holds them.
    da = apply(MASK, g * (b * power(a, b - 1.0)), apply(IS_ZERO, b))
    db = g * apply(MASK, out * log(a), apply(ZERO_BASE, a, out))
    return da, db


POW = Op(
    name="pow", symbol="**", arity=2, forward=safe_pow, pullback=_pow_pullback,
    formula="{out} = {a} ** {b}", local_text=("{b} * {a} ** ({b} - 1)", "{out} * log({a})"),
    doc="Power with a variable exponent: d(a^b)/da = b a^(b-1), d(a^b)/db = a^b log a.",
    torch="pow", array_forward=lambda a, b: _np().power(a, b), array_pullback=_pow_array_pullback,
)

_power_ops: dict[float, Op] = {}


def _constant_power_form(k: float) -> Callable[..., Any]:
    def rule(a: Any, out: Any = None) -> Any:
        return _power_array(a, k, out)

    rule.takes_out = True  # type: ignore[attr-defined]  # compile's replay may pass its store
    return rule


def power_op(k: float) -> Op:
    """The op `a ** k` for a constant k (one shared Op per exponent)."""
    op = _power_ops.get(k)
    if op is None:
        def pullback(g: Any, a: Any, out: Any, k: float = k) -> tuple[Any, ...]:
            return (None if k == 0.0 else g * (k * power(a, k - 1.0)),)  # a ** 0 is constant: masked

        def array_pullback(g: Any, a: Any, out: Any, into: Any = None, k: float = k) -> tuple[Any, ...]:
            return _power_array_pullback(g, a, k, into)

        array_pullback.writes_into = True  # type: ignore[attr-defined]  # compile's replay may pass its store

        text = f"{k:g}"
        op = Op(
            name=f"pow{text}", symbol=f"**{text}", arity=1, forward=lambda a, k=k: safe_pow(a, k),
            pullback=pullback, formula="{out} = {a} ** " + text, local_text=(f"{text} * {{a}} ** {k - 1.0:g}",),
            doc=f"Constant power: d(a^{text})/da = {text} a^({k - 1.0:g}).", exponent=k,
            array_forward=_constant_power_form(k), array_pullback=array_pullback,
        )
        if len(_power_ops) < 1024:  # bounded: exponents are few in practice
            _power_ops[k] = op
    return op


EXP = Op(
    name="exp", symbol="exp", arity=1, forward=safe_exp,
    pullback=lambda g, a, out: (g * out,),
    formula="{out} = exp({a})", local_text=("{out}",),
    doc="Exponential is its own derivative: d(e^a)/da = e^a.",
    function="exp", torch="exp", nonnegative=True, array_forward=_exp_array,
)
LOG = Op(
    name="log", symbol="log", arity=1, forward=safe_log,
    pullback=lambda g, a, out: (div(g, a),),
    formula="{out} = log({a})", local_text=("1 / {a}",),
    doc="Natural logarithm: d(log a)/da = 1/a.",
    function="log", torch="log", array_forward=_log_array, array_pullback=_log_array_pullback,
)
TANH = Op(
    name="tanh", symbol="tanh", arity=1, forward=math.tanh,
    pullback=lambda g, a, out: (g * (1.0 - out * out),),
    formula="{out} = tanh({a})", local_text=("1 - {out}^2",),
    doc="Hyperbolic tangent: d tanh(a)/da = 1 - tanh(a)^2.",
    function="tanh", torch="tanh", array_forward=_tanh_array,
    array_pullback=_tanh_array_pullback,
)
SIGMOID = Op(
    name="sigmoid", symbol="sigmoid", arity=1, forward=stable_sigmoid,
    pullback=lambda g, a, out: (g * (1.0 - out) * out,),  # PyTorch's order of the products
    formula="{out} = sigmoid({a})", local_text=("{out} * (1 - {out})",),
    doc="Logistic sigmoid: d s(a)/da = s(a) (1 - s(a)).",
    function="sigmoid", torch="sigmoid", nonnegative=True, array_forward=_sigmoid_array,
    array_pullback=_sigmoid_array_pullback,
)
RELU = Op(
    name="relu", symbol="relu", arity=1, forward=relu,
    # Masked as PyTorch (a nan input passes); on Values the mask is a node (see MASK).
    pullback=lambda g, a, out: ((None if a <= 0.0 else g,) if a.__class__ is float
                                else (apply(MASK, g, apply(AT_MOST_ZERO, a)),)),
    formula="{out} = relu({a})", local_text=("1 if {a} > 0 else 0",),
    doc="Rectifier: slope 1 where a > 0, else 0 (0 at a = 0, as in PyTorch).",
    function="relu", torch="relu", nonnegative=True,
    array_forward=_relu_array, array_pullback=_relu_array_pullback,
)
ABS = Op(
    name="abs", symbol="abs", arity=1, forward=abs,
    # Not masked: inf x 0 is nan, as in PyTorch. On Values the sign is a node (SIGN).
    pullback=lambda g, a, out: (g * (sign(a) if a.__class__ is float else apply(SIGN, a)),),
    formula="{out} = |{a}|", local_text=("sign({a})",),
    doc="Absolute value: d|a|/da = sign(a) (0 at a = 0, as in PyTorch).",
    function="abs", torch="abs", nonnegative=True,
    array_forward=lambda a: _np().abs(a), array_pullback=lambda g, a, out: (_sign_array(a) * g,),
)
COS = Op(
    name="cos", symbol="cos", arity=1, forward=safe_cos,
    pullback=lambda g, a, out: (g * -apply(SIN, a),),  # PyTorch's formula: grad * -sin(a)
    formula="{out} = cos({a})", local_text=("-sin({a})",),
    doc="Cosine: d cos(a)/da = -sin(a).",
    function="cos", torch="cos", array_forward=lambda a: _np().cos(a),
)
SIN: Op = Op(
    name="sin", symbol="sin", arity=1, forward=safe_sin,
    pullback=lambda g, a, out: (g * apply(COS, a),),  # PyTorch's formula: grad * cos(a)
    formula="{out} = sin({a})", local_text=("cos({a})",),
    doc="Sine: d sin(a)/da = cos(a).",
    function="sin", torch="sin", array_forward=lambda a: _np().sin(a),
)


def softmax_weight(a: float, b: float) -> float:
    """e^a / (e^a + e^b), the weight of a in log(e^a + e^b), with no exponential that can overflow."""
    d = b - a
    e = safe_exp(-abs(d))
    return (e if d > 0.0 else 1.0) / (1.0 + e)


def _softmax_weight_array(a: Any, b: Any) -> Any:
    np = _np()
    d = b - a
    e = _exp_array(-np.abs(d))
    return np.where(d > 0.0, e, 1.0) / (1.0 + e)


def _softmax_weight_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    # d w_a/d a = w_a w_b and d w_a/d b = -w_a w_b, with w_b computed as a weight itself (not 1 - w_a), so
    # that a weight near 1 keeps the small slope that 1 - w_a would round away.
    slope = g * out * apply(SOFTMAX_WEIGHT, b, a)
    return slope, -slope


SOFTMAX_WEIGHT = Op(
    name="softmax_weight", symbol="w", arity=2, forward=softmax_weight, pullback=_softmax_weight_pullback,
    formula="{out} = exp({a}) / (exp({a}) + exp({b}))", local_text=("{out} w({b}, {a})", "-{out} w({b}, {a})"),
    doc="The softmax weight of a against b, the slope of logaddexp(a, b) in a; its own slopes are +-w_a w_b.",
    array_forward=_softmax_weight_array,
)


def _logaddexp_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    if _is_float(a) and _is_float(b):  # PyTorch's form, g / (1 + e^(b - a)), bit for bit; e^... = inf gives 0
        return div(g, 1.0 + safe_exp(b - a)), div(g, 1.0 + safe_exp(a - b))
    # On Values the weights are nodes whose own slopes stay finite however far apart a and b are (the
    # form above has slope inf x 0 = nan past 709.78 apart).
    return g * apply(SOFTMAX_WEIGHT, a, b), g * apply(SOFTMAX_WEIGHT, b, a)


LOGADDEXP = Op(
    name="logaddexp", symbol="logaddexp", arity=2, forward=logaddexp,
    # The softmax weights, exact where a weight is nearly 1 or 0, so that second derivatives keep their
    # small values (see _logaddexp_pullback).
    pullback=_logaddexp_pullback,
    formula="{out} = log(exp({a}) + exp({b}))",
    local_text=("1 / (1 + exp({b} - {a}))", "1 / (1 + exp({a} - {b}))"),
    doc="Log-sum-exp of two: d/da log(e^a + e^b) = e^a / (e^a + e^b) = 1 / (1 + e^(b - a)). Folded over a "
        "list it is the log-sum-exp of the list (softmax cross-entropy), with no exponential that can overflow.",
    function="logaddexp", torch="logaddexp", array_forward=_logaddexp_array,
    array_pullback=lambda g, a, b, out: (g / (1.0 + _exp_array(b - a)), g / (1.0 + _exp_array(a - b))),
)

# --- ops the pullbacks build on Values ---------------------------------------------------------------
# On Values (create_graph=True, nested transforms, compile tracing a gradient) a pullback must not choose
# in Python from a number: compile would freeze the choice made for its placeholders. These ops make the
# choice in their own rule, value by value, so the gradient graph holds it as a node, as PyTorch's
# threshold_backward and where() do. They are not in OPS: no one writes them; pullbacks make them.


def _mask(x: Any, c: Any) -> Any:
    return (None if c != 0.0 else x) if _is_float(c) else apply(MASK, x, c)


MASK: Op = Op(
    name="mask", symbol="mask", arity=2, forward=lambda x, c: 0.0 if c != 0.0 else x,
    pullback=lambda g, x, c, out: (_mask(g, c), None),
    formula="{out} = 0 if {b} else {a}", local_text=("0 if {b} else 1", "0"),
    doc="A masked slope: exactly 0 where the indicator is 1 (even for an inf or nan x), else x.",
    array_forward=lambda x, c: _np().where(c != 0.0, 0.0, x),
    array_pullback=lambda g, x, c, out: (_np().where(c != 0.0, 0.0, g), None),
)
AT_MOST_ZERO: Op = Op(
    name="at_most_zero", symbol="<=0", arity=1, forward=lambda a: 1.0 if a <= 0.0 else 0.0,
    pullback=lambda g, a, out: (None,), formula="{out} = 1 if {a} <= 0 else 0", local_text=("0",),
    doc="Where relu's slope is masked (nan is not <= 0: relu passes it).",
    constant=True, array_forward=lambda a: (a <= 0.0).astype(float),
)
IS_ZERO = Op(
    name="is_zero", symbol="==0", arity=1, forward=lambda a: 1.0 if a == 0.0 else 0.0,
    pullback=lambda g, a, out: (None,), formula="{out} = 1 if {a} == 0 else 0", local_text=("0",),
    doc="Where a power's slope in its base is masked (a zero exponent).",
    constant=True, array_forward=lambda a: (a == 0.0).astype(float),
)
ZERO_BASE = Op(
    name="zero_base", symbol="0**", arity=2,
    forward=lambda a, out: 1.0 if a == 0.0 and out - out == 0.0 else 0.0,
    pullback=lambda g, a, out, indicator: (None, None),
    formula="{out} = 1 if {a} == 0 and {b} is finite else 0", local_text=("0", "0"),
    doc="Where a power's slope in its exponent is 0: a zero base with an exponent >= 0 (its result finite).",
    constant=True, array_forward=lambda a, out: ((a == 0.0) & _np().isfinite(out)).astype(float),
)
SIGN: Op = Op(
    name="sign", symbol="sign", arity=1, forward=sign, pullback=lambda g, a, out: (None,),
    formula="{out} = sign({a})", local_text=("0",), doc="The slope of abs: 1, -1, or 0 at 0 and nan.",
    constant=True, array_forward=lambda a: _sign_array(a),
)

IDENTITY = Op(
    name="identity", symbol="id", arity=1, forward=lambda a: a, pullback=lambda g, a, out: (g,),
    formula="{out} = {a}", local_text=("1",),
    doc="A new node with its input's value: a transform's own copy of an input given as a Value, so that "
        "a derivative with respect to it is not one with respect to the caller's Value (no perturbation "
        "confusion when transforms nest).",
)

# --- the selects and functions users reach for (issue 45): each one Op, as those above ---------------------

SQRT = Op(
    name="sqrt", symbol="sqrt", arity=1, forward=safe_sqrt,
    pullback=lambda g, a, out: (div(g, 2.0 * out),),  # PyTorch's formula: grad / (2 * result)
    formula="{out} = sqrt({a})", local_text=("1 / (2 {out})",),
    doc="Square root: d sqrt(a)/da = 1 / (2 sqrt(a)).",
    function="sqrt", torch="sqrt", nonnegative=True, array_forward=lambda a: _np().sqrt(a),
)
LOG1P = Op(
    name="log1p", symbol="log1p", arity=1, forward=safe_log1p,
    pullback=lambda g, a, out: (div(g, a + 1.0),),  # PyTorch's formula: grad / (self + 1)
    formula="{out} = log(1 + {a})", local_text=("1 / (1 + {a})",),
    doc="log(1 + a), exact for small a: d/da = 1 / (1 + a).",
    function="log1p", torch="log1p", array_forward=lambda a: _np().log1p(a),
)
SOFTPLUS_SLOPE = Op(
    name="softplus_slope", symbol="sigma", arity=1, forward=softplus_slope,
    # As PyTorch's softplus_double_backward: sigmoid's slope at a, times an indicator (so nan stays nan) that
    # is 0 from the threshold on.
    pullback=lambda g, a, out: (g * (1.0 - apply(SIGMOID, a)) * apply(SIGMOID, a) * apply(GREATER, 20.0, a),),
    formula="{out} = e^{a} / (e^{a} + 1)", local_text=("{out} (1 - {out})",),
    doc="softplus's slope, made by its pullback on Values so that second derivatives see PyTorch's threshold.",
    array_forward=softplus_slope_array,
)
SOFTPLUS = Op(
    name="softplus", symbol="softplus", arity=1, forward=softplus,
    pullback=lambda g, a, out: ((g if a > 20.0 else g * safe_exp(a) / (safe_exp(a) + 1.0),) if _is_float(a)
                                else (g * apply(SOFTPLUS_SLOPE, a),)),
    formula="{out} = log(1 + exp({a}))", local_text=("exp({a}) / (1 + exp({a}))",),
    doc="Softplus, log(1 + e^a), a itself above 20 (PyTorch's threshold): d/da = e^a / (1 + e^a).",
    function="softplus", torch="nn.functional.softplus", nonnegative=True, array_forward=softplus_array,
    array_pullback=lambda g, a, out: (g * softplus_slope_array(a),),
)
ERF = Op(
    name="erf", symbol="erf", arity=1, forward=math.erf,
    pullback=lambda g, a, out: (1.1283791670955126 * apply(EXP, -(a * a)) * g,),  # PyTorch's 2/sqrt(pi) e^(-a^2) grad
    formula="{out} = erf({a})", local_text=("2 / sqrt(pi) exp(-{a}^2)",),
    doc="Error function: d erf(a)/da = 2 / sqrt(pi) e^(-a^2).",
    function="erf", torch="erf", array_forward=erf_array,
)
ATAN = Op(
    name="atan", symbol="atan", arity=1, forward=math.atan,
    pullback=lambda g, a, out: (div(g, a * a + 1.0),),  # PyTorch's formula: grad / (self * self + 1)
    formula="{out} = atan({a})", local_text=("1 / (1 + {a}^2)",),
    doc="Arctangent: d atan(a)/da = 1 / (1 + a^2).",
    function="atan", torch="atan", array_forward=lambda a: _np().arctan(a),
)
GREATER: Op = Op(
    name="greater", symbol=">", arity=2, forward=lambda a, b: 1.0 if a > b else 0.0,
    pullback=lambda g, a, b, out: (None, None), formula="{out} = 1 if {a} > {b} else 0", local_text=("0", "0"),
    doc="1 where a > b, else 0 (nan compares false): a condition for `where`, with no derivative.",
    function="greater", torch="gt", constant=True, array_forward=lambda a, b: (a > b).astype(float),
)
EQUAL = Op(
    name="equal", symbol="==", arity=2, forward=lambda a, b: 1.0 if a == b else 0.0,
    pullback=lambda g, a, b, out: (None, None), formula="{out} = 1 if {a} == {b} else 0", local_text=("0", "0"),
    doc="Where maximum and minimum split the gradient between tied inputs.",
    constant=True, array_forward=lambda a, b: (a == b).astype(float),
)


def _select_pullback(g: Any, a: Any, b: Any, largest: bool) -> tuple[Any, ...]:
    # As PyTorch's maximum and minimum: the chosen input gets g, tied inputs g / 2 each, the other exactly 0.
    if _is_float(a) and _is_float(b):
        if a == b:
            return g * 0.5, g * 0.5
        a_loses, b_loses = (a < b, a > b) if largest else (a > b, a < b)
        return (None if a_loses else g), (None if b_loses else g)
    share = g * (1.0 - 0.5 * apply(EQUAL, a, b))  # exactly g, or g / 2 at a tie
    def beats(x: Any, y: Any) -> Any:
        return apply(GREATER, y, x) if largest else apply(GREATER, x, y)

    return apply(MASK, share, beats(a, b)), apply(MASK, share, beats(b, a))


MAXIMUM = Op(
    name="maximum", symbol="max", arity=2, forward=maximum,
    pullback=lambda g, a, b, out: _select_pullback(g, a, b, largest=True),
    formula="{out} = max({a}, {b})", local_text=("1 if {a} > {b} else 0", "1 if {b} > {a} else 0"),
    doc="The larger of two, as torch.maximum: the gradient goes to the larger (half each at a tie).",
    function="maximum", torch="maximum", array_forward=lambda a, b: _np().maximum(a, b),
    array_pullback=maximum_array_pullback,
)
MINIMUM = Op(
    name="minimum", symbol="min", arity=2, forward=minimum,
    pullback=lambda g, a, b, out: _select_pullback(g, a, b, largest=False),
    formula="{out} = min({a}, {b})", local_text=("1 if {a} < {b} else 0", "1 if {b} < {a} else 0"),
    doc="The smaller of two, as torch.minimum: the gradient goes to the smaller (half each at a tie).",
    function="minimum", torch="minimum", array_forward=lambda a, b: _np().minimum(a, b),
    array_pullback=minimum_array_pullback,
)
STOP_GRADIENT = Op(
    name="stop_gradient", symbol="sg", arity=1, forward=lambda a: a, pullback=lambda g, a, out: (None,),
    formula="{out} = {a}", local_text=("0",),
    doc="Its input's value, with no derivative at all (`x.detach()`, `stop_gradient(x)`).",
    constant=True,
)

_clamp_ops: dict[tuple[float, float], Op] = {}


def clamp_op(low: float | None, high: float | None) -> Op:
    """The op `a.clamp(low, high)` for constant bounds (None: unbounded), one shared Op per pair, as
    torch.clamp: the gradient passes where low <= a <= high (a bound included) and is exactly 0 outside."""
    lo, hi = -INF if low is None else float(low), INF if high is None else float(high)
    op = _clamp_ops.get((lo, hi))
    if op is not None:
        return op
    outside = Op(
        name="outside", symbol="out", arity=1, forward=lambda a: 0.0 if lo <= a <= hi else 1.0,
        pullback=lambda g, a, out: (None,), formula=f"{{out}} = 0 if {lo:g} <= {{a}} <= {hi:g} else 1",
        local_text=("0",), doc="Where clamp's slope is masked.", constant=True,
        array_forward=lambda a: 1.0 - ((a >= lo) & (a <= hi)),
    )

    def pullback(g: Any, a: Any, out: Any) -> tuple[Any, ...]:
        if _is_float(a):
            return (g if lo <= a <= hi else None,)
        return (apply(MASK, g, apply(outside, a)),)

    op = Op(
        name=f"clamp[{lo:g},{hi:g}]", symbol="clamp", arity=1, forward=lambda a: clamp(a, lo, hi),
        pullback=pullback, formula=f"{{out}} = clamp({{a}}, {lo:g}, {hi:g})",
        local_text=(f"1 if {lo:g} <= {{a}} <= {hi:g} else 0",),
        doc=f"Clamp to [{lo:g}, {hi:g}]: slope 1 inside, 0 outside.",
        array_forward=lambda a: _np().minimum(_np().maximum(a, lo), hi),
        array_pullback=lambda g, a, out: (_masked((a >= lo) & (a <= hi), g),),
    )
    if len(_clamp_ops) < 1024:
        _clamp_ops[(lo, hi)] = op
    return op


#: Every op with a fixed definition, by name (constant powers are made by `power_op`). The one list:
#: `Value`'s methods, the expression language's functions, the lessons' graph nodes, the graph command's
#: PyTorch check and compiled replay all read it, so a new op is one `Op` here (or one `register` call).
OPS: dict[str, Op] = {
    op.name: op
    for op in (ADD, SUB, MUL, DIV, NEG, POW, TANH, EXP, LOG, RELU, SIGMOID, ABS, SIN, COS, LOGADDEXP,
               SQRT, LOG1P, SOFTPLUS, ERF, ATAN, MAXIMUM, MINIMUM, GREATER)
}

_op_watchers: list[Callable[[Op, bool], None]] = []


def watch_ops(watcher: Callable[[Op, bool], None]) -> None:
    """Call watcher(op, added) for every op in OPS now and whenever one is registered or removed (the
    engine checks a registered op's function name this way)."""
    _op_watchers.append(watcher)
    for op in OPS.values():
        watcher(op, True)


def register(op: Op) -> Op:
    """Add an op to the table at run time: from then on it is an expression function, a lesson graph node
    and replayable, like the built-in ones, and `apply(op, x)` makes its node (the table's own ops also have
    a `Value` method each, written in the class). Returns the op."""
    if not isinstance(op, Op):
        raise TypeError(f"register() takes an Op, not {type(op).__name__}")
    if op.name in OPS:
        raise ValueError(f"an op named {op.name!r} is already in the table")
    if op.function is not None and any(o.function == op.function for o in OPS.values()):
        raise ValueError(f"an op is already called {op.function!r}")
    if len(op.local_text) != op.arity:
        raise ValueError(f"op {op.name!r} takes {op.arity} inputs but has {len(op.local_text)} local_text entries")
    OPS[op.name] = op
    try:
        for watcher in _op_watchers:
            watcher(op, True)
    except Exception:
        unregister(op)
        raise
    return op


def unregister(op: Op) -> None:
    """Take an op added with `register` out of the table again."""
    if OPS.get(op.name) is not op:
        raise ValueError(f"op {op.name!r} is not in the table")
    del OPS[op.name]
    for watcher in _op_watchers:
        watcher(op, False)


def functions(arity: int | None = None) -> dict[str, Op]:
    """The ops called by name (``x.sin()``, ``sin(x)``), by that name; only those of `arity` if given."""
    return {op.function: op for op in OPS.values()
            if op.function is not None and (arity is None or op.arity == arity)}


def array_pullback_of(op: Op) -> Callable[..., tuple[Any, ...]]:
    """The op's pullback on arrays: its array form, or else its float rule, which is then written with
    operators and `apply` only and works on arrays unchanged."""
    return op.array_pullback if op.array_pullback is not None else op.pullback
