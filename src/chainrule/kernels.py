"""The number rules the op table (`ops.py`) is written with: float forms that never raise (IEEE/PyTorch float64
semantics), helpers that work on floats and on Values alike, and the NumPy array forms compiled replay runs.

Nothing here knows an op: `ops.py` puts these rules side by side, one `Op` per operation. NumPy is imported
only inside the array functions, so the engine runs without it.
"""

from __future__ import annotations

import math
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


def is_odd_integer(x: float) -> bool:
    return math.isfinite(x) and x == int(x) and int(x) % 2 == 1


def safe_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return -INF if (a < 0.0 and is_odd_integer(b)) else INF
    except ValueError:
        if a == 0.0:  # zero to a negative power: a pole
            return math.copysign(INF, a) if is_odd_integer(b) else INF
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


def is_float(x: Any) -> bool:
    return x.__class__ is float or x.__class__ is int


def data_of(x: Any) -> float:
    """The float behind x, whether x is a float or a Value."""
    return x if is_float(x) else x.data  # type: ignore[no-any-return]


def div(a: Any, b: Any) -> Any:
    return safe_div(a, b) if is_float(a) and is_float(b) else a / b


def power(a: Any, k: Any) -> Any:
    return safe_pow(a, k) if is_float(a) and is_float(k) else a**k


def log(a: Any) -> Any:
    return safe_log(a) if is_float(a) else a.log()


def exp(a: Any) -> Any:
    return safe_exp(a) if is_float(a) else a.exp()


def logaddexp(a: float, b: float) -> float:
    """log(e^a + e^b) without overflow, as PyTorch: max(a, b) + log1p(e^-|a - b|), and a itself when a
    and b are the same infinity (where a - b would be nan)."""
    if a == b and math.isinf(a):
        return a
    return (a if a > b else b) + math.log1p(math.exp(-abs(a - b)))


# --- array forms (NumPy, for chainrule.compile): the same rules on float64 arrays --------------------

_numpy: Any = None


def numpy_module() -> Any:
    """NumPy, imported on first use: `import chainrule` must work without it."""
    global _numpy
    if _numpy is None:
        import numpy

        _numpy = numpy
    return _numpy


def matmul(a: Any, b: Any, out: Any = None) -> Any:
    # With an inner dimension of 1 the product is an outer product, which BLAS computes several times
    # slower than NumPy's broadcasting multiply (the same single rounding per element).
    np = numpy_module()
    if a.shape[1] == 1:
        return np.multiply(a, b, out=out)
    return np.matmul(a, b, out=out)


def array_sum_of_products(weights: Any, inputs: Any, out: Any = None) -> Any:
    """Many sums of products at once, out[j] = sum_k weights[j, k] * inputs[k]: MUL then ADD, fused
    into one matrix product (weights (J, K), inputs (K, N), one column per example)."""
    return matmul(weights, inputs, out)


def array_sum_of_products_pullback(
    g: Any, weights: Any, inputs: Any, inputs_grad_out: Any = None, inputs_need_grad: bool = True
) -> tuple[Any, ...]:
    """Its backward pass, from MUL's local derivatives (d(wx)/dw = x, d(wx)/dx = w) and ADD's (1):
    the gradients of the weights, summed over the examples, and of the inputs (written into
    `inputs_grad_out` when given, and then None in their place; None when not needed)."""
    weights_grad = matmul(g, inputs.T)
    if not inputs_need_grad:
        return weights_grad, None
    inputs_grad = matmul(weights.T, g, inputs_grad_out)
    return weights_grad, None if inputs_grad_out is not None else inputs_grad


def array_sum_of_products_pullback_per_example(
    g: Any, weights: Any, inputs: Any, inputs_grad_out: Any = None, inputs_need_grad: bool = True
) -> tuple[Any, ...]:
    """The same pullback with the weights' gradient kept per example: row j * K + k holds
    g[j, n] * inputs[k, n] for every n (one outer product per example, made by broadcasting, where the
    matrix product above sums them); the inputs' gradient as above."""
    weights_grad = (g[:, None, :] * inputs[None, :, :]).reshape(-1, g.shape[1])
    if not inputs_need_grad:
        return weights_grad, None
    inputs_grad = matmul(weights.T, g, inputs_grad_out)
    return weights_grad, None if inputs_grad_out is not None else inputs_grad


def ufunc_form(name: str) -> Callable[..., Any]:
    """An operator's array form through NumPy's ufunc of that name (`a + b` is numpy.add(a, b)), which
    compile's replay may give its store as `out`: the result written there, with no new array and no copy."""

    def rule(*operands: Any, out: Any = None) -> Any:
        return getattr(numpy_module(), name)(*operands, out=out)

    rule.takes_out = True  # type: ignore[attr-defined]
    rule.__name__ = f"{name}_array"
    return rule


def power_array(a: Any, k: float, out: Any = None) -> Any:
    # The exponent as a full array: for a scalar one NumPy takes shortcuts (sqrt for 0.5) that differ
    # from pow at the edges (sqrt(-inf) is nan, pow(-inf, 0.5) is inf). Powers 1 and 2 are a and a * a,
    # as PyTorch computes them and much faster than pow; a * a is correctly rounded, where libm's pow
    # (the float rule) is one unit in the last place off for some squares (7 in 10,000 random ones).
    # Written into `out` when given.
    np = numpy_module()
    if k == 1.0:
        if out is None:
            return a
        np.copyto(out, a)
        return out
    if k == 2.0:
        return np.multiply(a, a, out=out)
    return np.power(a, np.full(np.shape(a), k), out=out)


def relu_array(a: Any, out: Any = None) -> Any:
    # max(0, a) with 0 first: NumPy then returns a itself where a is -0.0 or nan, as `relu` does. The 0s
    # as a row rather than the scalar 0.0: NumPy 2.4's maximum is about 3 times faster with two arrays
    # (0.016 against 0.044 ms on 64 x 1,000, one thread), the same numbers.
    np = numpy_module()
    return np.maximum(np.zeros(np.shape(a)[-1:]), a, out=out)


relu_array.takes_out = True  # type: ignore[attr-defined]  # compile's replay may pass its store


def sign_array(a: Any) -> Any:
    np = numpy_module()
    return np.greater(a, 0.0) - np.less(a, 0.0).astype(float)  # 0 at 0 and nan, as `sign`


class CheckedKernel:
    """A NumPy kernel that gives the float rule's class (nan, +-inf, 0, +-1, subnormal, normal) everywhere.

    NumPy picks a kernel for the CPU's vector unit, and near an edge of its range it may round to another
    class than the C library, which the eager engine uses: NumPy 2.4's AVX-512 tanh returns exactly +-1.0
    from |x| = 18.99, the C library (and PyTorch) from 19.06, so log(1 - tanh(x)) was -inf compiled and
    -36.74 eager. Each kernel lists the `bands` of inputs where a result can change class; on first use
    every band is probed (a grid of points, NumPy against the float rule), and in a band where they
    disagree on this machine the inputs that fall in it are computed with the float rule, one by one.
    Elsewhere NumPy's kernel is used as it is: away from the edges its result is a normal number, as the
    C library's, within a few units in the last place (tests/test_compile_kernels.py sweeps the bands)."""

    def __init__(self, name: str, numpy_rule: Callable[..., Any], float_rule: Callable[[float], float],
                 bands: tuple[tuple[float, float], ...]) -> None:
        self.name = name
        self.numpy_rule = numpy_rule
        self.float_rule = float_rule
        self.bands = bands
        self._checked: tuple[tuple[float, float], ...] | None = None  # the bands to compute by the float rule

    def disagreements(self, points: Any) -> list[float]:
        """The points where NumPy's kernel and the float rule give results of different classes."""
        np = numpy_module()
        with np.errstate(all="ignore"):
            got = self.numpy_rule(np.asarray(points, dtype=np.float64)).tolist()
        return [x for x, y in zip(np.asarray(points).tolist(), got) if value_class(y) != value_class(self.float_rule(x))]

    def bands_to_check(self) -> tuple[tuple[float, float], ...]:
        if self._checked is None:
            self._checked = tuple(band for band in self.bands if self.disagreements(probe_points(*band)))
        return self._checked

    takes_out = True  # compile's replay may pass its store: written there, one pass less than a copy

    def __call__(self, a: Any, out: Any = None) -> Any:
        """The kernel on an array (into `out` when given, an array the shape of a that does not overlap it)."""
        out = self.numpy_rule(a, out)
        bands = self._checked if self._checked is not None else self.bands_to_check()
        if not bands:
            return out
        np = numpy_module()
        if out.__class__ is not np.ndarray or not out.ndim:
            if out.__class__ is np.ndarray:  # a 0-d out given
                out[...] = self.float_rule(float(a))
                return out
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
    np = numpy_module()
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
exp_array = CheckedKernel("exp", lambda a, out=None: numpy_module().exp(a, out=out), safe_exp,
                            ((709.0, 710.0), (-746.0, -708.0)))
log_array = CheckedKernel("log", lambda a, out=None: numpy_module().log(a, out=out), safe_log,
                            ((0.0, 2.3e-308), (1.0 - 2.0 ** -40, 1.0 + 2.0 ** -40)))
tanh_array = CheckedKernel("tanh", lambda a, out=None: numpy_module().tanh(a, out=out), math.tanh,
                             ((18.0, 20.0), (-20.0, -18.0)))


def sigmoid_numpy(a: Any, out: Any = None) -> Any:
    """1 / (1 + e^-a), each step written into one array (`out` when given): the same four roundings as the
    expression, with no temporaries."""
    np = numpy_module()
    out = np.negative(a, out=np.empty(np.shape(a)) if out is None else out)
    np.exp(out, out=out)
    np.add(1.0, out, out=out)
    return np.divide(1.0, out, out=out)


# `stable_sigmoid`'s formula, 1 / (1 + e^-a): where e^-a overflows it gives exactly 0, as the float rule
# and PyTorch do (e / (1 + e) with e = e^-|a| would give a subnormal for a in (-745.2, -709.78]).
sigmoid_array = CheckedKernel("sigmoid", sigmoid_numpy, stable_sigmoid, ((-746.0, -700.0), (30.0, 40.0)))


def logaddexp_array(a: Any, b: Any) -> Any:
    np = numpy_module()
    out = np.maximum(a, b) + np.log1p(exp_array(-np.abs(a - b)))  # np.maximum passes a nan on
    same_infinity = (a == b) & np.isinf(a)
    return np.where(same_infinity, a, out) if same_infinity.any() else out


def masked(keep: Any, contribution: Any, out: Any = None) -> Any:
    """Exactly 0 where the slope is masked, even where the contribution is inf or nan (as `chain`).
    contribution x keep is that whenever the contribution is finite, and much faster than
    numpy.where on a random mask; a sum that is not finite says when where() is needed. Written into
    `out` when given (an array that does not overlap the contribution), and `out` returned."""
    np = numpy_module()
    passed = np.multiply(contribution, keep, out=out)
    if np.isfinite(passed.sum()):
        return passed
    if out is None:
        return np.where(keep, contribution, 0.0)
    np.copyto(out, np.where(keep, contribution, 0.0))
    return out


def relu_array_pullback(g: Any, a: Any, out: Any, into: Any = None) -> tuple[Any, ...]:
    """relu's pullback on arrays: g where relu passes it, exactly 0 where its slope is masked. The mask
    reads the output: relu(a) != 0 exactly where a > 0 or a is nan (one pass; PyTorch's slope at 0 is 0
    too). `into`, when given, is the input's whole gradient, written here rather than returned (one pass
    over the rows less than the store copying a new array in)."""
    return (masked(out != 0.0, g, into),)


relu_array_pullback.writes_into = True  # type: ignore[attr-defined]  # compile's replay may pass its store


# The pullbacks below compute what the float rule computes, product for product in its order, so their bits
# are the float rule's on arrays. Given `into` (the input's whole gradient, its rows' only writer, an array
# that overlaps neither g nor the operands), each step is written there: no temporaries, and no copy of a
# new array into the gradient store.


def tanh_array_pullback(g: Any, a: Any, out: Any, into: Any = None) -> tuple[Any, ...]:
    """tanh's pullback on arrays: g (1 - out^2), as TANH's float rule (three passes where PyTorch's
    tanh_backward makes one)."""
    if into is None:
        return (g * (1.0 - out * out),)
    np = numpy_module()
    np.multiply(out, out, out=into)
    np.subtract(1.0, into, out=into)
    return (np.multiply(g, into, out=into),)


def sigmoid_array_pullback(g: Any, a: Any, out: Any, into: Any = None) -> tuple[Any, ...]:
    """sigmoid's pullback on arrays: (g (1 - out)) out, as SIGMOID's float rule (PyTorch's order)."""
    if into is None:
        return (g * (1.0 - out) * out,)
    np = numpy_module()
    np.subtract(1.0, out, out=into)
    np.multiply(g, into, out=into)
    return (np.multiply(into, out, out=into),)


def log_array_pullback(g: Any, a: Any, out: Any, into: Any = None) -> tuple[Any, ...]:
    """log's pullback on arrays: g / a, as LOG's float rule."""
    return (numpy_module().divide(g, a, out=into),)


def power_array_pullback(g: Any, a: Any, k: float, into: Any = None) -> tuple[Any, ...]:
    """The pullback of a constant power a ** k on arrays: (k a^(k - 1)) g; masked (None) for k = 0, when
    `into` is set to 0."""
    if k == 0.0:
        if into is not None:
            into.fill(0.0)
        return (None,)
    if into is None:
        return ((k * power_array(a, k - 1.0)) * g,)
    np = numpy_module()
    np.multiply(k, power_array(a, k - 1.0), out=into)
    return (np.multiply(into, g, out=into),)


def negate_array_pullback(g: Any, a: Any, out: Any, into: Any = None) -> tuple[Any, ...]:
    """Negation's pullback on arrays: -g, as NEG's float rule."""
    return (numpy_module().negative(g, out=into),)


# The operators' pullbacks take one `into` per operand: None, the gradient returned; an array, the gradient of
# an operand that is its rows' only reader written there (no new array, no copy); False, not wanted (an
# operand that needs no gradient: a column of the data, a constant), not computed, None in its place.


def subtract_array_pullback(g: Any, a: Any, b: Any, out: Any, into: Any = (None, None)) -> tuple[Any, ...]:
    """Subtraction's pullback on arrays: (g, -g), as SUB's float rule."""
    np = numpy_module()
    first, second = into
    da = g if first is None else None if first is False else np.copyto(first, g)
    return da, None if second is False else np.negative(g, out=second)


def multiply_array_pullback(g: Any, a: Any, b: Any, out: Any, into: Any = (None, None)) -> tuple[Any, ...]:
    """Multiplication's pullback on arrays: (g b, g a), as MUL's float rule."""
    np = numpy_module()
    first, second = into
    return (None if first is False else np.multiply(g, b, out=first),
            None if second is False else np.multiply(g, a, out=second))


_IN_PLACE: tuple[Callable[..., tuple[Any, ...]], ...] = (
    tanh_array_pullback, sigmoid_array_pullback, log_array_pullback, negate_array_pullback,
    subtract_array_pullback, multiply_array_pullback,
)
for _pullback in _IN_PLACE:
    _pullback.writes_into = True  # type: ignore[attr-defined]  # compile's replay may pass its store


def pow_array_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    # `_pow_pullback`, element by element: a zero exponent masks the base's slope; a zero base with a
    # non-negative exponent has slope 0 in the exponent, multiplied by g (not masked), as PyTorch does.
    np = numpy_module()
    da = masked(b != 0.0, g * (b * np.power(a, b - 1.0)))
    db = g * np.where((a == 0.0) & (b >= 0.0), 0.0, out * np.log(a))
    return da, db


# --- the rules of the round-5 ops (sqrt, log1p, softplus, erf, atan, maximum, minimum, clamp) --------------


def safe_sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0.0 else NAN  # -0.0 stays -0.0; a negative number or nan gives nan


def safe_log1p(x: float) -> float:
    if x > -1.0:
        return math.log1p(x)
    return -INF if x == -1.0 else NAN


def softplus(x: float) -> float:
    """log(1 + e^x) as PyTorch's softplus (beta 1, threshold 20): x itself above 20."""
    return x if x > 20.0 else math.log1p(safe_exp(x))


def softplus_slope(x: float) -> float:
    """d softplus / dx, as PyTorch forms it: z / (z + 1) with z = e^x, exactly 1 above the threshold."""
    if x > 20.0:
        return 1.0
    z = safe_exp(x)
    return z / (z + 1.0)


def maximum(a: float, b: float) -> float:
    """As torch.maximum: nan if either is nan, +0.0 from 0.0 and -0.0."""
    if a != a or b != b:
        return NAN
    if a == b:
        return b if math.copysign(1.0, a) < 0.0 else a
    return a if a > b else b


def minimum(a: float, b: float) -> float:
    """As torch.minimum: nan if either is nan, -0.0 from 0.0 and -0.0."""
    if a != a or b != b:
        return NAN
    if a == b:
        return a if math.copysign(1.0, a) < 0.0 else b
    return a if a < b else b


def clamp(x: float, low: float, high: float) -> float:
    """As torch.clamp: max(x, low), then min(that, high); nan stays nan."""
    if x != x:
        return x
    x = low if x < low else x
    return high if x > high else x


def erf_array(a: Any) -> Any:
    # NumPy has no erf: the C library's, element by element (the float rule itself, so the two agree).
    np = numpy_module()
    return np.frompyfunc(math.erf, 1, 1)(a).astype(np.float64)


def softplus_array(a: Any) -> Any:
    np = numpy_module()
    with np.errstate(over="ignore"):
        return np.where(a > 20.0, a, np.log1p(np.exp(np.minimum(a, 20.0))))


def softplus_slope_array(a: Any) -> Any:
    np = numpy_module()
    z = np.exp(np.minimum(a, 20.0))
    return np.where(a > 20.0, 1.0, z / (z + 1.0))


def maximum_array_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    np = numpy_module()
    share = np.where(a == b, g * 0.5, g)  # a tie splits the gradient, as PyTorch's maximum
    return np.where(a < b, 0.0, share), np.where(a > b, 0.0, share)


def minimum_array_pullback(g: Any, a: Any, b: Any, out: Any) -> tuple[Any, ...]:
    np = numpy_module()
    share = np.where(a == b, g * 0.5, g)
    return np.where(a > b, 0.0, share), np.where(a < b, 0.0, share)
