"""The one table of operations: each op's forward rule and its local derivatives, side by side.

Everything else reads this table: `Value` computes forward values with `Op.forward`, the backward pass
(`engine.reverse_sweep`) hands each input what `Op.pullback` gives for the upstream gradient, forward mode
(`forward.py`) reads the same pullback with an input's tangent in place of the gradient, and the step
captions and docs show `Op.formula`, `Op.local` and `Op.local_text`. Change a rule here and it changes
everywhere; a new op is one `Op(...)` entry below (and a `Value` method that makes it).

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
from dataclasses import dataclass, field
from typing import Any, Callable

INF = math.inf
NAN = math.nan


# --- float semantics that never raise --------------------------------------------------------------


def safe_exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def safe_log(x: float) -> float:
    if x > 0.0:
        return math.log(x)
    if x == 0.0:
        return -INF
    return NAN  # negative or nan


def safe_div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0.0 or a != a:
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)


def _is_odd_integer(x: float) -> bool:
    return math.isfinite(x) and x == int(x) and int(x) % 2 == 1


def safe_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return -INF if (a < 0.0 and _is_odd_integer(b)) else INF
    except ValueError:
        if a == 0.0:  # zero to a negative power: a pole
            return math.copysign(INF, a) if _is_odd_integer(b) else INF
        return NAN  # negative base, fractional exponent


def stable_sigmoid(x: float) -> float:
    # PyTorch's formula, 1 / (1 + e^-x), so the bits agree with it. Where e^-x overflows the result is
    # 1 / (1 + inf) = 0, so it never raises; the try costs nothing on the common path.
    try:
        return 1.0 / (1.0 + math.exp(-x))
    except OverflowError:
        return 0.0


def relu(x: float) -> float:
    return 0.0 if x < 0.0 else x  # nan stays nan and -0.0 stays -0.0, as in PyTorch


def sign(x: float) -> float:
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return 0.0  # 0 and nan, as torch.sgn


# --- helpers that work on floats and on Values alike (for local derivatives) ----------------------


def chain(local: Any, upstream: Any) -> Any:
    """One step of the chain rule: local derivative x upstream gradient. A masked slope (None)
    passes exactly 0.0, even when the upstream gradient is inf or nan."""
    return 0.0 if local is None else local * upstream


def _is_float(x: Any) -> bool:
    return x.__class__ is float or x.__class__ is int


def data_of(x: Any) -> float:
    """The float behind x, whether x is a float or a Value."""
    return x if _is_float(x) else x.data


def div(a: Any, b: Any) -> Any:
    return safe_div(a, b) if _is_float(a) and _is_float(b) else a / b


def power(a: Any, k: Any) -> Any:
    return safe_pow(a, k) if _is_float(a) and _is_float(k) else a**k


def log(a: Any) -> Any:
    return safe_log(a) if _is_float(a) else a.log()


def exp(a: Any) -> Any:
    return safe_exp(a) if _is_float(a) else a.exp()


def logaddexp(a: float, b: float) -> float:
    """log(e^a + e^b) without overflow, as PyTorch: max(a, b) + log1p(e^-|a - b|), and a itself when a
    and b are the same infinity (where a - b would be nan)."""
    if a == b and math.isinf(a):
        return a
    return (a if a > b else b) + math.log1p(math.exp(-abs(a - b)))


# --- array forms (NumPy, for chainrule.compile): the same rules on float64 arrays --------------------

_numpy: Any = None


def _np() -> Any:
    """NumPy, imported on first use: `import chainrule` must work without it."""
    global _numpy
    if _numpy is None:
        import numpy

        _numpy = numpy
    return _numpy


def _matmul(a: Any, b: Any, out: Any = None) -> Any:
    # With an inner dimension of 1 the product is an outer product, which BLAS computes several times
    # slower than NumPy's broadcasting multiply (the same single rounding per element).
    np = _np()
    if a.shape[1] == 1:
        return np.multiply(a, b, out=out)
    return np.matmul(a, b, out=out)


def array_sum_of_products(weights: Any, inputs: Any, out: Any = None) -> Any:
    """Many sums of products at once, out[j] = sum_k weights[j, k] * inputs[k]: MUL then ADD, fused
    into one matrix product (weights (J, K), inputs (K, N), one column per example)."""
    return _matmul(weights, inputs, out)


def array_sum_of_products_pullback(
    g: Any, weights: Any, inputs: Any, inputs_grad_out: Any = None, inputs_need_grad: bool = True
) -> tuple:
    """Its backward pass, from MUL's local derivatives (d(wx)/dw = x, d(wx)/dx = w) and ADD's (1):
    the gradients of the weights, summed over the examples, and of the inputs (written into
    `inputs_grad_out` when given, and then None in their place; None when not needed)."""
    weights_grad = _matmul(g, inputs.T)
    if not inputs_need_grad:
        return weights_grad, None
    inputs_grad = _matmul(weights.T, g, inputs_grad_out)
    return weights_grad, None if inputs_grad_out is not None else inputs_grad


def _power_array(a: Any, k: float) -> Any:
    # The exponent as a full array: for a scalar one NumPy takes shortcuts (sqrt for 0.5) that differ
    # from pow at the edges (sqrt(-inf) is nan, pow(-inf, 0.5) is inf). Powers 1 and 2 are a and a * a,
    # as PyTorch computes them and much faster than pow; a * a is correctly rounded, where libm's pow
    # (the float rule) is one unit in the last place off for some squares (7 in 10,000 random ones).
    if k == 1.0:
        return a
    if k == 2.0:
        return a * a
    np = _np()
    return np.power(a, np.full(np.shape(a), k))


def _relu_array(a: Any, out: Any = None) -> Any:
    # max(0, a) with 0 first: NumPy then returns a itself where a is -0.0 or nan, as `relu` does.
    return _np().maximum(0.0, a, out=out)


_relu_array.takes_out = True  # type: ignore[attr-defined]  # compile's replay may pass its store


def _sign_array(a: Any) -> Any:
    np = _np()
    return np.greater(a, 0.0) - np.less(a, 0.0).astype(float)  # 0 at 0 and nan, as `sign`


def _sigmoid_array(a: Any) -> Any:
    # `stable_sigmoid`'s formula, 1 / (1 + e^-a): where e^-a overflows it gives exactly 0, as the float
    # rule and PyTorch do (e / (1 + e) with e = e^-|a| would give a subnormal for a in (-745.2, -709.78]).
    np = _np()
    return 1.0 / (1.0 + np.exp(-a))


def _logaddexp_array(a: Any, b: Any) -> Any:
    np = _np()
    out = np.maximum(a, b) + np.log1p(np.exp(-np.abs(a - b)))  # np.maximum passes a nan on
    same_infinity = (a == b) & np.isinf(a)
    return np.where(same_infinity, a, out) if same_infinity.any() else out


def _masked(keep: Any, contribution: Any) -> Any:
    """Exactly 0 where the slope is masked, even where the contribution is inf or nan (as `chain`).
    contribution x keep is that whenever the contribution is finite, and much faster than
    numpy.where on a random mask; a sum that is not finite says when where() is needed."""
    np = _np()
    passed = contribution * keep
    if np.isfinite(passed.sum()):
        return passed
    return np.where(keep, contribution, 0.0)


def _pow_array_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple:
    # `_pow_pullback`, element by element: a zero exponent masks the base's slope; a zero base with a
    # non-negative exponent has slope 0 in the exponent, multiplied by g (not masked), as PyTorch does.
    np = _np()
    da = _masked(b != 0.0, g * (b * np.power(a, b - 1.0)))
    db = g * np.where((a == 0.0) & (b >= 0.0), 0.0, out * np.log(a))
    return da, db


# --- the table ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Op:
    """One operation: how to compute it and how it passes gradients back.

    ``formula`` and ``local_text`` use the names {out}, {a} and {b}; the trace fills in real labels.
    """

    name: str
    symbol: str
    arity: int
    forward: Callable[..., float]
    pullback: Callable[..., tuple]  # (g, *inputs, out) -> what each input receives; None = masked
    formula: str
    local_text: tuple[str, ...]
    doc: str = ""
    constant: float | None = field(default=None)  # the fixed exponent of a constant power
    array_forward: Callable[..., Any] | None = field(default=None)  # None: `forward` works on arrays
    array_pullback: Callable[..., tuple] | None = field(default=None)  # None: see array_pullback_of

    def local(self, *inputs_and_out: Any) -> tuple:
        """d out / d input for each input (None where masked): the pullback of a gradient of 1."""
        return self.pullback(1.0, *inputs_and_out)


ADD = Op(
    "add", "+", 2, lambda a, b: a + b,
    lambda g, a, b, out: (g, g),
    "{out} = {a} + {b}", ("1", "1"),
    "Addition copies the gradient to both inputs: d(a+b)/da = d(a+b)/db = 1.",
)
SUB = Op(
    "sub", "-", 2, lambda a, b: a - b,
    lambda g, a, b, out: (g, -g),
    "{out} = {a} - {b}", ("1", "-1"),
    "Subtraction: d(a-b)/da = 1, d(a-b)/db = -1.",
)
MUL = Op(
    "mul", "*", 2, lambda a, b: a * b,
    lambda g, a, b, out: (g * b, g * a),
    "{out} = {a} * {b}", ("{b}", "{a}"),
    "Multiplication swaps the factors: d(ab)/da = b, d(ab)/db = a.",
)
DIV = Op(
    "div", "/", 2, safe_div,
    lambda g, a, b, out: (div(g, b), -g * div(out, b)),  # as PyTorch: -g * ((a/b)/b)
    "{out} = {a} / {b}", ("1 / {b}", "-{out} / {b}"),
    "Division: d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -(a/b)/b.",
)
NEG = Op(
    "neg", "-", 1, lambda a: -a,
    lambda g, a, out: (-g,),
    "{out} = -{a}", ("-1",),
    "Negation: d(-a)/da = -1.",
)


def _pow_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple:
    # As PyTorch: a zero exponent masks the slope in the base (a ** 0 is constant). A zero base with a
    # non-negative exponent has slope 0 in the exponent (instead of out * log 0 = nan), but PyTorch
    # multiplies that 0 by g rather than masking it, so an inf or nan g still gives nan; we do the same.
    da = None if data_of(b) == 0.0 else g * (b * power(a, b - 1.0))
    db = g * 0.0 if (data_of(a) == 0.0 and data_of(b) >= 0.0) else g * (out * log(a))
    return da, db


POW = Op(
    "pow", "**", 2, safe_pow, _pow_pullback,
    "{out} = {a} ** {b}", ("{b} * {a} ** ({b} - 1)", "{out} * log({a})"),
    "Power with a variable exponent: d(a^b)/da = b a^(b-1), d(a^b)/db = a^b log a.",
    array_forward=lambda a, b: _np().power(a, b), array_pullback=_pow_array_pullback,
)

_power_ops: dict[float, Op] = {}


def power_op(k: float) -> Op:
    """The op `a ** k` for a constant k (one shared Op per exponent)."""
    op = _power_ops.get(k)
    if op is None:
        def pullback(g: Any, a: Any, out: Any, k: float = k) -> tuple:
            return (None if k == 0.0 else g * (k * power(a, k - 1.0)),)  # a ** 0 is constant: masked

        def array_pullback(g: Any, a: Any, out: Any, k: float = k) -> tuple:
            return (None if k == 0.0 else (k * _power_array(a, k - 1.0)) * g,)

        text = f"{k:g}"
        op = Op(
            f"pow{text}", f"**{text}", 1, lambda a, k=k: safe_pow(a, k), pullback,
            "{out} = {a} ** " + text, (f"{text} * {{a}} ** {k - 1.0:g}",),
            f"Constant power: d(a^{text})/da = {text} a^({k - 1.0:g}).", k,
            lambda a, k=k: _power_array(a, k), array_pullback,
        )
        if len(_power_ops) < 1024:  # bounded: exponents are few in practice
            _power_ops[k] = op
    return op


EXP = Op(
    "exp", "exp", 1, safe_exp,
    lambda g, a, out: (g * out,),
    "{out} = exp({a})", ("{out}",),
    "Exponential is its own derivative: d(e^a)/da = e^a.",
    array_forward=lambda a: _np().exp(a),
)
LOG = Op(
    "log", "log", 1, safe_log,
    lambda g, a, out: (div(g, a),),
    "{out} = log({a})", ("1 / {a}",),
    "Natural logarithm: d(log a)/da = 1/a.",
    array_forward=lambda a: _np().log(a),
)
TANH = Op(
    "tanh", "tanh", 1, math.tanh,
    lambda g, a, out: (g * (1.0 - out * out),),
    "{out} = tanh({a})", ("1 - {out}^2",),
    "Hyperbolic tangent: d tanh(a)/da = 1 - tanh(a)^2.",
    array_forward=lambda a: _np().tanh(a),
)
SIGMOID = Op(
    "sigmoid", "sigmoid", 1, stable_sigmoid,
    lambda g, a, out: (g * (1.0 - out) * out,),  # PyTorch's order of the products
    "{out} = sigmoid({a})", ("{out} * (1 - {out})",),
    "Logistic sigmoid: d s(a)/da = s(a) (1 - s(a)).",
    array_forward=_sigmoid_array,
)
RELU = Op(
    "relu", "relu", 1, relu,
    lambda g, a, out: (None if data_of(a) <= 0.0 else g,),  # masked as PyTorch; a nan input passes
    "{out} = relu({a})", ("1 if {a} > 0 else 0",),
    "Rectifier: slope 1 where a > 0, else 0 (0 at a = 0, as in PyTorch).",
    # On arrays the mask reads the output: relu(a) != 0 exactly where a > 0 or a is nan (one pass).
    array_forward=_relu_array, array_pullback=lambda g, a, out: (_masked(out != 0.0, g),),
)
ABS = Op(
    "abs", "abs", 1, abs,
    lambda g, a, out: (g * sign(data_of(a)),),  # not masked: inf x 0 is nan, as in PyTorch
    "{out} = |{a}|", ("sign({a})",),
    "Absolute value: d|a|/da = sign(a) (0 at a = 0, as in PyTorch).",
    array_forward=lambda a: _np().abs(a), array_pullback=lambda g, a, out: (_sign_array(a) * g,),
)

LOGADDEXP = Op(
    "logaddexp", "logaddexp", 2, logaddexp,
    # The softmax weights as PyTorch forms them, g / (1 + e^(b - a)): exact where a weight is nearly 1 or
    # 0, so that second derivatives (the rule on Values) keep their small values; e^... = inf gives 0.
    lambda g, a, b, out: (div(g, 1.0 + exp(b - a)), div(g, 1.0 + exp(a - b))),
    "{out} = log(exp({a}) + exp({b}))", ("1 / (1 + exp({b} - {a}))", "1 / (1 + exp({a} - {b}))"),
    "Log-sum-exp of two: d/da log(e^a + e^b) = e^a / (e^a + e^b) = 1 / (1 + e^(b - a)). Folded over a list "
    "it is the log-sum-exp of the list (softmax cross-entropy), with no exponential that can overflow.",
    array_forward=_logaddexp_array,
    array_pullback=lambda g, a, b, out: (g / (1.0 + _np().exp(b - a)), g / (1.0 + _np().exp(a - b))),
)

#: Every op with a fixed definition, by name (constant powers are made by `power_op`).
OPS: dict[str, Op] = {
    op.name: op for op in (ADD, SUB, MUL, DIV, NEG, POW, EXP, LOG, TANH, SIGMOID, RELU, ABS, LOGADDEXP)
}


def array_pullback_of(op: Op) -> Callable[..., tuple]:
    """The op's pullback on arrays: its array form, or else its float rule, which is then written with
    operators only (add, sub, mul, div, neg, exp, log, tanh, sigmoid) and works on arrays unchanged."""
    return op.array_pullback if op.array_pullback is not None else op.pullback
