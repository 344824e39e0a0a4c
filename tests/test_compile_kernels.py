"""Compiled replay's kernels keep the eager engine's class on this machine's vector unit: a dense sweep of the
regions where tanh, sigmoid, exp and log change class (exactly +-1, 0, subnormal, +-inf) compares every replayed
value with the eager engine's (the C library's), and the issue's own witnesses: log(1 - tanh(x)) and tanh's
gradient in the gap where NumPy's AVX-512 tanh returns exactly 1.0 early (18.99 < x < 19.06)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule
from chainrule import Value
from chainrule.ops import value_class

SWEEPS = {
    "tanh": (lambda v: v.tanh(), [(18.0, 20.0), (-20.0, -18.0), (-1e-300, 1e-300)]),
    "sigmoid": (lambda v: v.sigmoid(), [(-746.0, -700.0), (30.0, 40.0)]),
    "exp": (lambda v: v.exp(), [(709.0, 710.0), (-746.0, -700.0)]),
    "log": (lambda v: v.log(), [(0.0, 2.3e-308), (1.0 - 2.0 ** -40, 1.0 + 2.0 ** -40), (1e308, 1.7976931348623157e308)]),
}


@pytest.mark.parametrize("name", SWEEPS)
def test_each_kernel_has_the_eager_class_across_its_edges(name: str) -> None:
    op, bands = SWEEPS[name]
    compiled = chainrule.compile(op, [])
    points = np.concatenate([np.linspace(start, stop, 100_001) for start, stop in bands]
                            + [np.nextafter(1.0, [0.0, 2.0]), [1.0, math.inf, -math.inf, math.nan, 0.0, -0.0]])
    replayed = compiled.values(points).tolist()
    wrong = [(x, got, op(Value(x)).data) for x, got in zip(points.tolist(), replayed)
             if value_class(got) != value_class(op(Value(x)).data)]
    assert wrong == [], f"{len(wrong)} points change class, e.g. {wrong[:3]}"


def test_log_of_one_minus_tanh_and_tanhs_slope_in_numpys_early_saturation_gap() -> None:
    xs = np.linspace(18.991, 19.06, 500)
    compiled = chainrule.compile(lambda x: (1.0 - x.tanh()).log(), [])
    eager = [(1.0 - Value(x).tanh()).log().data for x in xs.tolist()]
    assert all(math.isfinite(e) for e in eager)
    np.testing.assert_allclose(compiled.values(xs), eager, rtol=1e-12)
    w = Value(1.0)
    slope = chainrule.compile(lambda x: (x * w).tanh(), [w]).per_example_grads(xs)[:, 0]
    expected = [x * (1.0 - math.tanh(x) ** 2) for x in xs.tolist()]
    assert all(s > 0.0 for s in slope)  # about 1e-14 here, not 0
    np.testing.assert_allclose(slope, expected, rtol=1e-12)
