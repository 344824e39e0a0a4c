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


def safe_sin(x: float) -> float:
    return math.sin(x) if x - x == 0.0 else NAN  # sin(+-inf) is nan, as in PyTorch (math.sin raises)


def safe_cos(x: float) -> float:
    return math.cos(x) if x - x == 0.0 else NAN


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


class _CheckedKernel:
    """A NumPy kernel that gives the float rule's class (nan, +-inf, 0, +-1, subnormal, normal) everywhere.

    NumPy picks a kernel for the CPU's vector unit, and near an edge of its range it may round to another
    class than the C library, which the eager engine uses: NumPy 2.4's AVX-512 tanh returns exactly +-1.0
    from |x| = 18.99, the C library (and PyTorch) from 19.06, so log(1 - tanh(x)) was -inf compiled and
    -36.74 eager. Each kernel lists the `bands` of inputs where a result can change class; on first use
    every band is probed (a grid of points, NumPy against the float rule), and in a band where they
    disagree on this machine the inputs that fall in it are computed with the float rule, one by one.
    Elsewhere NumPy's kernel is used as it is: away from the edges its result is a normal number, as the
    C library's, within a few units in the last place (tests/test_compile_kernels.py sweeps the bands)."""

    def __init__(self, name: str, numpy_rule: Callable[[Any], Any], float_rule: Callable[[float], float],
                 bands: tuple[tuple[float, float], ...]) -> None:
        self.name = name
        self.numpy_rule = numpy_rule
        self.float_rule = float_rule
        self.bands = bands
        self._checked: tuple[tuple[float, float], ...] | None = None  # the bands to compute by the float rule

    def disagreements(self, points: Any) -> list[float]:
        """The points where NumPy's kernel and the float rule give results of different classes."""
        np = _np()
        with np.errstate(all="ignore"):
            got = self.numpy_rule(np.asarray(points, dtype=np.float64)).tolist()
        return [x for x, y in zip(np.asarray(points).tolist(), got) if value_class(y) != value_class(self.float_rule(x))]

    def bands_to_check(self) -> tuple[tuple[float, float], ...]:
        if self._checked is None:
            np = _np()
            self._checked = tuple(band for band in self.bands if self.disagreements(probe_points(*band)))
        return self._checked

    def __call__(self, a: Any) -> Any:
        out = self.numpy_rule(a)
        bands = self._checked if self._checked is not None else self.bands_to_check()
        if not bands:
            return out
        np = _np()
        if out.__class__ is not np.ndarray or not out.ndim:
            return self.float_rule(float(a))
        if not a.size:
            return out
        high, low = a.max(), a.min()  # nan if any input is nan: then look
        for start, stop in bands:
            if not (high < start or low > stop):
                break
        else:
            return out  # the common case: no input in a band, two reductions
        inside = np.zeros(a.shape, dtype=bool)
        for start, stop in bands:
            inside |= (a >= start) & (a <= stop)
        if inside.any():
            out[inside] = [self.float_rule(x) for x in a[inside].tolist()]
        return out


def probe_points(start: float, stop: float, count: int = 4001) -> Any:
    """A grid over [start, stop] with the neighbours of 1 and -1 where the band holds them."""
    np = _np()
    grid = np.linspace(start, stop, count)
    ones = [x for one in (1.0, -1.0) for x in (np.nextafter(one, -INF), one, np.nextafter(one, INF))
            if start <= x <= stop]
    return np.concatenate([grid, np.asarray(ones, dtype=np.float64)])


def value_class(x: float) -> str:
    """The class of a result, as the compiled replay keeps it equal to eager's: nan, +inf, -inf, zero,
    +1 or -1 exactly (tanh's and sigmoid's saturation), subnormal or normal."""
    if x != x:
        return "nan"
    if x == 0.0:
        return "zero"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if x == 1.0 or x == -1.0:
        return "+1" if x > 0 else "-1"
    return "subnormal" if abs(x) < 2.2250738585072014e-308 else "normal"


# Where NumPy's kernel may round to another class than the C library's: tanh's saturation at +-19.06, exp's
# overflow at 709.78 and its subnormal results below -708.4, log of subnormals and next to 1 (log 1 = 0),
# sigmoid's 0 below -709.78 (e^-x overflows), its subnormals and its 1 above 36.7.
_exp_array = _CheckedKernel("exp", lambda a: _np().exp(a), safe_exp,
                            ((709.0, 710.0), (-746.0, -708.0)))
_log_array = _CheckedKernel("log", lambda a: _np().log(a), safe_log,
                            ((0.0, 2.3e-308), (1.0 - 2.0 ** -40, 1.0 + 2.0 ** -40)))
_tanh_array = _CheckedKernel("tanh", lambda a: _np().tanh(a), math.tanh,
                             ((18.0, 20.0), (-20.0, -18.0)))
# `stable_sigmoid`'s formula, 1 / (1 + e^-a): where e^-a overflows it gives exactly 0, as the float rule
# and PyTorch do (e / (1 + e) with e = e^-|a| would give a subnormal for a in (-745.2, -709.78]).
_sigmoid_array = _CheckedKernel("sigmoid", lambda a: 1.0 / (1.0 + _np().exp(-a)), stable_sigmoid,
                                ((-746.0, -700.0), (30.0, 40.0)))


def _logaddexp_array(a: Any, b: Any) -> Any:
    np = _np()
    out = np.maximum(a, b) + np.log1p(_exp_array(-np.abs(a - b)))  # np.maximum passes a nan on
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
    pullback: Callable[..., tuple]  # (g, *inputs, out) -> what each input receives; None = masked
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
    array_pullback: Callable[..., tuple] | None = None  # None: see array_pullback_of

    def local(self, *inputs_and_out: Any) -> tuple:
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
)
SUB = Op(
    name="sub", symbol="-", arity=2, forward=lambda a, b: a - b,
    pullback=lambda g, a, b, out: (g, -g),
    formula="{out} = {a} - {b}", local_text=("1", "-1"),
    doc="Subtraction: d(a-b)/da = 1, d(a-b)/db = -1.",
)
MUL = Op(
    name="mul", symbol="*", arity=2, forward=lambda a, b: a * b,
    pullback=lambda g, a, b, out: (g * b, g * a),
    formula="{out} = {a} * {b}", local_text=("{b}", "{a}"),
    doc="Multiplication swaps the factors: d(ab)/da = b, d(ab)/db = a.",
)
DIV = Op(
    name="div", symbol="/", arity=2, forward=safe_div,
    pullback=lambda g, a, b, out: (div(g, b), -g * div(out, b)),  # as PyTorch: -g * ((a/b)/b)
    formula="{out} = {a} / {b}", local_text=("1 / {b}", "-{out} / {b}"),
    doc="Division: d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -(a/b)/b.",
)
NEG = Op(
    name="neg", symbol="-", arity=1, forward=lambda a: -a,
    pullback=lambda g, a, out: (-g,),
    formula="{out} = -{a}", local_text=("-1",),
    doc="Negation: d(-a)/da = -1.",
)


def _pow_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple:
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
            name=f"pow{text}", symbol=f"**{text}", arity=1, forward=lambda a, k=k: safe_pow(a, k),
            pullback=pullback, formula="{out} = {a} ** " + text, local_text=(f"{text} * {{a}} ** {k - 1.0:g}",),
            doc=f"Constant power: d(a^{text})/da = {text} a^({k - 1.0:g}).", exponent=k,
            array_forward=lambda a, k=k: _power_array(a, k), array_pullback=array_pullback,
        )
        if len(_power_ops) < 1024:  # bounded: exponents are few in practice
            _power_ops[k] = op
    return op


EXP = Op(
    name="exp", symbol="exp", arity=1, forward=safe_exp,
    pullback=lambda g, a, out: (g * out,),
    formula="{out} = exp({a})", local_text=("{out}",),
    doc="Exponential is its own derivative: d(e^a)/da = e^a.",
    function="exp", torch="exp", nonnegative=True, array_forward=lambda a: _exp_array(a),
)
LOG = Op(
    name="log", symbol="log", arity=1, forward=safe_log,
    pullback=lambda g, a, out: (div(g, a),),
    formula="{out} = log({a})", local_text=("1 / {a}",),
    doc="Natural logarithm: d(log a)/da = 1/a.",
    function="log", torch="log", array_forward=lambda a: _log_array(a),
)
TANH = Op(
    name="tanh", symbol="tanh", arity=1, forward=math.tanh,
    pullback=lambda g, a, out: (g * (1.0 - out * out),),
    formula="{out} = tanh({a})", local_text=("1 - {out}^2",),
    doc="Hyperbolic tangent: d tanh(a)/da = 1 - tanh(a)^2.",
    function="tanh", torch="tanh", array_forward=lambda a: _tanh_array(a),
)
SIGMOID = Op(
    name="sigmoid", symbol="sigmoid", arity=1, forward=stable_sigmoid,
    pullback=lambda g, a, out: (g * (1.0 - out) * out,),  # PyTorch's order of the products
    formula="{out} = sigmoid({a})", local_text=("{out} * (1 - {out})",),
    doc="Logistic sigmoid: d s(a)/da = s(a) (1 - s(a)).",
    function="sigmoid", torch="sigmoid", nonnegative=True, array_forward=_sigmoid_array,
)
RELU = Op(
    name="relu", symbol="relu", arity=1, forward=relu,
    # Masked as PyTorch (a nan input passes); on Values the mask is a node (see MASK).
    pullback=lambda g, a, out: ((None if a <= 0.0 else g,) if a.__class__ is float
                                else (apply(MASK, g, apply(AT_MOST_ZERO, a)),)),
    formula="{out} = relu({a})", local_text=("1 if {a} > 0 else 0",),
    doc="Rectifier: slope 1 where a > 0, else 0 (0 at a = 0, as in PyTorch).",
    function="relu", torch="relu", nonnegative=True,
    # On arrays the mask reads the output: relu(a) != 0 exactly where a > 0 or a is nan (one pass).
    array_forward=_relu_array, array_pullback=lambda g, a, out: (_masked(out != 0.0, g),),
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
SIN = Op(
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


def _softmax_weight_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple:
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


def _logaddexp_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple:
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


MASK = Op(
    name="mask", symbol="mask", arity=2, forward=lambda x, c: 0.0 if c != 0.0 else x,
    pullback=lambda g, x, c, out: (_mask(g, c), None),
    formula="{out} = 0 if {b} else {a}", local_text=("0 if {b} else 1", "0"),
    doc="A masked slope: exactly 0 where the indicator is 1 (even for an inf or nan x), else x.",
    array_forward=lambda x, c: _np().where(c != 0.0, 0.0, x),
    array_pullback=lambda g, x, c, out: (_np().where(c != 0.0, 0.0, g), None),
)
AT_MOST_ZERO = Op(
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
SIGN = Op(
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

#: Every op with a fixed definition, by name (constant powers are made by `power_op`). The one list:
#: `Value`'s methods, the expression language's functions, the lessons' graph nodes, the graph command's
#: PyTorch check and compiled replay all read it, so a new op is one `Op` here (or one `register` call).
OPS: dict[str, Op] = {
    op.name: op
    for op in (ADD, SUB, MUL, DIV, NEG, POW, TANH, EXP, LOG, RELU, SIGMOID, ABS, SIN, COS, LOGADDEXP)
}

_op_watchers: list[Callable[[Op, bool], None]] = []


def watch_ops(watcher: Callable[[Op, bool], None]) -> None:
    """Call watcher(op, added) for every op in OPS now and whenever one is registered or removed (the
    engine makes and removes `Value`'s methods this way)."""
    _op_watchers.append(watcher)
    for op in OPS.values():
        watcher(op, True)


def register(op: Op) -> Op:
    """Add an op to the table at run time: from then on it is a Value method, an expression function,
    a lesson graph node and replayable, like the built-in ones. Returns the op."""
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


def array_pullback_of(op: Op) -> Callable[..., tuple]:
    """The op's pullback on arrays: its array form, or else its float rule, which is then written with
    operators and `apply` only and works on arrays unchanged."""
    return op.array_pullback if op.array_pullback is not None else op.pullback
