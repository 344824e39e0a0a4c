"""The ops and controls users reach for (issue 45 item 3): sqrt, log1p, softplus, erf, atan, maximum, minimum,
clamp, where, greater and detach/stop_gradient, each one entry of the op table. Values, gradients and second
derivatives against PyTorch float64 at ordinary points and at the edges (0, -0.0, negatives, +-inf, nan, past
softplus's threshold, ties); forward mode and compiled replay against eager. Also: every op of the table called
by name is a method written in `Value`'s class body (issue 46 item 4: found by grep and editors)."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

import chainrule
from chainrule import Value, func, ops, stop_gradient, where
from reference_torch import needs_torch, torch

ROOT = Path(__file__).resolve().parent.parent
EDGES = [0.0, -0.0, 1e-310, -1e-310, 0.3, -0.7, 1.0, -1.0, 2.5, -3.0, 19.5, 20.0, 20.5, 40.0, -40.0, 1e300, -1e300,
         math.inf, -math.inf, math.nan]
UNARY = {  # chainrule's method (the PyTorch function each is compared with: TORCH_UNARY)
    "sqrt": lambda v: v.sqrt(),
    "log1p": lambda v: v.log1p(),
    "softplus": lambda v: v.softplus(),
    "erf": lambda v: v.erf(),
    "atan": lambda v: v.atan(),
    "clamp": lambda v: v.clamp(-1.0, 2.5),
    "clamp_low": lambda v: v.clamp(0.0),
}
BINARY = {
    "maximum": lambda a, b: a.maximum(b),
    "minimum": lambda a, b: a.minimum(b),
    "where": lambda a, b: where(a.greater(b), a * b, a - b),
}


def torch_unary(name: str):
    return {
        "sqrt": torch.sqrt, "log1p": torch.log1p, "softplus": torch.nn.functional.softplus, "erf": torch.erf,
        "atan": torch.atan, "clamp": lambda t: torch.clamp(t, -1.0, 2.5), "clamp_low": lambda t: torch.clamp(t, min=0.0),
    }[name]


def torch_binary(name: str):
    return {"maximum": torch.maximum, "minimum": torch.minimum,
            "where": lambda a, b: torch.where(a > b, a * b, a - b)}[name]


PAIRS = [(0.3, -0.7), (-0.7, 0.3), (1.0, 1.0), (0.0, -0.0), (2.5, math.inf), (math.nan, 1.0), (-3.0, math.nan),
         (math.inf, math.inf), (-1e300, 1e-310)]


def agree(ours: float, theirs: float, rel: float = 4e-16) -> bool:
    """The same number up to rounding, or both nan. Rounding: two units in the last place (`rel`) of kernel
    rounding (libm against PyTorch's kernels), or of a subnormal (PyTorch's log1p and erf round there); for a
    second derivative 4e-15, "derivative formulas" as in tests/test_transforms_torch.py (PyTorch
    differentiates its hand-written backward formulas, chainrule its table's pullbacks)."""
    if math.isnan(ours) or math.isnan(theirs):
        return math.isnan(ours) and math.isnan(theirs)
    return ours == theirs or abs(ours - theirs) <= max(rel * abs(theirs), 1e-322)


def T(x: float, grad: bool = True):
    return torch.tensor(x, dtype=torch.float64, requires_grad=grad)


def torch_derivatives(f, *xs):
    """PyTorch's value, gradient and second derivatives (of the gradient's sum) at xs."""
    ts = [T(x) for x in xs]
    out = f(*ts)
    first = torch.autograd.grad(out, ts, create_graph=True, allow_unused=True, materialize_grads=True)
    total = sum(first)
    second = (torch.autograd.grad(total, ts, allow_unused=True, materialize_grads=True) if total.requires_grad
              else [torch.zeros(()) for _ in ts])
    return out.item(), [g.item() for g in first], [g.item() for g in second]


def our_derivatives(f, *xs):
    vs = [Value(x) for x in xs]
    out = f(*vs)
    first = chainrule.grad(out, vs, create_graph=True)
    second = chainrule.grad(sum(first[1:], first[0]), vs)
    return out.data, [g.data for g in first], [g.data for g in second]


@needs_torch
@pytest.mark.parametrize("name", UNARY)
def test_one_input_ops_match_pytorch_to_second_order_at_the_edges(name: str) -> None:
    ours_f, theirs_f = UNARY[name], torch_unary(name)
    differ = []
    for x in EDGES:
        ours, theirs = our_derivatives(ours_f, x), torch_derivatives(theirs_f, x)
        for what, a, b in zip(("value", "gradient", "second"), (ours[0], *ours[1], *ours[2]),
                              (theirs[0], *theirs[1], *theirs[2])):
            if not agree(a, b, 4e-15 if what == "second" else 4e-16):
                differ.append(f"{name}({x!r}) {what}: ours {a!r}, PyTorch {b!r}")
    assert differ == []


@needs_torch
@pytest.mark.parametrize("name", BINARY)
def test_selects_match_pytorch_to_second_order_ties_and_nan_included(name: str) -> None:
    ours_f, theirs_f = BINARY[name], torch_binary(name)
    differ = []
    for a, b in PAIRS:
        ours, theirs = our_derivatives(ours_f, a, b), torch_derivatives(theirs_f, a, b)
        for what, x, y in zip(("value", "d/da", "d/db", "second a", "second b"), (ours[0], *ours[1], *ours[2]),
                              (theirs[0], *theirs[1], *theirs[2])):
            if not agree(x, y, 4e-15 if what.startswith("second") else 4e-16):
                differ.append(f"{name}({a!r}, {b!r}) {what}: ours {x!r}, PyTorch {y!r}")
    assert differ == []


@needs_torch
def test_the_masked_input_of_a_select_gets_exactly_zero_from_an_infinite_gradient() -> None:
    # torch.where's and torch.maximum's unchosen input receives 0, not 0 x inf = nan.
    a, b = Value(2.0), Value(1.0)
    (ga, gb) = chainrule.grad(a.maximum(b) * math.inf, [a, b])
    ta, tb = T(2.0), T(1.0)
    tga, tgb = torch.autograd.grad(torch.maximum(ta, tb) * math.inf, [ta, tb])
    assert (ga.data, gb.data) == (tga.item(), tgb.item()) == (math.inf, 0.0)
    x = Value(-1.0)
    (gx,) = chainrule.grad(where(x.greater(0.0), x, x * 0.01), [x])
    assert gx.data == 0.01


def test_forward_mode_agrees_with_reverse_on_every_new_op() -> None:
    for name, f in UNARY.items():
        for x in (0.3, -0.7, 2.7, 25.0):
            v = Value(x)
            (g,) = chainrule.grad(f(v), [v])
            assert agree(chainrule.jvp(f, [x], [1.0])[1], g.data), (name, x)
    for name, f in BINARY.items():
        for a, b in ((0.3, -0.7), (-0.7, 0.3), (1.0, 1.0)):
            va, vb = Value(a), Value(b)
            ga, gb = chainrule.grad(f(va, vb), [va, vb])
            assert agree(chainrule.jvp(f, [a, b], [1.0, 2.0])[1], ga.data + 2.0 * gb.data), (name, a, b)


@pytest.mark.parametrize("name", [*UNARY, *BINARY])
def test_compiled_replay_gives_eager_values_and_gradients(name: str) -> None:
    p = Value(1.3)
    points = np.array([x for x in EDGES if math.isfinite(x)] + [0.05 * k - 2.0 for k in range(80)])
    if name in UNARY:
        f = UNARY[name]
        body = lambda x: f(x * p)  # noqa: E731
    else:
        f = BINARY[name]
        body = lambda x: f(x * p, 0.5 - x)  # noqa: E731
    values, grads = chainrule.compile(body, [p]).value_and_grad(points)
    p.grad = 0.0
    eager = []
    for x in points.tolist():
        out = body(Value(x))
        out.backward()
        eager.append(out.data)
    assert all(agree(a, b) or abs(a - b) <= 1e-15 * (1 + abs(b)) for a, b in zip(values.tolist(), eager))
    assert agree(float(grads[0]), p.grad, 1e-12)


def test_where_and_clamp_compile_without_relu_tricks_and_choose_per_example() -> None:
    w = Value(0.5)
    leaky = chainrule.compile(lambda x: where((x * w).greater(0.0), x * w, 0.1 * (x * w)), [w])
    values, grads = leaky.value_and_grad(np.array([-2.0, 4.0]))
    assert values.tolist() == [-0.1, 2.0]
    assert grads[0] == pytest.approx(0.1 * -2.0 + 4.0)  # d/dw of each, summed


@needs_torch
def test_detach_and_stop_gradient_pass_the_value_and_no_gradient_in_every_transform() -> None:
    f = lambda x: x * x.detach() + stop_gradient(x * 3.0)  # noqa: E731
    t = T(1.5)
    (torch_grad,) = torch.autograd.grad(t * t.detach() + (t * 3.0).detach(), [t])
    assert func.grad(f)(1.5) == torch_grad.item() == 1.5
    assert func.jvp(f, (1.5,), (1.0,))[1] == 1.5
    assert func.hessian(f)(1.5) == 0.0
    p = Value(2.0)
    values, grads = chainrule.compile(lambda x: (x * p).detach() * p, [p]).value_and_grad(np.array([1.0, 3.0]))
    assert values.tolist() == [2.0 * 2.0, 6.0 * 2.0] and grads[0] == 2.0 + 6.0  # the detached factor: a constant
    with pytest.raises(TypeError, match="stop_gradient\\(\\) takes a Value or a real number, not str"):
        stop_gradient("x")
    with pytest.raises(TypeError, match="where\\(\\) takes a condition that is a bool or a Value"):
        where(1, 2.0, 3.0)


# --- issue 46 item 4: Value's op methods are written in the class, found by grep --------------------------


def test_every_op_called_by_name_is_a_method_written_in_the_value_class() -> None:
    source = (ROOT / "src" / "chainrule" / "engine.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Value"]
    written = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    named = {op.function for op in ops.OPS.values() if op.function is not None}
    assert sorted(named - written) == []
    assert "setattr(" not in source and "setattr(" not in (ROOT / "src" / "chainrule" / "ops.py").read_text()
    assert Value.__dict__["tanh"].__qualname__ == "Value.tanh"


# --- a custom rule for a function (custom_vjp) ----------------------------------------------------------------


def _clip_backward(g, x, out):
    return (g.maximum(-1.0).minimum(1.0) if isinstance(g, Value) else max(-1.0, min(1.0, g)),)


clipped = func.custom_vjp(lambda x: x, _clip_backward, name="clip_gradient")  # identity, gradient clipped to 1
scaled = func.custom_vjp(lambda a, b: a * b, lambda g, a, b, out: (g * b, None), name="no_grad_to_b")


@needs_torch
def test_a_custom_rule_is_honoured_by_grad_vjp_jacrev_backward_and_compiled_replay() -> None:
    class Clip(torch.autograd.Function):  # the same rule, written for PyTorch
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g.clamp(-1.0, 1.0)

    f = lambda x: clipped(x * 3.0) * 5.0  # noqa: E731
    t = T(0.4)
    (expected,) = torch.autograd.grad(Clip.apply(t * 3.0) * 5.0, [t])  # 5 clipped to 1, times 3
    assert func.grad(f)(0.4) == func.jacrev(f)(0.4) == func.vjp(f, 0.4)[1](1.0)[0] == expected.item() == 3.0
    x = Value(0.4)
    f(x).backward()
    assert x.grad == 3.0
    p = Value(2.0)
    values, grads = chainrule.compile(lambda x: clipped(x * p) * 5.0 + scaled(p, x), [p]).value_and_grad(
        np.array([0.5, -1.0]))
    assert values.tolist() == [0.5 * 2.0 * 5.0 + 2.0 * 0.5, -1.0 * 2.0 * 5.0 + 2.0 * -1.0]
    assert grads[0] == (1.0 * 0.5 + 0.5) + (1.0 * -1.0 - 1.0)  # clipped 5 -> 1, times x; plus d(p x)/dp = x
    # the second input's gradient is masked by the rule: nothing reaches b
    assert func.grad(lambda b: scaled(2.0, b))(3.0) == 0.0


def test_a_custom_rule_in_forward_mode_and_second_order_and_its_limits() -> None:
    # Forward mode reads the rule with the tangent in place of g (right for a rule linear in g): 2 clipped to 1.
    assert func.jvp(lambda x: clipped(x) * 5.0, (0.4,), (2.0,)) == (2.0, 5.0)
    # f = scaled(x, x) x: by the rule f' = scaled(x, x) + x . x (b masked), and f'' = x (the rule again) + 2x
    assert func.grad(lambda x: scaled(x, x) * x)(1.5) == 2 * 1.5 ** 2
    assert func.hessian(lambda x: scaled(x, x) * x)(1.5) == 3 * 1.5
    with pytest.raises(TypeError, match="custom_vjp: clip_gradient takes one or two scalars"):
        clipped(1.0, 2.0, 3.0)
