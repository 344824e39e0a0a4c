"""The engine against real PyTorch in float64: values and gradients of every op, edge cases, second derivatives."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

from chainrule import Value, grad, gradcheck  # noqa: E402


def t(x: float) -> "torch.Tensor":
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


def same(ours: float, theirs: float, rel: float = 1e-12, abs_: float = 1e-12) -> bool:
    """Equal as float64 results: nan matches nan, infinities must match exactly."""
    if math.isnan(theirs):
        return math.isnan(ours)
    if math.isinf(theirs):
        return ours == theirs
    return abs(ours - theirs) <= abs_ + rel * abs(theirs)


BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "**": lambda a, b: a**b,
}
PAIRS = [(2.0, -3.0), (-1.5, 0.25), (0.5, 4.0), (3.0, 2.0), (1e3, 1e-3), (-2.0, -2.0), (0.0, 1.5), (7.0, 0.0)]


@pytest.mark.parametrize("symbol", BINARY)
@pytest.mark.parametrize("x,y", PAIRS)
def test_binary_ops_match_torch(symbol: str, x: float, y: float) -> None:
    f = BINARY[symbol]
    a, b = Value(x), Value(y)
    out = f(a, b)
    out.backward()
    ta, tb = t(x), t(y)
    tout = f(ta, tb)
    tout.backward()
    assert same(out.data, tout.item()), (symbol, x, y)
    assert same(a.grad, ta.grad.item()), ("d/da", symbol, x, y, a.grad, ta.grad.item())
    assert same(b.grad, tb.grad.item()), ("d/db", symbol, x, y, b.grad, tb.grad.item())


UNARY = {
    "tanh": (lambda v: v.tanh(), torch.tanh),
    "exp": (lambda v: v.exp(), torch.exp),
    "log": (lambda v: v.log(), torch.log),
    "relu": (lambda v: v.relu(), torch.relu),
    "sigmoid": (lambda v: v.sigmoid(), torch.sigmoid),
    "neg": (lambda v: -v, lambda v: -v),
    "abs": (abs, torch.abs),
    "sin": (lambda v: v.sin(), torch.sin),
    "cos": (lambda v: v.cos(), torch.cos),
    "sin of a product": (lambda v: (v * 0.75).sin() * v, lambda v: torch.sin(v * 0.75) * v),
    "square": (lambda v: v**2, lambda v: v**2),
    "cube": (lambda v: v**3, lambda v: v**3),
    "sqrt": (lambda v: v**0.5, lambda v: v**0.5),
    "reciprocal": (lambda v: v**-1, lambda v: v**-1),
    "zero power": (lambda v: v**0, lambda v: v**0),
}
POINTS = [-3.0, -0.5, 0.0, 0.3, 1.0, 2.5, 20.0, -20.0, 1000.0, -1000.0]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("x", POINTS)
def test_unary_ops_match_torch_including_edges(name: str, x: float) -> None:
    ours_f, torch_f = UNARY[name]
    a = Value(x)
    out = ours_f(a)
    out.backward()
    ta = t(x)
    tout = torch_f(ta)
    tout.backward()
    assert same(out.data, tout.item()), (name, x, out.data, tout.item())
    assert same(a.grad, ta.grad.item()), (name, x, a.grad, ta.grad.item())


REFLECTED = {
    "2 * v": (lambda v: 2 * v),
    "1 + v": (lambda v: 1 + v),
    "1 - v": (lambda v: 1 - v),
    "2 / v": (lambda v: 2 / v),
    "2 ** v": (lambda v: 2**v),
    "-2.5 ** v": (lambda v: (-2.5) ** v),
}


@pytest.mark.parametrize("name", REFLECTED)
@pytest.mark.parametrize("x", [-2.0, -0.5, 0.0, 1.5, 3.0])
def test_reflected_ops_match_torch(name: str, x: float) -> None:
    f = REFLECTED[name]
    a = Value(x)
    out = f(a)
    out.backward()
    ta = t(x)
    tout = f(ta)
    tout.backward()
    assert same(out.data, tout.item()), (name, x, out.data, tout.item())
    assert same(a.grad, ta.grad.item()), (name, x, a.grad, ta.grad.item())


EDGES = [
    ("exp overflow", lambda v: v.exp(), 1000.0),
    ("log of zero", lambda v: v.log(), 0.0),
    ("log of a negative", lambda v: v.log(), -1.0),
    ("negative base, fractional exponent", lambda v: v**0.5, -8.0),
    ("division by zero", lambda v: 1.0 / v, 0.0),
    ("negative over zero", lambda v: -1.0 / v, 0.0),
    ("zero over zero", lambda v: v / v, 0.0),
    ("power overflow", lambda v: v**400, 10.0),
    ("odd power overflow of a negative", lambda v: v**401, -10.0),
    ("zero to a negative power", lambda v: v**-2, 0.0),
    ("tanh far right", lambda v: v.tanh(), 1e6),
    ("sigmoid far left", lambda v: v.sigmoid(), -1e6),
    ("product overflow", lambda v: v * v, 1e200),
    ("inf minus inf", lambda v: v.exp() - v.exp(), 1000.0),
    ("relu of nan passes the gradient", lambda v: v.log().relu() * 2, -1.0),
    ("sin of inf is nan", lambda v: v.exp().sin(), 1000.0),
    ("cos of -inf is nan", lambda v: (-v.exp()).cos(), 1000.0),
    ("sin of a huge number", lambda v: v.sin(), 1e300),
    ("cos of nan", lambda v: v.log().cos(), -1.0),
]


@pytest.mark.parametrize("name,f,x", EDGES, ids=[e[0] for e in EDGES])
def test_numerical_edges_give_torchs_float64_results(name: str, f, x: float) -> None:
    a = Value(x)
    out = f(a)  # must not raise
    assert isinstance(out.data, float)  # never complex
    out.backward()
    ta = t(x)
    tout = f(ta)
    tout.backward()
    assert same(out.data, tout.item()), (name, out.data, tout.item())
    assert same(a.grad, ta.grad.item()), (name, a.grad, ta.grad.item())


def test_spec_neuron_gradients_match_spec_and_torch() -> None:
    x1, x2, w1, w2 = Value(2.0), Value(0.0), Value(-3.0), Value(1.0)
    b = Value(6.8813735870195432)
    o = (x1 * w1 + x2 * w2 + b).tanh()
    o.backward()
    # Hand-derived in the spec: -1.5, 1.0, 0.5, 0.0.
    assert [x1.grad, w1.grad, x2.grad, w2.grad] == pytest.approx([-1.5, 1.0, 0.5, 0.0], abs=1e-9)
    tx1, tx2, tw1, tw2, tb = t(2.0), t(0.0), t(-3.0), t(1.0), t(6.8813735870195432)
    to = torch.tanh(tx1 * tw1 + tx2 * tw2 + tb)
    to.backward()
    for ours, theirs in [(x1, tx1), (w1, tw1), (x2, tx2), (w2, tw2), (b, tb)]:
        assert same(ours.grad, theirs.grad.item())
    assert same(o.data, to.item())


def test_tanh_built_from_exp_gives_the_primitives_gradients() -> None:
    def neuron(tanh):
        x1, x2, w1, w2 = Value(2.0), Value(0.0), Value(-3.0), Value(1.0)
        b = Value(6.8813735870195432)
        o = tanh(x1 * w1 + x2 * w2 + b)
        o.backward()
        return [o.data] + [v.grad for v in (x1, w1, x2, w2, b)]

    def tanh_from_exp(n):
        e = (2 * n).exp()
        return (e - 1) / (e + 1)

    assert neuron(tanh_from_exp) == pytest.approx(neuron(lambda n: n.tanh()), rel=1e-12, abs=1e-12)


# --- random expression graphs ------------------------------------------------------------------------

# Each step combines two earlier values (by index) with an op that stays in its domain for any input.
SAFE_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 0.5),
    "pow": lambda a, b: (a * a + 0.5) ** (b.tanh()),
}
SAFE_UNARY = {
    "tanh": lambda a: a.tanh(),
    "exp": lambda a: (a.tanh()).exp(),
    "log": lambda a: (a * a + 1.0).log(),
    "sigmoid": lambda a: a.sigmoid(),
    "relu": lambda a: a.relu(),
    "abs": lambda a: abs(a),
    "square": lambda a: a**2,
    "neg": lambda a: -a,
    "scale": lambda a: 0.5 * a + 1,
}
TORCH_SAFE_UNARY = {
    **SAFE_UNARY,
    "tanh": torch.tanh,
    "exp": lambda a: torch.exp(torch.tanh(a)),
    "log": lambda a: torch.log(a * a + 1.0),
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "abs": torch.abs,
}
TORCH_SAFE_BINARY = {**SAFE_BINARY, "pow": lambda a, b: (a * a + 0.5) ** torch.tanh(b)}

step = st.one_of(
    st.tuples(st.just("binary"), st.sampled_from(sorted(SAFE_BINARY)), st.integers(0, 1000), st.integers(0, 1000)),
    st.tuples(st.just("unary"), st.sampled_from(sorted(SAFE_UNARY)), st.integers(0, 1000), st.just(0)),
)
recipes = st.tuples(
    st.lists(st.floats(-3, 3, allow_nan=False).filter(lambda x: abs(x) > 1e-3), min_size=3, max_size=3),
    st.lists(step, min_size=1, max_size=12),
)


def build(recipe, leaves, unary, binary):
    values = list(leaves)
    for kind, op, i, j in recipe:
        a = values[i % len(values)]
        if kind == "binary":
            values.append(binary[op](a, values[j % len(values)]))
        else:
            values.append(unary[op](a))
    # Sum the last few values so every branch can reach the output.
    out = values[-1]
    for v in values[-3:-1]:
        out = out + v
    return out


@settings(max_examples=60, deadline=None)
@given(recipes)
def test_random_graphs_match_torch(recipe) -> None:
    start, steps = recipe
    leaves = [Value(x) for x in start]
    out = build(steps, leaves, SAFE_UNARY, SAFE_BINARY)
    out.backward()
    tleaves = [t(x) for x in start]
    tout = build(steps, tleaves, TORCH_SAFE_UNARY, TORCH_SAFE_BINARY)
    tout.backward()
    assert same(out.data, tout.item(), rel=1e-9, abs_=1e-9)
    for ours, theirs in zip(leaves, tleaves):
        expected = 0.0 if theirs.grad is None else theirs.grad.item()
        assert same(ours.grad, expected, rel=1e-9, abs_=1e-9), (ours.grad, expected)


@settings(max_examples=40, deadline=None)
@given(recipes)
def test_random_graphs_pass_gradcheck(recipe) -> None:
    start, steps = recipe
    # relu and abs have kinks where central differences are meaningless; keep to smooth ops here.
    smooth = [s for s in steps if s[1] not in ("relu", "abs")] or [("unary", "tanh", 0, 0)]
    assert gradcheck(lambda *xs: build(smooth, xs, SAFE_UNARY, SAFE_BINARY), start, eps=1e-6, atol=1e-5, rtol=1e-4)


# --- second derivatives ------------------------------------------------------------------------------

SECOND = {
    "tanh": (lambda v: v.tanh(), torch.tanh),
    "exp": (lambda v: v.exp(), torch.exp),
    "log": (lambda v: v.log(), torch.log),
    "sigmoid": (lambda v: v.sigmoid(), torch.sigmoid),
    "sin": (lambda v: v.sin(), torch.sin),
    "cos": (lambda v: v.cos(), torch.cos),
    "sin of cos": (lambda v: v.cos().sin() * v, lambda v: torch.sin(torch.cos(v)) * v),
    "cube": (lambda v: v**3, lambda v: v**3),
    "reciprocal": (lambda v: 1 / v, lambda v: 1 / v),
    "x to the x": (lambda v: v**v, lambda v: v**v),
    "neuron-like": (lambda v: (v * -3.0 + 6.88).tanh() * v, lambda v: torch.tanh(v * -3.0 + 6.88) * v),
}


@pytest.mark.parametrize("name", SECOND)
@pytest.mark.parametrize("x", [0.3, 1.7, 2.5])
def test_second_derivatives_match_torch(name: str, x: float) -> None:
    f, tf = SECOND[name]
    a = Value(x)
    (first,) = grad(f(a), [a], create_graph=True)
    (second,) = grad(first, [a])
    ta = t(x)
    (tfirst,) = torch.autograd.grad(tf(ta), [ta], create_graph=True)
    (tsecond,) = torch.autograd.grad(tfirst, [ta])
    assert same(first.data, tfirst.item(), rel=1e-10)
    assert same(second.data, tsecond.item(), rel=1e-10), (name, x, second.data, tsecond.item())


def test_mixed_second_derivatives_match_torch() -> None:
    x, y = Value(1.3), Value(-0.7)
    gx, gy = grad((x * y).tanh() + x**2 * y, [x, y], create_graph=True)
    dxx, dxy = grad(gx, [x, y])
    tx, ty = t(1.3), t(-0.7)
    tgx, tgy = torch.autograd.grad(torch.tanh(tx * ty) + tx**2 * ty, [tx, ty], create_graph=True)
    tdxx, tdxy = torch.autograd.grad(tgx, [tx, ty], retain_graph=True)
    assert same(dxx.data, tdxx.item(), rel=1e-10)
    assert same(dxy.data, tdxy.item(), rel=1e-10)
    (dyy,) = grad(gy, [y])
    (tdyy,) = torch.autograd.grad(tgy, [ty])
    assert same(dyy.data, tdyy.item(), rel=1e-10, abs_=1e-12)


# Where an infinite or nan gradient meets a slope that is zero by construction (relu left of 0, a zero
# exponent, a zero base), PyTorch masks the slope and passes exactly 0; a plain 0 x inf would give nan.
MASKED = [
    ("log(relu(x)) at x = -1", lambda v: v.relu().log(), torch.relu, -1.0),
    ("relu(x) ** -1 at x = 0", lambda v: v.relu() ** -1, torch.relu, 0.0),
    ("1 / (x ** 0 - 1) at x = 3", lambda v: 1 / (v**0 - 1), None, 3.0),
    ("abs(log(x)) at x = -1 (sign of nan)", lambda v: abs(v.log()), None, -1.0),
    ("log(x ** y) at x = 0, y = 2", lambda v: (v ** (v * 0 + 2)).log(), None, 0.0),
    ("relu(x) * inf at x = -1", lambda v: v.relu() * math.inf, torch.relu, -1.0),
]


class _TorchValue:
    """Lets a lambda written for Value (v.relu(), v.log()) run on a tensor."""

    def __init__(self, t):
        self.t = t

    def relu(self):
        return torch.relu(self.t)


@pytest.mark.parametrize("name,f,relu,x", MASKED, ids=[m[0] for m in MASKED])
def test_masked_slopes_pass_zero_like_torch(name, f, relu, x) -> None:
    a = Value(x)
    out = f(a)
    out.backward()
    ta = t(x)
    tout = f(_TorchValue(ta)) if relu is not None else f(ta)
    tout.backward()
    assert same(out.data, tout.item()), (name, out.data, tout.item())
    assert same(a.grad, ta.grad.item()), (name, a.grad, ta.grad.item())
    (functional,) = grad(out, [a])  # the functional path masks the same way
    assert same(functional.data, ta.grad.item()), (name, functional.data)
