"""`CompiledFunction.per_example_grads(*columns, params=None)`: the gradient of each example's value, an (N, P)
array, against the eager engine example by example and against `torch.func.vmap(torch.func.grad(...))`."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule
from chainrule import Value

WIDTH = 6


def loss(p, x, y, label):
    """A relu layer of WIDTH neurons, a linear read-out, a logistic loss and a term in tanh: the same Python
    for chainrule Values (p a list) and torch tensors (p a 1-D tensor)."""
    score = p[3 * WIDTH]
    for j in range(WIDTH):
        hidden = (p[j] * x + p[WIDTH + j] * y + p[2 * WIDTH + j]).relu()
        score = score + p[3 * WIDTH + 1 + j] * hidden
    margin = -label * score
    return (margin.exp() + 1.0).log() + (x * p[0]).tanh() * 0.1


P = 4 * WIDTH + 1
rng = np.random.default_rng(7)
THETA = rng.normal(size=P)
XS, YS = rng.normal(size=40), rng.normal(size=40)
LABELS = np.sign(rng.normal(size=40))
XS[3], YS[5] = 0.0, 25.0  # a relu at its kink for some neurons, a saturated tanh


def compiled():
    params = [Value(float(t)) for t in THETA]
    return chainrule.compile(lambda x, y, label: loss(params, x, y, label), params), params


def test_per_example_grads_are_eager_example_by_example() -> None:
    fn, params = compiled()
    found = fn.per_example_grads(XS, YS, LABELS)
    assert found.shape == (40, P)
    for n, (x, y, label) in enumerate(zip(XS, YS, LABELS)):
        for p in params:
            p.grad = 0.0
        loss(params, Value(float(x)), Value(float(y)), Value(float(label))).backward()
        np.testing.assert_allclose(found[n], [p.grad for p in params], rtol=1e-12, atol=1e-14)
    # the rows add up to value_and_grad's gradient of the sum, and params= replaces .data
    _, total = fn.value_and_grad(XS, YS, LABELS)
    np.testing.assert_allclose(found.sum(axis=0), total, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fn.per_example_grads(XS, YS, LABELS, params=THETA * 2.0),
                               _per_example_by_eager(THETA * 2.0), rtol=1e-12, atol=1e-14)


def _per_example_by_eager(theta):
    rows = []
    for x, y, label in zip(XS, YS, LABELS):
        values = [Value(float(t)) for t in theta]
        out = loss(values, Value(float(x)), Value(float(y)), Value(float(label)))
        rows.append([g.data for g in chainrule.grad(out, values)])
    return np.array(rows)


def test_per_example_grads_match_torch_func_vmap_of_grad() -> None:
    torch = pytest.importorskip("torch")
    fn, _ = compiled()
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    expected = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0, 0))(t(THETA), t(XS), t(YS), t(LABELS))
    np.testing.assert_allclose(fn.per_example_grads(XS, YS, LABELS), expected.numpy(), rtol=1e-11, atol=1e-14)


def test_a_parameter_the_output_does_not_reach_and_an_output_without_parameters() -> None:
    a, unused = Value(2.0), Value(5.0)
    fn = chainrule.compile(lambda x: (x * a).sin(), [a, unused])
    xs = np.array([0.5, -1.0, math.inf])
    found = fn.per_example_grads(xs)
    assert found[:, 1].tolist() == [0.0, 0.0, 0.0]
    assert found[:2, 0].tolist() == pytest.approx([0.5 * math.cos(1.0), -math.cos(-2.0)], rel=1e-15)
    assert math.isnan(found[2, 0])  # sin(inf) is nan, and so is its slope, as eager
    assert chainrule.compile(lambda x: x * 2.0, []).per_example_grads(xs).shape == (3, 0)
    with pytest.raises(TypeError, match="takes 1 columns"):
        fn.per_example_grads([1.0, 2.0, 3.0], [1.0])
    with pytest.raises(ValueError, match="shape"):
        fn.per_example_grads(xs, params=[1.0])


def tied(p, x, y):
    """Every path of the per-example backward: a layer (one matrix product) whose sums share a weight
    (p[0] in every neuron, twice in the first), a short sum run term by term, uniform nodes computed from
    parameters alone (an exp and a sum of squares, which every example's gradient gets), and a parameter
    beside the examples outside a sum (sin(p[5] x)). The same Python for Values and torch tensors."""
    a = (p[0] * x + p[1] * y + p[0] * x + p[2]).tanh()
    b = (p[0] * x + p[0] * y + p[3] * x + p[4]).sigmoid()
    d = (p[1] * x + p[3] * y + p[0] * x + p[5]).tanh()
    c = (a * p[1] + b * p[2] + d * p[3]).exp()
    penalty = (p[0] * p[0] + p[3] * p[3] + p[4].exp()) * 0.01
    return c + (p[5] * x).sin() + penalty


def test_shared_weights_short_sums_and_parameter_only_terms_match_torch_func_vmap_of_grad() -> None:
    torch = pytest.importorskip("torch")
    theta = np.array([0.3, -0.7, 0.5, 1.1, -0.2, 0.9])
    params = [Value(float(t)) for t in theta]
    fn = chainrule.compile(lambda x, y: tied(params, x, y), params)
    found = fn.per_example_grads(XS, YS)
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    expected = torch.func.vmap(torch.func.grad(tied), in_dims=(None, 0, 0))(t(theta), t(XS), t(YS)).numpy()
    np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(found.sum(axis=0), fn.value_and_grad(XS, YS)[1], rtol=1e-12, atol=1e-13)
    # called again on fewer examples, the reused stores start from zero
    np.testing.assert_allclose(fn.per_example_grads(XS[:3], YS[:3]), expected[:3], rtol=1e-12, atol=1e-14)
    # an output of the parameters alone: every example gets its gradient
    only = chainrule.compile(lambda x: (params[0] * params[3]).sin() + params[1], params)
    slope = [math.cos(theta[0] * theta[3]) * theta[3], 1.0, 0.0, math.cos(theta[0] * theta[3]) * theta[0], 0.0, 0.0]
    np.testing.assert_allclose(only.per_example_grads(XS[:4]), [slope] * 4, rtol=1e-15, atol=0)
