"""chainrule.losses against torch (float64): loss values and every parameter gradient, extreme logits."""

from __future__ import annotations

import math
import random

import pytest

from reference_torch import needs_torch, torch  # noqa: E402

F = None if torch is None else torch.nn.functional

from chainrule import Value
from chainrule.losses import bce_with_logits, hinge, l2_penalty, max_margin, mse, softmax_cross_entropy
from chainrule.nn import MLP


def torch_model(model: MLP) -> tuple[torch.nn.Sequential, list[torch.Tensor]]:
    """torch.nn.Sequential (float64) with the same weights, and its parameters in chainrule's order."""
    modules = []
    for layer in model.layers:
        linear = torch.nn.Linear(layer.nin, layer.nout, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.tensor([[w.data for w in n.w] for n in layer.neurons], dtype=torch.float64))
            linear.bias.copy_(torch.tensor([n.b.data for n in layer.neurons], dtype=torch.float64))
        modules.append(linear)
        act = {"relu": torch.nn.ReLU(), "tanh": torch.nn.Tanh(), "sigmoid": torch.nn.Sigmoid()}.get(layer.activation)
        if act is not None:
            modules.append(act)
    return torch.nn.Sequential(*modules)


def torch_grads(seq: torch.nn.Sequential) -> list[float]:
    grads = []
    for module in seq:
        if isinstance(module, torch.nn.Linear):
            for j in range(module.out_features):
                grads.extend(module.weight.grad[j].tolist())
                grads.append(module.bias.grad[j].item())
    return grads


def setup(nout: int, seed: int = 11, n: int = 8, activation: str = "tanh"):
    rng = random.Random(seed)
    model = MLP(3, [6, nout], activation=activation, rng=rng, init="uniform")
    for p in model.parameters():  # non-zero biases too, so their gradients are tested meaningfully
        p.data = rng.uniform(-1.5, 1.5)
    points = [[rng.uniform(-2, 2) for _ in range(3)] for _ in range(n)]
    return rng, model, points, torch_model(model), torch.tensor(points, dtype=torch.float64)


def compare(model, loss: Value, seq, t_loss: torch.Tensor) -> None:
    model.zero_grad()
    loss.backward()
    t_loss.backward()
    assert loss.data == pytest.approx(t_loss.item(), rel=1e-12, abs=1e-14)
    assert [p.grad for p in model.parameters()] == pytest.approx(torch_grads(seq), rel=1e-9, abs=1e-12)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse_matches_torch(reduction):
    rng, model, points, seq, tx = setup(1)
    targets = [rng.uniform(-1, 1) for _ in points]
    loss = mse([model(x)[0] for x in points], targets, reduction=reduction)
    t_loss = F.mse_loss(seq(tx)[:, 0], torch.tensor(targets, dtype=torch.float64), reduction=reduction)
    compare(model, loss, seq, t_loss)


@needs_torch
def test_max_margin_matches_torch_hinge_with_l2():
    rng, model, points, seq, tx = setup(1, activation="relu")
    labels = [rng.choice([-1, 1]) for _ in points]
    loss = max_margin([model(x)[0] for x in points], labels) + l2_penalty(model.parameters(), 1e-4)
    ty = torch.tensor(labels, dtype=torch.float64)
    t_loss = F.relu(1 - ty * seq(tx)[:, 0]).mean() + 1e-4 * sum((p * p).sum() for p in seq.parameters())
    compare(model, loss, seq, t_loss)
    assert hinge is max_margin


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_bce_with_logits_matches_torch(reduction):
    rng, model, points, seq, tx = setup(1)
    targets = [rng.choice([0.0, 1.0, 0.3]) for _ in points]
    loss = bce_with_logits([model(x)[0] for x in points], targets, reduction=reduction)
    t_loss = F.binary_cross_entropy_with_logits(
        seq(tx)[:, 0], torch.tensor(targets, dtype=torch.float64), reduction=reduction
    )
    compare(model, loss, seq, t_loss)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_softmax_cross_entropy_matches_torch(reduction):
    rng, model, points, seq, tx = setup(4)
    targets = [rng.randrange(4) for _ in points]
    loss = softmax_cross_entropy([model(x) for x in points], targets, reduction=reduction)
    t_loss = F.cross_entropy(seq(tx), torch.tensor(targets), reduction=reduction)
    compare(model, loss, seq, t_loss)


EXTREME = [-1000.0, -50.0, 0.0, 50.0, 1000.0]


@needs_torch
@pytest.mark.parametrize("target", [0.0, 1.0, 0.25])
def test_bce_with_logits_at_extreme_logits(target):
    logits = [Value(x) for x in EXTREME]
    loss = bce_with_logits(logits, [target] * len(logits))
    loss.backward()
    tx = torch.tensor(EXTREME, dtype=torch.float64, requires_grad=True)
    t_loss = F.binary_cross_entropy_with_logits(tx, torch.full_like(tx, target))
    t_loss.backward()
    assert math.isfinite(loss.data)
    assert loss.data == pytest.approx(t_loss.item(), rel=1e-12)
    grads = [x.grad for x in logits]
    assert all(math.isfinite(g) for g in grads)
    assert grads == pytest.approx(tx.grad.tolist(), rel=1e-12, abs=1e-300)


def test_bce_gradient_at_zero_logit_is_half_minus_target():
    x = Value(0.0)
    bce_with_logits([x], [1.0]).backward()
    assert x.grad == pytest.approx(0.5 - 1.0, abs=1e-15)  # sigmoid(0) - y, by hand


@needs_torch
@pytest.mark.parametrize(
    "row",
    [[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -999.0], [1000.0, 1000.0, 1000.0], [0.0, 1000.0, -1000.0]],
)
def test_softmax_cross_entropy_at_extreme_logits(row):
    for target in range(3):
        logits = [Value(z) for z in row]
        loss = softmax_cross_entropy([logits], [target])
        loss.backward()
        tz = torch.tensor([row], dtype=torch.float64, requires_grad=True)
        t_loss = F.cross_entropy(tz, torch.tensor([target]))
        t_loss.backward()
        assert math.isfinite(loss.data)
        assert loss.data == pytest.approx(t_loss.item(), rel=1e-12, abs=1e-12)
        grads = [z.grad for z in logits]
        assert all(math.isfinite(g) for g in grads)
        assert grads == pytest.approx(tz.grad[0].tolist(), rel=1e-12, abs=1e-12)


def test_mse_by_hand():
    # ((3 - 1)^2 + (0 - 2)^2) / 2 = 4; d/dp1 = 2 (3 - 1) / 2 = 2
    p = [Value(3.0), Value(0.0)]
    loss = mse(p, [1.0, 2.0])
    loss.backward()
    assert loss.data == 4.0 and p[0].grad == 2.0 and p[1].grad == -2.0


def test_max_margin_is_zero_beyond_the_margin():
    scores = [Value(2.0), Value(-3.0)]
    loss = max_margin(scores, [1, -1])
    loss.backward()
    assert loss.data == 0.0 and [s.grad for s in scores] == [0.0, 0.0]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mse([Value(1.0)], [1.0, 2.0]), "1 prediction but 2 targets"),
        (lambda: mse([], []), "no examples"),
        (lambda: max_margin([Value(1.0)], [0]), "-1 or \\+1"),
        (lambda: bce_with_logits([Value(1.0)], [1.5]), "in \\[0, 1\\]"),
        (lambda: bce_with_logits([Value(1.0)], [math.nan]), "finite"),
        (lambda: softmax_cross_entropy([[Value(1.0), Value(2.0)]], [2]), "class indices 0..1"),
        (lambda: softmax_cross_entropy([[]], [0]), "at least one class"),
        (lambda: mse([Value(1.0)], [1.0], reduction="max"), "unknown reduction"),
        (lambda: l2_penalty([], 1e-4), "at least one parameter"),
    ],
)
def test_bad_arguments_say_what_is_allowed(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- log-sum-exp, and every loss traced by chainrule.compile -------------------------------------------

import numpy as np  # noqa: E402

import chainrule  # noqa: E402
from chainrule.losses import logsumexp  # noqa: E402

HUGE_ROWS = [[1e308, -1e308, 0.0], [-1e308, -1e308, 5.0], [800.0, 799.0, -800.0], [-800.0, -801.0, -2000.0],
             [1.0, 2.0, 3.0], [7.0, 7.0, 7.0]]


@needs_torch
@pytest.mark.parametrize("row", HUGE_ROWS)
def test_logsumexp_matches_torch_at_any_size(row):
    values = [Value(z) for z in row]
    out = logsumexp(values)
    out.backward()
    t = torch.tensor(row, dtype=torch.float64, requires_grad=True)
    t_out = torch.logsumexp(t, 0)
    t_out.backward()
    assert out.data == pytest.approx(t_out.item(), rel=1e-15)
    assert [v.grad for v in values] == pytest.approx(t.grad.tolist(), rel=1e-13, abs=1e-300)


@needs_torch
def test_logaddexp_keeps_infinities_and_nan_as_torch_does():
    cases = [(math.inf, math.inf), (-math.inf, -math.inf), (math.inf, -math.inf), (-math.inf, 3.0),
             (math.nan, 1.0), (1.0, math.nan), (0.0, 0.0)]
    for a, b in cases:
        expected = torch.logaddexp(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
        got = Value(a).logaddexp(b).data
        assert (math.isnan(got) and math.isnan(expected.item())) or got == expected.item(), (a, b)


@needs_torch
def test_softmax_cross_entropy_with_class_probabilities_matches_torch():
    rng, model, points, seq, tx = setup(4)
    probabilities = [[rng.random() for _ in range(4)] for _ in points]
    probabilities = [[p / sum(row) for p in row] for row in probabilities]
    loss = softmax_cross_entropy([model(x) for x in points], probabilities)
    t_loss = F.cross_entropy(seq(tx), torch.tensor(probabilities, dtype=torch.float64))
    compare(model, loss, seq, t_loss)


def example_losses(model):
    """Per-example losses a user compiles: the targets are columns (traced Values)."""
    def cross_entropy(x0, x1, x2, c0, c1, c2, c3):
        return softmax_cross_entropy([model([x0, x1, x2])], [[c0, c1, c2, c3]])

    def squared(x0, x1, x2, y):
        return mse([model([x0, x1, x2])[0]], [y])

    def binary(x0, x1, x2, y):
        return bce_with_logits([model([x0, x1, x2])[0]], [y])

    def margin(x0, x1, x2, y):
        return max_margin([model([x0, x1, x2])[0]], [y])

    return {"cross_entropy": cross_entropy, "mse": squared, "bce": binary, "hinge": margin}


def torch_example_losses(logits, targets, classes):
    return {
        "cross_entropy": F.cross_entropy(logits, classes, reduction="none"),
        "mse": F.mse_loss(logits[:, 0], targets, reduction="none"),
        "bce": F.binary_cross_entropy_with_logits(logits[:, 0], (targets > 0).double(), reduction="none"),
        "hinge": (1 - torch.where(targets > 0, 1.0, -1.0).double() * logits[:, 0]).clamp(min=0),
    }


@needs_torch
@pytest.mark.parametrize("scale", [1.0, 1e3, 1e150])
@pytest.mark.parametrize("name", ["cross_entropy", "mse", "bce", "hinge"])
def test_every_loss_traces_and_its_compiled_values_and_gradients_match_torch(name, scale):
    """Huge weights give logits of 1e3 and 1e150: the compiled cross-entropy stays finite, as torch's."""
    rng, model, points, seq, tx = setup(4, n=12, activation="linear")
    for layer in model.layers[-1:]:
        for neuron in layer.neurons:
            for w in neuron.w:
                w.data *= scale
    seq = torch_model(model)
    params = model.parameters()
    classes = [rng.randrange(4) for _ in points]
    signs = [rng.choice([-1.0, 1.0]) for _ in points]
    logits = seq(tx)
    expected = torch_example_losses(logits, torch.tensor(signs, dtype=torch.float64), torch.tensor(classes))[name]
    expected.sum().backward()
    fn = example_losses(model)[name]
    compiled = chainrule.compile(fn, params)
    columns = [np.array([p[i] for p in points]) for i in range(3)]
    if name == "cross_entropy":
        columns += [np.array([1.0 if c == k else 0.0 for c in classes]) for k in range(4)]
    elif name == "bce":
        columns.append(np.array([1.0 if s > 0 else 0.0 for s in signs]))
    else:
        columns.append(np.array(signs))
    values, grads = compiled.value_and_grad(*columns)
    assert np.isfinite(values).all()  # as torch's (checked next): 1e150 squared is 1e300, still finite
    np.testing.assert_allclose(values, expected.detach().numpy(), rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(grads, torch_grads(seq), rtol=1e-9, atol=1e-12 * scale)


@needs_torch
def test_a_compiled_whole_batch_loss_follows_the_logits_wherever_they_move():
    """Compiled over the whole batch (no inputs), the loss reads no number at trace time: scaling the
    weights by 1e3 afterwards must give torch's finite loss, not an overflow from a frozen shift."""
    rng, model, points, seq, tx = setup(4, n=6, activation="linear")
    classes = [rng.randrange(4) for _ in points]
    params = model.parameters()
    compiled = chainrule.compile(lambda: softmax_cross_entropy([model(x) for x in points], classes), params)
    for p in params:
        p.data *= 1e3
    seq = torch_model(model)
    t_loss = F.cross_entropy(seq(tx), torch.tensor(classes))
    t_loss.backward()
    values, grads = compiled.value_and_grad()
    assert values[0] == pytest.approx(t_loss.item(), rel=1e-12)
    np.testing.assert_allclose(grads, torch_grads(seq), rtol=1e-9, atol=1e-9)


@needs_torch
@pytest.mark.parametrize("a, b", [(1.0, 2.0), (-3.0, 40.0), (700.0, 699.5), (0.0, 0.0)])
def test_logaddexp_second_derivatives_match_torch(a, b):
    """The op's pullback on Values (create_graph=True) is differentiable again: the Hessian as torch's."""
    x, y = Value(a), Value(b)
    gx, gy = chainrule.grad(x.logaddexp(y), [x, y], create_graph=True)
    hessian = [[h.data for h in chainrule.grad(g, [x, y])] for g in (gx, gy)]
    t = torch.tensor([a, b], dtype=torch.float64)
    expected = torch.autograd.functional.hessian(lambda v: torch.logaddexp(v[0], v[1]), t)
    assert [gx.data, gy.data] == pytest.approx(torch.softmax(t, 0).tolist(), rel=1e-14)
    assert np.allclose(hessian, expected.numpy(), rtol=1e-12, atol=1e-300)


@needs_torch
@pytest.mark.parametrize("gap", [709.0, 709.79, 710.0, 800.0, 1e4])
def test_logaddexp_second_derivatives_stay_finite_however_far_apart_the_logits_are(gap):
    """Past 709.78 apart e^(b - a) overflows, and PyTorch's own form g / (1 + e^(b - a)) has slope inf x 0 = nan
    (torch.autograd on torch.logaddexp gives nan there); its cross-entropy (logsumexp) stays finite, and so does
    chainrule's: the Hessian w_a w_b [[1, -1], [-1, 1]] with w = the softmax weights, as torch.func.hessian of
    torch.logsumexp gives."""
    a, b = 0.0, -gap
    x, y = Value(a), Value(b)
    gx, gy = chainrule.grad(x.logaddexp(y), [x, y], create_graph=True)
    hessian = [[h.data for h in chainrule.grad(g, [x, y])] for g in (gx, gy)]
    expected = torch.func.hessian(lambda v: torch.logsumexp(v, 0))(torch.tensor([a, b], dtype=torch.float64))
    assert all(math.isfinite(h) for row in hessian for h in row)
    np.testing.assert_allclose(hessian, expected.numpy(), rtol=1e-12, atol=1e-300)
    assert chainrule.hessian(lambda p, q: p.logaddexp(q), argnums=(0, 1))(a, b) == tuple(map(tuple, hessian))
