"""The order of compiled replay's gradient sums, measured. A parameter's gradient is a sum over the examples and over
the paths from the output to the parameter of the product of the local derivatives along the path; the eager
engine adds it up node by node and example by example (repeated backward()), the replay in BLAS's order over
a whole batch, with no order check. The random programs of
tests/test_compile_fuzz.py (extreme inputs and parameters) show two classes of differences, each with its
bound, and nothing else:

* rounding: the two differ by at most L (2 eps S + 2^-1074), where S is the sum of the paths' sizes
  (|product|) and L the number of additions (examples x nodes), eps = 2^-53. Where the gradient cancels to within that bound,
  one may be 0 and the other a tiny number (the class changes between zero and finite);
* overflow in some order: S is more than 2^1023 (or inf or nan), so one order overflows where the other does
  not, or meets inf - inf: finite, +-inf and nan can trade places.

docs/engine.md ("Where compiled and eager can differ") shows the table this measures, one machine's counts and
the bound of each class (tests/measured_tables.py)."""

from __future__ import annotations

import collections
import functools
import math
import random
from pathlib import Path

import numpy as np

import chainrule
import compile_programs as fuzz
import measured_tables
from chainrule import Value
from chainrule.engine import topological_order

EPS = 2.0 ** -53
TINY = 2.0 ** -1074  # the smallest subnormal: below 2^-1022 a rounding error is absolute, at most this
HALF_MAX = 2.0 ** 1023
PROGRAMS = 1200
DOCS = Path(__file__).resolve().parent.parent / "docs" / "engine.md"


def eager_terms(fn, params, rows):
    """The eager gradient of each parameter (backward() per example); the size of its expansion into paths,
    sum over examples and paths of |product of the local derivatives along the path| (a backward pass on
    absolute values); and the number of additions any order of that sum can make (examples x nodes)."""
    sizes = {p: 0.0 for p in params}
    additions = 0
    for p in params:
        p.grad = 0.0
    for row in rows:
        out = fn(*[Value(x) for x in row])
        out.backward()
        order = topological_order(out, leaves=False)
        additions += len(order) + 1
        size = {out: 1.0}
        for node in reversed(order):
            upstream = size.get(node, 0.0)
            for source, local in zip(node._prev, node._op.local(*[q.data for q in node._prev], node.data)):
                if local is not None:
                    size[source] = size.get(source, 0.0) + abs(local) * upstream
        for p in params:
            sizes[p] += size.get(p, 0.0)
    return [p.grad for p in params], [sizes[p] for p in params], [additions] * len(params)


def classify(compiled: float, eager: float, size: float, count: int) -> str:
    if fuzz.kind(compiled) == fuzz.kind(eager) and (compiled == eager or compiled != compiled):
        return "the same number"
    if math.isfinite(compiled) and math.isfinite(eager) and abs(compiled - eager) <= count * (2 * EPS * size + TINY):
        return "rounding" if fuzz.kind(compiled) == fuzz.kind(eager) else "rounding, zero and finite"
    if not size < HALF_MAX:
        return "overflow in some order"
    return "unexplained"


@functools.lru_cache(maxsize=1)
def measure():
    rng = random.Random(11)
    counts: collections.Counter = collections.Counter()
    examples: dict = {}
    for _ in range(PROGRAMS):
        n_inputs, numbers, steps = fuzz.random_program(rng)
        params = [Value(x) for x in numbers]
        fn = fuzz.program_function(n_inputs, params, steps)
        columns = [np.array([fuzz.number(rng) for _ in range(fuzz.BATCH)]) for _ in range(n_inputs)]
        _, grads = chainrule.compile(fn, params, n_inputs=n_inputs).value_and_grad(*columns)
        rows = [[float(c[n]) for c in columns] for n in range(fuzz.BATCH)]
        eager, sizes, terms = eager_terms(fn, params, rows)
        for compiled, expected, size, count in zip(grads.tolist(), eager, sizes, terms):
            name = classify(compiled, expected, size, count)
            counts[name] += 1
            examples.setdefault(name, (compiled, expected, size, count, numbers, steps))
    return counts, examples


def test_every_gradient_difference_is_rounding_within_its_bound_or_an_overflow_in_some_order() -> None:
    counts, examples = measure()
    assert counts["unexplained"] == 0, [v for k, v in examples.items() if k == "unexplained"]
    assert counts["overflow in some order"] > 0 and counts["rounding, zero and finite"] >= 0


def test_the_docs_table_names_every_class_and_each_count_is_within_its_bound() -> None:
    counts, _ = measure()
    measured_tables.check(DOCS.read_text(encoding="utf-8"), ["gradients", "count"],
                          {name: [count] for name, count in counts.items()})
