"""Second derivatives through every kind of graph, relu networks included, against
torch.autograd.grad(..., create_graph=True) in float64: gradient-norm penalties, Hessian-vector products,
random expression graphs, and nodes whose only route to the output passes through a masked slope."""

from __future__ import annotations

import math
import random

import pytest

torch = pytest.importorskip("torch")

from chainrule import Value, grad  # noqa: E402


def t(x: float) -> "torch.Tensor":
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


def close(ours: float, theirs: float, rel: float = 1e-9) -> bool:
    if math.isnan(theirs):
        return math.isnan(ours)
    return ours == theirs or abs(ours - theirs) <= rel * (1.0 + abs(theirs))


def torch_grads(out, inputs, create_graph=False):
    """torch.autograd.grad with 0 for inputs the output does not reach (chainrule's convention)."""
    found = torch.autograd.grad(out, inputs, create_graph=create_graph, allow_unused=True)
    return [torch.zeros((), dtype=torch.float64) if g is None else g for g in found]


def test_a_node_reached_only_through_a_masked_relu_has_second_derivative_zero() -> None:
    x = Value(-1.0)
    (dx,) = grad((x * 2).relu(), [x], create_graph=True)  # raised KeyError before
    (dxx,) = grad(dx, [x])
    tx = t(-1.0)
    (tdx,) = torch_grads(torch.relu(tx * 2), [tx], create_graph=True)
    (tdxx,) = torch_grads(tdx, [tx])
    assert (dx.data, dxx.data) == (tdx.item(), tdxx.item()) == (0.0, 0.0)


@pytest.mark.parametrize("make", [lambda v: v ** 0 * v.exp(), lambda v: (v * 3).relu().tanh() + (v * v).relu()],
                         ids=["zero exponent", "relu twice"])
def test_masked_routes_in_create_graph_match_torch(make) -> None:
    for x0 in (-2.0, -0.5, 0.0, 0.75):
        x = Value(x0)
        (dx,) = grad(make(x), [x], create_graph=True)
        (dxx,) = grad(dx, [x])
        tx = t(x0)
        (tdx,) = torch_grads(make(_Torch(tx)).t, [tx], create_graph=True)
        (tdxx,) = torch_grads(tdx, [tx])
        assert close(dx.data, tdx.item()) and close(dxx.data, tdxx.item()), (x0, dx, dxx, tdx, tdxx)


class _Torch:
    """Runs a lambda written for Value (v.relu(), v.exp(), v ** k) on a tensor."""

    def __init__(self, t):
        self.t = t

    def _wrap(self, other):
        return other.t if isinstance(other, _Torch) else other

    def __add__(self, o): return _Torch(self.t + self._wrap(o))
    def __radd__(self, o): return _Torch(self._wrap(o) + self.t)
    def __mul__(self, o): return _Torch(self.t * self._wrap(o))
    def __rmul__(self, o): return _Torch(self._wrap(o) * self.t)
    def __sub__(self, o): return _Torch(self.t - self._wrap(o))
    def __truediv__(self, o): return _Torch(self.t / self._wrap(o))
    def __pow__(self, o): return _Torch(self.t ** self._wrap(o))
    def __neg__(self): return _Torch(-self.t)
    def __abs__(self): return _Torch(torch.abs(self.t))
    def relu(self): return _Torch(torch.relu(self.t))
    def tanh(self): return _Torch(torch.tanh(self.t))
    def exp(self): return _Torch(torch.exp(self.t))
    def log(self): return _Torch(torch.log(self.t))
    def sigmoid(self): return _Torch(torch.sigmoid(self.t))


# --- a small relu network, written once for both engines ------------------------------------------------

def relu_net(xs, weights, sizes):
    """A fully connected network with relu hidden layers and a linear output, weights in a flat list."""
    k = 0
    layer = list(xs)
    for depth, width in enumerate(sizes):
        nxt = []
        for _ in range(width):
            act = weights[k]
            k += 1
            for v in layer:
                act = act + weights[k] * v
                k += 1
            nxt.append(act.relu() if depth < len(sizes) - 1 else act)
        layer = nxt
    return layer[0]


def weight_count(n_in, sizes):
    count, width_in = 0, n_in
    for width in sizes:
        count += width * (width_in + 1)
        width_in = width
    return count


SIZES = [4, 3, 1]


@pytest.mark.parametrize("seed", range(50))
def test_gradient_norm_penalty_of_relu_networks_matches_torch(seed: int) -> None:
    rng = random.Random(seed)
    x0 = [rng.uniform(-2, 2) for _ in range(2)]
    w0 = [rng.uniform(-1.5, 1.5) for _ in range(weight_count(2, SIZES))]

    xs, ws = [Value(v) for v in x0], [Value(v) for v in w0]
    gx = grad(relu_net(xs, ws, SIZES), xs, create_graph=True)
    penalty = sum((g * g for g in gx), Value(0.0))
    d_weights = grad(penalty, ws)

    txs, tws = [t(v) for v in x0], [t(v) for v in w0]
    tgx = torch_grads(relu_net(txs, tws, SIZES), txs, create_graph=True)
    tpenalty = sum(g * g for g in tgx)
    td_weights = torch_grads(tpenalty, tws) if tpenalty.requires_grad else [torch.zeros(()) for _ in tws]

    assert close(penalty.data, tpenalty.item())
    for k, (ours, theirs) in enumerate(zip(d_weights, td_weights)):
        assert close(ours.data, theirs.item()), (seed, k, ours.data, theirs.item())


@pytest.mark.parametrize("seed", range(25))
def test_hessian_vector_products_match_torch(seed: int) -> None:
    rng = random.Random(1000 + seed)
    x0 = [rng.uniform(-2, 2) for _ in range(3)]
    v0 = [rng.uniform(-1, 1) for _ in range(3)]

    def f(x, y, z):
        hidden = (x * y - z).relu() + (y * 0.5 + z * z).tanh() * x
        return (hidden * hidden + (x - y).relu() * z).sigmoid() + (z * z + 1.0).log() / (y * y + 1.0)

    xs = [Value(v) for v in x0]
    gs = grad(f(*xs), xs, create_graph=True)
    gv = sum((g * v for g, v in zip(gs, v0)), Value(0.0))
    hvp = grad(gv, xs)

    txs = [t(v) for v in x0]
    tf = f(*[_Torch(v) for v in txs]).t
    tgs = torch_grads(tf, txs, create_graph=True)
    tgv = sum(g * v for g, v in zip(tgs, v0))
    thvp = torch_grads(tgv, txs)
    for ours, theirs in zip(hvp, thvp):
        assert close(ours.data, theirs.item()), (seed, ours.data, theirs.item())


UNARY = ["relu", "tanh", "sigmoid", "exp_tanh", "log_sq", "abs", "square", "neg", "zero_power"]
BINARY = ["add", "sub", "mul", "div", "pow"]


def build(recipe, leaves):
    values = list(leaves)
    for op, i, j in recipe:
        a, b = values[i % len(values)], values[j % len(values)]
        values.append({
            "relu": lambda: a.relu(), "tanh": lambda: a.tanh(), "sigmoid": lambda: a.sigmoid(),
            "exp_tanh": lambda: a.tanh().exp(), "log_sq": lambda: (a * a + 1.0).log(), "abs": lambda: abs(a),
            "square": lambda: a ** 2, "neg": lambda: -a, "zero_power": lambda: a ** 0 * 2.0,
            "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "div": lambda: a / (b * b + 0.5), "pow": lambda: (a * a + 0.5) ** b.tanh(),
        }[op]())
    out = values[-1]
    for v in values[-3:-1]:
        out = out + v
    return out


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs_second_order_match_torch(seed: int) -> None:
    rng = random.Random(5000 + seed)
    x0 = [rng.choice([rng.uniform(-3, 3), 0.0, -1.0]) for _ in range(3)]
    recipe = [(rng.choice(UNARY + BINARY), rng.randrange(100), rng.randrange(100)) for _ in range(rng.randrange(1, 14))]
    xs = [Value(v) for v in x0]
    gs = grad(build(recipe, xs), xs, create_graph=True)
    second = grad(sum((g * g for g in gs), Value(0.0)), xs)

    txs = [t(v) for v in x0]
    tgs = torch_grads(build(recipe, [_Torch(v) for v in txs]).t, txs, create_graph=True)
    total = sum(g * g for g in tgs)
    tsecond = torch_grads(total, txs) if total.requires_grad else [torch.zeros(()) for _ in txs]
    for ours, theirs in zip(gs, tgs):
        assert close(ours.data, theirs.item()), (seed, recipe, x0)
    for ours, theirs in zip(second, tsecond):
        assert close(ours.data, theirs.item()), (seed, recipe, x0, ours.data, theirs.item())
