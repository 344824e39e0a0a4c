"""Compiled replay on wide tanh layers (a 64 x 64 MLP), against PyTorch and the eager engine.

The replay reuses its stores between calls, keeps each instruction's last arrays and zeroes only the
gradient rows that no layer's matrix product writes whole: a second call with other parameters and
other points must not see anything of the first. References: PyTorch batched float64 (torch.autograd,
torch.func.vmap(grad) for per-example gradients) and the eager engine example by example.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import chainrule
from chainrule.datasets import moons
from chainrule.losses import l2_penalty
from chainrule.nn import MLP
from compile_programs import eager_value_and_grad
from reference_torch import needs_torch, torch

SIZES = [64, 64, 1]
ALPHA = 1e-4


def model_and_loss(n: int):
    model = MLP(2, SIZES, activation="tanh", rng=random.Random(5))
    params = model.parameters()

    def loss(x, y, label):
        return (1.0 - label * model([x, y])[0]).relu() * (1.0 / n) + l2_penalty(params, ALPHA) * (1.0 / n)

    return model, params, loss


def batch(n: int, seed: int):
    points, labels = moons(n, 0.1, seed)
    return [np.array([p[0] for p in points]), np.array([p[1] for p in points]), np.array(labels, float)]


def torch_loss(flat, x, y, label, n):
    """The same loss in PyTorch, parameters as chainrule lists them (per neuron: its weights, its bias)."""
    h, start = torch.stack([x, y], dim=-1), 0
    for i, (k, j) in enumerate(zip([2, *SIZES], SIZES)):
        block = flat[start:start + j * (k + 1)].reshape(j, k + 1)
        start += j * (k + 1)
        h = h @ block[:, :k].T + block[:, k]
        if i < len(SIZES) - 1:
            h = torch.tanh(h)
    return torch.relu(1.0 - label * h[..., 0]) / n + ALPHA * (flat * flat).sum() / n


def torch_value_and_grad(theta, columns, n):
    flat = torch.tensor(theta, requires_grad=True)
    values = torch_loss(flat, *[torch.tensor(c) for c in columns], n)
    values.sum().backward()
    return values.detach().numpy(), flat.grad.numpy()


@needs_torch
def test_repeated_calls_on_wide_tanh_layers_agree_with_pytorch_each_time():
    n = 300
    _, params, loss = model_and_loss(n)
    compiled = chainrule.compile(loss, params)
    theta = compiled.parameter_values()
    for seed, scale in ((1, 1.0), (2, -0.5), (3, 2.0)):  # other points and parameters every call
        columns = batch(n, seed)
        values, grads = compiled.value_and_grad(*columns, params=theta * scale)
        expected_values, expected_grads = torch_value_and_grad(theta * scale, columns, n)
        np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(grads, expected_grads, rtol=1e-9, atol=1e-13)


def test_wide_tanh_layers_compiled_equal_the_eager_engine():
    n = 12
    _, params, loss = model_and_loss(n)
    columns = batch(n, 4)
    compiled = chainrule.compile(loss, params)
    compiled.value_and_grad(*batch(n, 9))  # a first call on other points leaves its numbers in the stores
    values, grads = compiled.value_and_grad(*columns)
    expected_values, expected_grads = eager_value_and_grad(loss, params, columns)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-10, atol=1e-14)


@needs_torch
def test_per_example_grads_on_wide_tanh_layers_equal_torch_func_vmap_grad():
    n = 50
    _, params, loss = model_and_loss(n)
    compiled = chainrule.compile(loss, params)
    theta = compiled.parameter_values()
    columns = batch(n, 6)
    ours = compiled.per_example_grads(*columns, params=theta)
    per_example = torch.func.vmap(torch.func.grad(torch_loss), in_dims=(None, 0, 0, 0, None))
    theirs = per_example(torch.tensor(theta), *[torch.tensor(c) for c in columns], n).numpy()
    assert ours.shape == (n, len(params))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(ours.sum(axis=0), compiled.value_and_grad(*columns, params=theta)[1],
                               rtol=1e-9, atol=1e-14)


@needs_torch
@pytest.mark.parametrize("n", [2, 7])
def test_tiny_batches_after_a_wide_one_start_from_clean_stores(n):
    _, params, loss = model_and_loss(n)
    compiled = chainrule.compile(loss, params)
    theta = compiled.parameter_values()
    compiled.value_and_grad(*batch(500, 8), params=theta)
    columns = batch(n, 10)
    values, grads = compiled.value_and_grad(*columns, params=theta)
    expected_values, expected_grads = torch_value_and_grad(theta, columns, n)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-9, atol=1e-13)
