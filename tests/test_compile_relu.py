"""Compiled replay on wide relu layers (a 64 x 64 MLP): the paths of the replay that are written for speed.

relu's pullback writes the gradient of its input's rows in place when it is their only reader (those rows
are then not zeroed before the backward pass), and a layer's weights are read and their gradients added
through a view of the parameter store when they sit on a grid of it (each neuron's weights then its bias,
as `MLP` lists them). Neither may change a number. References: relu's pullback returning a new array
(the general path), the same graph compiled with the parameters in another order (no grid, gathers
instead of views), PyTorch batched float64 (its relu has slope 0 at 0) and the eager engine example by
example, with rows of nan, inf and exact zeros.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

import chainrule
from chainrule.datasets import moons
from chainrule.kernels import relu_array_pullback
from chainrule.nn import MLP
from compile_programs import eager_value_and_grad, torch_mlp_value_and_grad
from reference_torch import needs_torch

SIZES = [64, 64, 1]


def relu_mlp_loss(n: int):
    """The hinge loss of MLP(2, [64, 64, 1]) (relu between the layers) on one point, a 1/n share."""
    model = MLP(2, SIZES, rng=random.Random(7))
    params = model.parameters()

    def loss(x, y, label):
        return (1.0 - label * model([x, y])[0]).relu() * (1.0 / n)

    return params, loss


def points(n: int, seed: int) -> list:
    xy, labels = moons(n, 0.1, seed)
    return [np.array([p[0] for p in xy]), np.array([p[1] for p in xy]), np.array(labels, float)]


def bits(array) -> bytes:
    return np.ascontiguousarray(array).tobytes()


def test_relus_pullback_written_in_place_is_the_returned_one_bit_for_bit():
    """Slope 1 where relu's output is not 0 (a > 0, or nan, which relu passes), exactly 0 where it is 0
    or -0.0 (a <= 0) even from an inf or nan gradient above; both ways give the same bits, signs of zero
    included, with and without a non-finite gradient in the array."""
    rng = np.random.default_rng(3)
    out = np.maximum(0.0, rng.standard_normal((8, 50)))
    out[0, :6] = [0.0, -0.0, math.nan, 5e-324, math.inf, 0.0]
    for g in (rng.standard_normal((8, 50)), np.where(rng.random((8, 50)) < 0.1, math.inf, -1.5)):
        g[1, :4] = [-0.0, 0.0, -2.0, 3.0]
        if not np.isfinite(g).all():
            g[0, :6] = [math.nan, -math.inf, math.inf, math.nan, -1.0, math.inf]
        (returned,) = relu_array_pullback(g, None, out)
        into = np.full_like(g, 7.0)  # whatever the rows held before: every element is written
        (written,) = relu_array_pullback(g, None, out, into=into)
        assert written is into and bits(written) == bits(returned)
        keep = out != 0.0
        assert (returned[~keep] == 0.0).all()
        assert bits(returned[keep]) == bits(g[keep])


def test_parameters_in_another_order_give_the_same_numbers_bit_for_bit():
    """Reversed, the parameters' slots are neither a grid nor consecutive: gathers instead of views."""
    n = 200
    params, loss = relu_mlp_loss(n)
    columns = points(n, 2)
    in_order = chainrule.compile(loss, params)
    reversed_order = chainrule.compile(loss, params[::-1])
    theta = in_order.parameter_values() * 1.5
    values, grads = in_order.value_and_grad(*columns, params=theta)
    other_values, other_grads = reversed_order.value_and_grad(*columns, params=theta[::-1])
    assert bits(values) == bits(other_values)
    assert bits(grads) == bits(other_grads[::-1])
    each = in_order.per_example_grads(*columns, params=theta)
    assert bits(each) == bits(reversed_order.per_example_grads(*columns, params=theta[::-1])[:, ::-1])


@needs_torch
def test_dead_neurons_and_ties_at_zero_get_pytorchs_zero_gradient_on_repeated_calls():
    """A first-layer neuron with weights and bias 0 sums to exactly 0 for every point, and the point (0, 0)
    meets eight neurons with bias 0 at exactly 0: relu's slope there is 0 (PyTorch's), so their gradients
    are exactly 0 where PyTorch's are. A first call on other points and parameters writes the rows relu
    fills in place; the second must not see them."""
    n = 400
    params, loss = relu_mlp_loss(n)
    compiled = chainrule.compile(loss, params)
    theta = compiled.parameter_values()
    theta[:3] = 0.0  # neuron 0 of the first layer: w1 = w2 = b = 0
    theta[3 * np.arange(1, 9) + 2] = 0.0  # the biases of neurons 1 to 8
    compiled.value_and_grad(*points(n, 5), params=-0.5 * theta)
    columns = points(n, 6)
    for column in columns[:2]:
        column[:10] = 0.0  # ten points at (0, 0)
    values, grads = compiled.value_and_grad(*columns, params=theta)
    expected_values, expected_grads = torch_mlp_value_and_grad(theta, columns, n, SIZES, "relu")
    np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-9, atol=1e-13)
    assert (expected_grads[:3] == 0.0).all()
    assert (grads[expected_grads == 0.0] == 0.0).all()


AWKWARD = [(math.nan, 0.3), (math.inf, 0.3), (-math.inf, 1.0), (0.0, -0.0), (1e300, -1e300), (5e-324, 0.0)]


@pytest.mark.parametrize("row", AWKWARD, ids=[f"{x},{y}" for x, y in AWKWARD])
def test_rows_of_nan_inf_and_zeros_equal_the_eager_engine(row):
    """Three ordinary points and an awkward one: values and gradients with eager's nan and inf classes
    (a masked slope stays exactly 0 under an inf gradient from above; relu passes a nan)."""
    n = 4
    params, loss = relu_mlp_loss(n)
    columns = [np.append(c, v) for c, v in zip(points(3, 8), [*row, 1.0])]
    compiled = chainrule.compile(loss, params)
    compiled.value_and_grad(*points(n, 9))  # a first call leaves its numbers in the stores
    values, grads = compiled.value_and_grad(*columns)
    expected_values, expected_grads = eager_value_and_grad(loss, params, columns)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15, equal_nan=True)
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-10, atol=1e-14, equal_nan=True)
