"""chainrule.datasets.moons: shape, labels, determinism per seed, geometry, validation."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from chainrule.datasets import moons


def test_shape_and_labels():
    points, labels = moons(100, 0.1, 0)
    assert len(points) == len(labels) == 100
    assert all(len(p) == 2 and all(isinstance(c, float) for c in p) for p in points)
    assert set(labels) == {-1, 1}
    assert labels.count(-1) == 50 and labels.count(1) == 50


def test_odd_count_gives_the_extra_point_to_the_lower_moon():
    _, labels = moons(7, 0.0, 0)
    assert labels.count(-1) == 3 and labels.count(1) == 4


def test_deterministic_per_seed_and_global_random_untouched():
    state = random.getstate()
    assert moons(50, 0.2, 3) == moons(50, 0.2, 3)
    assert moons(50, 0.2, 3) != moons(50, 0.2, 4)
    assert random.getstate() == state


def test_without_noise_points_lie_on_the_two_half_circles():
    points, labels = moons(40, 0.0, 0)
    for (x, y), label in zip(points, labels):
        if label == -1:  # upper moon: unit circle around (0, 0), y >= 0
            assert math.hypot(x, y) == pytest.approx(1.0) and y >= -1e-12
        else:  # lower moon: unit circle around (1, 0.5), y <= 0.5
            assert math.hypot(x - 1.0, y - 0.5) == pytest.approx(1.0) and y <= 0.5 + 1e-12
    # the ends of each half circle are present: angles 0 and pi
    upper = {(round(x, 9), round(y, 9)) for (x, y), label in zip(points, labels) if label == -1}
    assert (1.0, 0.0) in upper and (-1.0, 0.0) in upper


def test_noise_has_the_requested_spread():
    noisy, noisy_labels = moons(2000, 0.3, 9)
    def off_circle(p, label):
        cx, cy = (0.0, 0.0) if label == -1 else (1.0, 0.5)
        return math.hypot(p[0] - cx, p[1] - cy) - 1.0
    spread = statistics.pstdev(off_circle(p, label) for p, label in zip(noisy, noisy_labels))
    assert 0.2 < spread < 0.4  # radial component of 2-D Gaussian noise with sigma 0.3


@pytest.mark.parametrize(
    "args, message",
    [((1, 0.1, 0), "n >= 2"), ((10.5, 0.1, 0), "n >= 2"), ((10, -0.1, 0), "finite number >= 0"),
     ((10, math.inf, 0), "finite number >= 0"), ((10, 0.1, "x"), "whole number")],
)
def test_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        moons(*args)
