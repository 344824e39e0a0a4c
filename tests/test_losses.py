"""chainrule.losses against torch (float64): loss values and every parameter gradient, extreme logits."""

from __future__ import annotations

import math
import random

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

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


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_mse_matches_torch(reduction):
    rng, model, points, seq, tx = setup(1)
    targets = [rng.uniform(-1, 1) for _ in points]
    loss = mse([model(x)[0] for x in points], targets, reduction=reduction)
    t_loss = F.mse_loss(seq(tx)[:, 0], torch.tensor(targets, dtype=torch.float64), reduction=reduction)
    compare(model, loss, seq, t_loss)


def test_max_margin_matches_torch_hinge_with_l2():
    rng, model, points, seq, tx = setup(1, activation="relu")
    labels = [rng.choice([-1, 1]) for _ in points]
    loss = max_margin([model(x)[0] for x in points], labels) + l2_penalty(model.parameters(), 1e-4)
    ty = torch.tensor(labels, dtype=torch.float64)
    t_loss = F.relu(1 - ty * seq(tx)[:, 0]).mean() + 1e-4 * sum((p * p).sum() for p in seq.parameters())
    compare(model, loss, seq, t_loss)
    assert hinge is max_margin


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_bce_with_logits_matches_torch(reduction):
    rng, model, points, seq, tx = setup(1)
    targets = [rng.choice([0.0, 1.0, 0.3]) for _ in points]
    loss = bce_with_logits([model(x)[0] for x in points], targets, reduction=reduction)
    t_loss = F.binary_cross_entropy_with_logits(
        seq(tx)[:, 0], torch.tensor(targets, dtype=torch.float64), reduction=reduction
    )
    compare(model, loss, seq, t_loss)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_softmax_cross_entropy_matches_torch(reduction):
    rng, model, points, seq, tx = setup(4)
    targets = [rng.randrange(4) for _ in points]
    loss = softmax_cross_entropy([model(x) for x in points], targets, reduction=reduction)
    t_loss = F.cross_entropy(seq(tx), torch.tensor(targets), reduction=reduction)
    compare(model, loss, seq, t_loss)


EXTREME = [-1000.0, -50.0, 0.0, 50.0, 1000.0]


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
        (lambda: mse([Value(1.0)], [1.0, 2.0]), "1 predictions but 2 targets"),
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
