"""Small toy data sets, made with the standard library only (no scikit-learn, no numpy).

`moons(n, noise, seed)` draws two interleaving half circles, the data set of micrograd's demo:

* the upper moon, label -1: (cos t, sin t) for n_upper = n // 2 angles t evenly spaced in [0, pi];
* the lower moon, label +1: (1 - cos t, 1/2 - sin t) for the other n - n // 2 angles, so it hooks
  into the first one from below;
* each coordinate then gets Gaussian noise with standard deviation ``noise``, and the points are
  shuffled, both from ``random.Random(seed)`` (so the same seed always gives the same points and
  never touches Python's global random state).

Labels are -1 and +1 as in the demo (scikit-learn's make_moons gives 0 and 1 and the demo maps
them with y * 2 - 1); use ``(y + 1) // 2`` for 0/1 labels.
"""

from __future__ import annotations

import math
import random

__all__ = ["moons"]


def _evenly_spaced(count: int, stop: float) -> list[float]:
    if count == 1:
        return [0.0]
    return [stop * i / (count - 1) for i in range(count)]


def moons(n: int = 100, noise: float = 0.1, seed: int = 0) -> tuple[list[tuple[float, float]], list[int]]:
    """``n`` points on two noisy half moons: ``(points, labels)`` with labels in {-1, +1}."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"moons needs a whole number of points n >= 2 (one per moon at least), not {n!r}")
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0.0 <= noise < math.inf:
        raise ValueError(f"noise is a standard deviation: a finite number >= 0, not {noise!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be a whole number, not {seed!r}")
    rng = random.Random(seed)
    n_upper = n // 2
    examples: list[tuple[tuple[float, float], int]] = []
    for t in _evenly_spaced(n_upper, math.pi):
        examples.append(((math.cos(t), math.sin(t)), -1))
    for t in _evenly_spaced(n - n_upper, math.pi):
        examples.append(((1.0 - math.cos(t), 0.5 - math.sin(t)), 1))
    noisy = [((x + rng.gauss(0.0, noise), y + rng.gauss(0.0, noise)), label) for (x, y), label in examples]
    rng.shuffle(noisy)
    return [point for point, _ in noisy], [label for _, label in noisy]
