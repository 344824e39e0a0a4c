"""chainrule.optim against torch.optim: 10 steps on the same model, data and loss give the same weights."""

from __future__ import annotations

import random

import pytest

from chainrule import Value
from chainrule.losses import mse
from chainrule.nn import MLP
from chainrule.optim import SGD, Adam, AdamW
from reference_torch import needs_torch, torch  # noqa: E402


def torch_params(model: MLP) -> list[torch.Tensor]:
    """One float64 leaf tensor per chainrule parameter (same order), so the update rules meet 1:1."""
    return [torch.tensor(p.data, dtype=torch.float64, requires_grad=True) for p in model.parameters()]


def run_both(make_ours, make_theirs, steps: int = 10, schedule=None):
    rng = random.Random(5)
    model = MLP(2, [4, 1], activation="tanh", rng=rng)
    points = [[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(6)]
    targets = [rng.uniform(-1, 1) for _ in points]
    tparams = torch_params(model)
    ours = make_ours(model.parameters())
    theirs = make_theirs(tparams)
    for k in range(steps):
        if schedule is not None:
            ours.lr = schedule(k)
            for group in theirs.param_groups:
                group["lr"] = schedule(k)
        ours.zero_grad()
        mse([model(x)[0] for x in points], targets).backward()
        ours.step()
        theirs.zero_grad()
        torch_mse(tparams, model, points, targets).backward()
        theirs.step()
    return [p.data for p in model.parameters()], [t.item() for t in tparams]


def torch_mse(tparams, model: MLP, points, targets) -> torch.Tensor:
    """The same network written with 0-d torch tensors, reading weights from `tparams`."""
    it = iter(tparams)
    layers = [[([next(it) for _ in n.w], next(it)) for n in layer.neurons] for layer in model.layers]
    total = torch.zeros((), dtype=torch.float64)
    for x, y in zip(points, targets):
        out = [torch.tensor(v, dtype=torch.float64) for v in x]
        for i, layer in enumerate(layers):
            sums = [b + sum(w * v for w, v in zip(ws, out)) for ws, b in layer]
            out = [torch.tanh(s) for s in sums] if i < len(layers) - 1 else sums
        total = total + (out[0] - y) ** 2
    return total / len(points)


CASES = {
    "sgd": (lambda p: SGD(p, lr=0.1), lambda t: torch.optim.SGD(t, lr=0.1)),
    "sgd-momentum": (lambda p: SGD(p, lr=0.1, momentum=0.9), lambda t: torch.optim.SGD(t, lr=0.1, momentum=0.9)),
    "sgd-dampening-wd": (
        lambda p: SGD(p, lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01),
        lambda t: torch.optim.SGD(t, lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01),
    ),
    "sgd-nesterov": (
        lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True),
        lambda t: torch.optim.SGD(t, lr=0.1, momentum=0.9, nesterov=True),
    ),
    "adam": (lambda p: Adam(p, lr=0.05), lambda t: torch.optim.Adam(t, lr=0.05)),
    "adam-custom": (
        lambda p: Adam(p, lr=0.02, betas=(0.3, 0.9), eps=1e-3, weight_decay=0.1),
        lambda t: torch.optim.Adam(t, lr=0.02, betas=(0.3, 0.9), eps=1e-3, weight_decay=0.1),
    ),
    "adamw": (lambda p: AdamW(p, lr=0.05), lambda t: torch.optim.AdamW(t, lr=0.05)),
}


@needs_torch
@pytest.mark.parametrize("case", list(CASES))
def test_ten_steps_match_torch_optim(case):
    make_ours, make_theirs = CASES[case]
    ours, theirs = run_both(make_ours, make_theirs)
    before = [p.data for p in MLP(2, [4, 1], activation="tanh", rng=random.Random(5)).parameters()]
    assert ours != pytest.approx(before, abs=1e-3)  # the steps really moved the weights
    assert ours == pytest.approx(theirs, rel=1e-11, abs=1e-13)


@needs_torch
def test_learning_rate_schedule_matches_torch():
    schedule = lambda k: 1.0 - 0.9 * k / 10  # noqa: E731 - the demo's schedule, shortened
    ours, theirs = run_both(
        lambda p: SGD(p, lr=1.0, momentum=0.5), lambda t: torch.optim.SGD(t, lr=1.0, momentum=0.5),
        schedule=schedule,
    )
    assert ours == pytest.approx(theirs, rel=1e-11, abs=1e-13)


def test_sgd_step_by_hand():
    p = Value(1.0)
    opt = SGD([p], lr=0.5, momentum=0.9)
    p.grad = 2.0
    opt.step()  # buffer = 2, p = 1 - 0.5 * 2 = 0
    assert p.data == 0.0
    opt.step()  # buffer = 0.9 * 2 + 2 = 3.8, p = 0 - 0.5 * 3.8
    assert p.data == pytest.approx(-1.9, abs=1e-15)
    opt.zero_grad()
    assert p.grad == 0.0


def test_adam_first_step_moves_each_weight_by_lr():
    # after bias correction the first step is lr * g / (|g| + eps): about lr in the sign of -g
    params = [Value(0.0), Value(0.0)]
    params[0].grad, params[1].grad = 3.0, -0.001
    Adam(params, lr=0.1).step()
    assert params[0].data == pytest.approx(-0.1, rel=1e-6)
    assert params[1].data == pytest.approx(0.1, rel=1e-4)


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: SGD([], lr=0.1), ValueError, "no parameters"),
        (lambda: SGD([Value(1.0)], lr=-1.0), ValueError, "learning rate"),
        (lambda: SGD([1.0], lr=0.1), TypeError, "must be Values"),
        (lambda: SGD([Value(1.0)], lr=0.1, nesterov=True), ValueError, "Nesterov"),
        (lambda: Adam([Value(1.0)], betas=(1.0, 0.9)), ValueError, "beta1"),
        (lambda: Adam([Value(1.0)], eps=-1.0), ValueError, "eps"),
    ],
)
def test_bad_settings_say_what_is_allowed(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_duplicate_parameter_is_rejected():
    p = Value(1.0)
    with pytest.raises(ValueError, match="twice"):
        SGD([p, p], lr=0.1)
