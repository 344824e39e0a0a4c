"""The cancellation rule of compiled replay, measured: a fused sum of L terms t_i (a matrix product, added in
BLAS's order with fused multiply-adds) that cancels to less than `replay.CANCELLATION` of a bound on sum |t_i| is
recomputed in the written order and is then the eager engine's number bit for bit; any other sum differs from
eager by at most 2 L eps sum |t_i| (eps = 2^-53), so by at most 2 L eps / CANCELLATION of its value. Random sums
of 8 to 64 terms with cancellation drawn from none to 2^-45 of their size; docs/engine.md states the same
constants."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np

import chainrule
from chainrule import Value
from chainrule.replay import CANCELLATION

EPS = 2.0 ** -53
DOCS = Path(__file__).resolve().parent.parent / "docs" / "engine.md"


def measure(seed: int = 3, sums: int = 120, examples: int = 64):
    rng = random.Random(seed)
    worst_absolute = worst_relative = 0.0
    cancelled = exact_when_cancelled = 0
    for _ in range(sums):
        k = rng.choice([8, 13, 16, 33, 64])
        weights = [Value(rng.gauss(0, 1) * 10 ** rng.randint(-3, 3)) for _ in range(k)]
        bias = Value(rng.gauss(0, 1))
        columns = np.array([[rng.gauss(0, 1) for _ in range(examples)] for _ in range(k)])
        for n in range(examples):  # the last input chosen so that the sum cancels to about 2^-d of its size
            partial = bias.data + sum(w.data * columns[i, n] for i, w in enumerate(weights[:-1]))
            size = abs(bias.data) + sum(abs(w.data * columns[i, n]) for i, w in enumerate(weights[:-1]))
            left = size * 2.0 ** -rng.uniform(0, 45) * rng.choice([-1.0, 1.0])
            columns[k - 1, n] = (left - partial) / weights[-1].data
        compiled = chainrule.compile(lambda *xs: sum((w * x for w, x in zip(weights, xs)), bias),
                                     [*weights, bias], n_inputs=k)
        replayed = compiled.values(*columns).tolist()
        for n in range(examples):
            terms = [bias.data] + [w.data * columns[i, n] for i, w in enumerate(weights)]
            eager = bias.data
            for w, x in zip(weights, columns[:, n].tolist()):
                eager = eager + w.data * x
            size = sum(abs(t) for t in terms)
            difference = abs(replayed[n] - eager)
            worst_absolute = max(worst_absolute, difference / (2 * len(terms) * EPS * size))
            if abs(eager) < CANCELLATION * size:
                cancelled += 1
                exact_when_cancelled += replayed[n] == eager
            elif difference:
                worst_relative = max(worst_relative, difference / abs(eager) / (2 * len(terms) * EPS / CANCELLATION))
    return worst_absolute, worst_relative, cancelled, exact_when_cancelled


def test_a_sum_differs_from_eager_by_at_most_the_documented_bound_and_a_cancelled_one_not_at_all() -> None:
    worst_absolute, worst_relative, cancelled, exact = measure()
    # |compiled - eager| <= 2 L eps sum |t_i|: the bound, not how close one machine's BLAS comes to it (docs/engine.md)
    assert worst_absolute <= 1.0, worst_absolute
    assert worst_relative <= 1.0, worst_relative  # and <= 2 L eps / CANCELLATION of the value
    assert cancelled > 1000 and exact == cancelled, (cancelled, exact)


def test_the_docs_state_the_constants_the_code_uses() -> None:
    docs = " ".join(DOCS.read_text(encoding="utf-8").split())
    power = -round(math.log2(CANCELLATION))
    assert f"at most 2^-{power} of the sum of its terms' sizes" in docs
    assert f"at most 2 L eps sum |t_i|, so at most 2 L eps / 2^-{power} = L 2^-{52 - power} of its value" in docs
