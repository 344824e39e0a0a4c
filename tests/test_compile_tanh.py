"""Compiled replay on tanh layers and on an expression of tanh, sigmoid, log and a square: the paths of the replay
written for speed.

tanh, sigmoid, log, exp and the operators write their forward results straight into the store (`out=`); the
pullbacks of tanh, sigmoid, log and a constant power write the gradient of a sole operand's rows in place
(those rows, and the inputs' rows, are then not zeroed before the backward pass), as do the operators'
(multiplication, subtraction, negation), which also skip an operand that needs no gradient; the order check
takes the smallest |sum| of each row a block of rows at a time. None of this may change a number.
References: the same rules returning new arrays (NumPy's operators, the float rules' order of products), the
reduction over the whole array, PyTorch batched float64, and the eager engine example by example with rows
of nan, inf and zeros.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

import chainrule
from chainrule import Value
from chainrule.datasets import moons
from chainrule.kernels import (
    log_array,
    log_array_pullback,
    multiply_array_pullback,
    negate_array_pullback,
    power_array,
    power_array_pullback,
    sigmoid_array,
    sigmoid_array_pullback,
    subtract_array_pullback,
    tanh_array,
    tanh_array_pullback,
    ufunc_form,
)
from chainrule.nn import MLP
from chainrule.ops import MUL, NEG, SUB
from chainrule.replay import BLOCK, HALF_MAX, MatrixSum, _operands
from compile_programs import EXTREMES, eager_value_and_grad, torch_mlp_value_and_grad
from reference_torch import needs_torch

SIZES = [16, 16, 1]


def bits(array) -> bytes:
    return np.ascontiguousarray(array).tobytes()


def awkward_rows(seed: int) -> np.ndarray:
    """Eight rows of 60: ordinary numbers, the compile tests' extremes (nan, +-inf, +-0, subnormals, huge)
    and tanh's and sigmoid's saturation bands."""
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((8, 60)) * 3.0
    edges = EXTREMES + [18.5, 19.05, -19.1, 20.0, -40.0, 36.8, -709.9, 1.0 - 2.0 ** -45]
    rows[0, :len(edges)] = edges
    rows[1, :len(edges)] = edges[::-1]
    return rows


@pytest.mark.parametrize("kernel", [tanh_array, sigmoid_array, log_array], ids=lambda k: k.name)
def test_kernels_written_into_the_store_are_the_returned_ones_bit_for_bit(kernel):
    """In the saturation bands each kernel takes the float rule's class: written into out= or returned, the
    same bits."""
    with np.errstate(all="ignore"):
        for a in (awkward_rows(1), np.abs(awkward_rows(2))):
            returned = kernel(a.copy())
            out = np.full_like(a, 7.0)
            assert kernel(a, out=out) is out
            assert bits(out) == bits(returned)


PULLBACKS = {
    "tanh": (tanh_array_pullback, lambda g, a, out: g * (1.0 - out * out)),
    "sigmoid": (sigmoid_array_pullback, lambda g, a, out: g * (1.0 - out) * out),
    "log": (log_array_pullback, lambda g, a, out: g / a),
}


@pytest.mark.parametrize("name", sorted(PULLBACKS))
def test_pullbacks_written_in_place_are_the_float_rules_bit_for_bit(name):
    """The float rule's products in its order, on arrays: written into the input's gradient rows (whatever
    they held) or returned, the same bits, with nan, inf and signed zeros in the gradient and the operands."""
    pullback, rule = PULLBACKS[name]
    with np.errstate(all="ignore"):
        a = awkward_rows(3)
        out = {"tanh": np.tanh, "sigmoid": sigmoid_array, "log": np.log}[name](a)
        for g in (awkward_rows(4), np.where(awkward_rows(5) > 2.0, math.inf, -0.0)):
            expected = rule(g, a, out)
            (returned,) = pullback(g, a, out)
            into = np.full_like(g, 7.0)
            (written,) = pullback(g, a, out, into=into)
            assert written is into
            assert bits(returned) == bits(expected) and bits(written) == bits(expected)


@pytest.mark.parametrize("k", [2.0, 3.0, 1.0, 0.5, -1.0, 0.0])
def test_constant_powers_in_place_are_the_returned_ones_bit_for_bit(k):
    """(k a^(k-1)) g written in place or returned; a zero exponent masks the slope: nothing returned, and the
    rows written in place are exactly 0 even under an inf gradient."""
    with np.errstate(all="ignore"):
        a, g = awkward_rows(6), np.where(awkward_rows(7) > 3.0, math.inf, awkward_rows(8))
        (returned,) = power_array_pullback(g, a, k)
        into = np.full_like(g, 7.0)
        power_array_pullback(g, a, k, into=into)
        if k == 0.0:
            assert returned is None and bits(into) == bits(np.zeros_like(g))
            return
        assert bits(returned) == bits((k * power_array(a, k - 1.0)) * g) and bits(into) == bits(returned)
        written = np.full_like(a, 7.0)
        assert power_array(a, k, out=written) is written and bits(written) == bits(power_array(a, k))


def test_operators_written_into_the_store_are_numpys_operators_bit_for_bit():
    """A uniform operand arrives as a column broadcast over the examples; nan keeps its sign as the operator
    gives it."""
    a, b, column = awkward_rows(9), awkward_rows(10), awkward_rows(11)[:, :1]
    operators = {"add": np.ndarray.__add__, "subtract": np.ndarray.__sub__, "multiply": np.ndarray.__mul__,
                 "divide": np.ndarray.__truediv__}
    with np.errstate(all="ignore"):
        for name, operator in operators.items():
            for x, y in ((a, b), (column, b), (a, column)):
                out = np.full_like(a, 7.0)
                assert ufunc_form(name)(x, y, out=out) is out
                assert bits(out) == bits(operator(x, y))
        out = np.full_like(a, 7.0)
        assert bits(ufunc_form("negative")(a, out=out)) == bits(-a)


def tanh_mlp_loss(n: int):
    """The hinge loss of MLP(2, [16, 16, 1]) with tanh between the layers on one point, a 1/n share."""
    model = MLP(2, SIZES, rng=random.Random(11), activation="tanh")
    params = model.parameters()

    def loss(x, y, label):
        return (1.0 - label * model([x, y])[0]).relu() * (1.0 / n)

    return params, loss


def expression_loss(n: int):
    """bench_compile's expression (tanh, sigmoid, a square and log over shared subterms), a 1/n share."""
    params = [Value(v) for v in (0.8, -0.6, 1.3, 0.4)]
    a, b, c, d = params

    def loss(x, y):
        u = a * x + b * y
        v = u.tanh()
        w = (c * u - y).sigmoid()
        s = v * w + d * v * v
        return ((s - y) ** 2 + (w - v).relu() + (s * s + 1.0).log()) * (1.0 / n)

    return params, loss


def points(n: int, seed: int, with_label: bool = True) -> list:
    xy, labels = moons(n, 0.1, seed)
    columns = [np.array([p[0] for p in xy]), np.array([p[1] for p in xy])]
    return columns + [np.array(labels, float)] if with_label else columns


@needs_torch
def test_tanh_layers_equal_pytorch_on_repeated_calls():
    """The layers' pre-activations get their gradients in place and are not zeroed first: a second call on
    other points and parameters must not see the first call's numbers; saturated neurons (weights x 30) pass
    back PyTorch's gradients too."""
    n = 300
    params, loss = tanh_mlp_loss(n)
    compiled = chainrule.compile(loss, params)
    theta = compiled.parameter_values()
    for scale, seed in ((1.0, 1), (-0.5, 2), (30.0, 3), (1.0, 4)):
        columns = points(n, seed)
        values, grads = compiled.value_and_grad(*columns, params=scale * theta)
        expected_values, expected_grads = torch_mlp_value_and_grad(scale * theta, columns, n, SIZES, "tanh")
        np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(grads, expected_grads, rtol=1e-9, atol=1e-13)


AWKWARD = [(math.nan, 0.3), (math.inf, 0.3), (-math.inf, 1.0), (0.0, -0.0), (1e300, -1e300), (5e-324, 0.0),
           (19.05, -19.1)]


@pytest.mark.parametrize("row", AWKWARD, ids=[f"{x},{y}" for x, y in AWKWARD])
@pytest.mark.parametrize("program", ["tanh MLP", "expression"])
def test_rows_of_nan_inf_and_zeros_equal_the_eager_engine(program, row):
    """Three ordinary points and an awkward one, after a first call that leaves its numbers in the stores:
    values and gradients with eager's nan and inf classes."""
    n = 4
    if program == "tanh MLP":
        params, loss = tanh_mlp_loss(n)
        columns = [np.append(c, v) for c, v in zip(points(3, 8), [*row, 1.0])]
        first = points(n, 9)
    else:
        params, loss = expression_loss(n)
        columns = [np.append(c, v) for c, v in zip(points(3, 8, False), row)]
        first = points(n, 9, False)
    compiled = chainrule.compile(loss, params)
    compiled.value_and_grad(*first)
    values, grads = compiled.value_and_grad(*columns)
    expected_values, expected_grads = eager_value_and_grad(loss, params, columns)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12, atol=1e-15, equal_nan=True)
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-10, atol=1e-14, equal_nan=True)


def test_a_masked_power_sets_its_sole_operands_gradient_to_zero_on_every_call():
    """h ** 0 is h's only reader: its rows of the gradient store are not zeroed before the pass, so the masked
    slope must write its exact 0 there itself, or a second call would pass on the first call's gradient."""
    w, v = Value(0.7), Value(-1.3)

    def loss(x):
        h = (w * x).tanh()
        return h ** 0 + v * x

    compiled = chainrule.compile(loss, [w, v])
    for column in (np.array([0.5, -2.0, 3.0]), np.array([1.5, 1e300, -0.0])):
        values, grads = compiled.value_and_grad(column)
        expected_values, expected_grads = eager_value_and_grad(loss, [w, v], [column])
        assert bits(values) == bits(expected_values)
        np.testing.assert_allclose(grads, expected_grads, rtol=1e-12, equal_nan=True)
        assert grads[0] == 0.0


# --- the operators' pullbacks in place, and the order check by blocks (2026-12-07) -------------------------


OPERATOR_RULES = {  # the float rules, which the replay ran on arrays before the operators had array forms
    "multiply": (multiply_array_pullback, MUL.pullback),
    "subtract": (subtract_array_pullback, SUB.pullback),
}


@pytest.mark.parametrize("name", sorted(OPERATOR_RULES))
def test_operator_pullbacks_in_place_are_the_float_rules_bit_for_bit(name):
    """Each operand's gradient written into its rows (whatever they held), returned, or not wanted (None, and
    its rows untouched), in every combination and with a uniform operand as a column: the float rule's bits."""
    pullback, rule = OPERATOR_RULES[name]
    a, b, column = awkward_rows(12), awkward_rows(13), awkward_rows(14)[:, :1]
    with np.errstate(all="ignore"):
        for g in (awkward_rows(15), np.where(awkward_rows(16) > 2.0, math.inf, -0.0)):
            for x, y in ((a, b), (column, b), (a, column)):
                expected = rule(g, x, y, None)
                for first, second in itertools.product(("into", "returned", "unwanted"), repeat=2):
                    into = [np.full_like(g, 7.0) if kind == "into" else None if kind == "returned" else False
                            for kind in (first, second)]
                    got = pullback(g, x, y, None, into=into)
                    for kind, target, result, want in zip((first, second), into, got, expected):
                        if kind == "into":
                            assert bits(target) == bits(np.broadcast_to(want, g.shape))
                        elif kind == "returned":
                            assert bits(np.broadcast_to(result, g.shape)) == bits(np.broadcast_to(want, g.shape))
                        else:
                            assert result is None


def test_negation_pullback_in_place_is_the_float_rule_bit_for_bit():
    g = awkward_rows(17)
    into = np.full_like(g, 7.0)
    (written,) = negate_array_pullback(g, None, None, into=into)
    assert written is into and bits(into) == bits(NEG.pullback(g, None, None)[0])
    assert bits(negate_array_pullback(g, None, None)[0]) == bits(-g)


def a_layer_sum() -> MatrixSum:
    """A MatrixSum of a compiled tanh MLP (its order check is what the tests below call)."""
    params, loss = tanh_mlp_loss(4)
    compiled = chainrule.compile(loss, params)
    return next(i for i in compiled._instructions if isinstance(i, MatrixSum) and i.written is None)


@pytest.mark.parametrize("shape", [(1, 5), (7, 40_000), (50, 1000), (33, 993), (3, 0), (64, 1)])
def test_the_order_checks_smallest_sizes_by_blocks_are_the_whole_arrays(shape):
    """The per-row min |out| taken a block of rows at a time (one row a block when a row is longer than the
    block, a last block that is shorter) is the reduction over the whole array, bit for bit: nan in a row
    gives nan, an empty row the initial HALF_MAX, -0.0 gives 0.0."""
    layer = a_layer_sum()
    out = np.random.default_rng(shape[0]).standard_normal(shape) * 1e3
    if out.size:
        out.flat[:: max(1, out.size // 9)] = [math.nan, -0.0, math.inf, -math.inf, 5e-324, 1e-300, 0.0, -3.0, 1e300,
                                             2.0][: len(out.flat[:: max(1, out.size // 9)])]
    for _ in range(2):  # the scratch block is kept between calls
        expected = np.abs(out).min(axis=1, initial=HALF_MAX)
        assert bits(layer._smallest_sizes(out)) == bits(expected)
    assert layer._smallest_sizes(out).shape == (shape[0],) and BLOCK // max(shape[1], 1) < 40_000


def test_a_cancelling_sum_in_the_last_block_is_recomputed_in_the_written_order():
    """24 sums over 3,000 examples: the order check takes them ten rows a block. The last sum is written
    a x + B + c z with a = 1e16, B = 1, c = -1e16: at x = z = 1 eager adds (1e16 + 1) - 1e16 = 0, where the
    matrix product (a x + c z) + B gives 1. Only a search of the last block finds it."""
    n, count = 3000, 24
    rng = random.Random(5)
    a = [Value(rng.uniform(-0.2, 0.2)) for _ in range(count - 1)] + [Value(1e16)]
    bias = [Value(rng.uniform(-0.2, 0.2)) for _ in range(count - 1)] + [Value(1.0)]
    c = [Value(rng.uniform(-0.2, 0.2)) for _ in range(count - 1)] + [Value(-1e16)]
    params = a + bias + c

    def loss(x, z):
        total = Value(0.0)
        for j in range(count):
            h = a[j] * x + bias[j] + c[j] * z
            total = total + h * h
        return total

    compiled = chainrule.compile(loss, params)
    generator = np.random.default_rng(6)
    x, z = generator.uniform(0.5, 1.5, n), generator.uniform(0.5, 1.5, n)
    x[-1] = z[-1] = 1.0
    assert BLOCK // n == 10
    values, _ = compiled.value_and_grad(x, z)
    for i in (0, n // 2, n - 1):
        expected = loss(Value(float(x[i])), Value(float(z[i]))).data
        np.testing.assert_allclose(values[i], expected, rtol=1e-12)


def test_first_writers_of_unzeroed_rows_give_eager_gradients_on_every_call():
    """Rows that several operands add into are not zeroed before the backward pass: the first writer (an
    operator's operand, a short sum's term) writes 0 + its gradient. A second call on rows of nan, inf and
    -0.0 must not see the first call's numbers, and per-example gradients must sum to the same."""
    w, a, b = Value(0.7), Value(-1.3), Value(0.4)

    def loss(x, y):
        h = (w * x).tanh()
        k = h * a - y
        s = h * k + (h - b) + k * y
        return s * s

    compiled = chainrule.compile(loss, [w, a, b])
    planned = [i for instruction in compiled._instructions for i in _operands(instruction) if i.first]
    terms = [t for instruction in compiled._instructions if isinstance(instruction, MatrixSum)
             for t in instruction.first_terms]
    assert planned and terms
    first = [np.array([0.5, -2.0, 3.0, 1.0]), np.array([1.0, 0.25, -1.5, 2.0])]
    second = [np.array([math.nan, 1e300, -0.0, 19.05]), np.array([0.3, -math.inf, 0.0, -0.0])]
    for columns in (first, second, first):
        values, grads = compiled.value_and_grad(*columns)
        expected_values, expected_grads = eager_value_and_grad(loss, [w, a, b], columns)
        np.testing.assert_allclose(values, expected_values, rtol=1e-12, equal_nan=True)
        np.testing.assert_allclose(grads, expected_grads, rtol=1e-12, equal_nan=True)
        per_example = compiled.per_example_grads(*columns)
        np.testing.assert_allclose(per_example.sum(axis=0), grads, rtol=1e-12, equal_nan=True)
