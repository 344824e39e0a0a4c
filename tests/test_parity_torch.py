"""Parity with PyTorch, measured: random expression DAGs over every op, with 0, -0.0, subnormals, huge
numbers, inf, nan and negative bases, built with chainrule and with PyTorch float64. Every output value
and every leaf gradient is either bit-identical (nan matching nan) or its difference falls into a named
class, shown by a witness: the difference disappears when the one named choice of PyTorch is replaced by
chainrule's (`parity_fuzz.VARIANTS`), or when chainrule sums in PyTorch's order. Anything else fails.
The counts are the table in docs/engine.md: one machine's, each class within the bound the table states
(tests/measured_tables.py)."""

from __future__ import annotations

import collections
import functools
import itertools
import math
import random
from pathlib import Path

import pytest

pytest.importorskip("torch")
import measured_tables  # noqa: E402
import parity_fuzz as fuzz  # noqa: E402

GRAPHS = 4000
DOCS = Path(__file__).resolve().parent.parent / "docs" / "engine.md"
COMBOS = [combo for r in (1, 2, 3) for combo in itertools.combinations(fuzz.VARIANTS, r)]


same, same_up_to_zero_sign = fuzz.same, fuzz.same_up_to_zero_sign


def explain(leaves, steps, k: int, ours: float) -> str:
    """The name of the smallest set of replacements under which PyTorch gives chainrule's result k."""
    reordered = fuzz.chainrule_in_creation_order(leaves, steps)[k]
    for combo in [(), *COMBOS]:
        theirs = fuzz.torch_results(leaves, steps, combo)[k]
        if combo and same_up_to_zero_sign(ours, theirs):
            return " & ".join(combo)
        if same_up_to_zero_sign(reordered, theirs):
            return " & ".join(("summation order", *combo))
    return "unexplained"


@functools.lru_cache(maxsize=1)
def measure() -> tuple[collections.Counter, dict]:
    counts: collections.Counter = collections.Counter()
    examples: dict = {}
    for seed in range(GRAPHS):
        leaves, steps = fuzz.recipe(random.Random(seed))
        ours = fuzz.chainrule_results(leaves, steps)
        theirs = fuzz.torch_results(leaves, steps)
        fuzz.count_classes(counts, examples, seed, ours, theirs, ("values", "gradients"),
                           lambda k, a: explain(leaves, steps, k, a))
    return counts, examples


def test_every_difference_from_pytorch_falls_in_a_named_class() -> None:
    counts, examples = measure()
    unexplained = {key: examples[key] for key in counts if key[0] == "unexplained"}
    assert unexplained == {}, f"(name, kind): (seed, position, chainrule, PyTorch) {unexplained}"
    identical = counts[("bit-identical", "values")] + counts[("bit-identical", "gradients")]
    assert identical / sum(counts.values()) > 0.9


def test_the_docs_table_names_every_class_and_each_count_is_within_its_bound() -> None:
    counts, _ = measure()
    docs = DOCS.read_text(encoding="utf-8")
    table = measured_tables.check(docs, ["class", "output values", "leaf gradients"],
                                  measured_tables.by_class(counts, ["values", "gradients"]))
    identical, total = sum(table.rows["bit-identical"]), sum(table.totals)  # the docs' sentence is their table's
    assert f"So {100 * identical / total:.1f} % of the {total:,} results are bit-identical" in docs
    # One figure in one place: the README says the share is measured here and gives no number of its own.
    readme = " ".join((DOCS.parent.parent / "README.md").read_text(encoding="utf-8").split())
    assert "bit-identical to PyTorch in most fuzzed results" in readme and "the share measured in docs/engine.md" in readme
    assert f"{100 * identical / total:.1f} %" not in readme


def test_the_classifier_catches_a_difference_it_cannot_explain(monkeypatch) -> None:
    # A deliberately wrong sigmoid in the PyTorch twin: no named class may absorb it.
    leaves, steps = [0.3], [("sigmoid", 0, 0, 0.0)]
    monkeypatch.setitem(fuzz.TORCH_UNARY, "sigmoid", lambda v: fuzz.torch.sigmoid(v) * 1.0000001)
    ours = fuzz.chainrule_results(leaves, steps)
    assert explain(leaves, steps, 1, ours[1]) == "unexplained"


# --- who rounds better, op by op (the "kernels" and "x ** k" classes) ----------------------------------------

def correctly_rounded_counts(ours, theirs, exact, points) -> tuple[int, int, int]:
    """Among points where the two differ: how often each equals the exactly rounded result."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    differ = ours_right = theirs_right = 0
    for x in points:
        a = ours(x)
        b = theirs(fuzz.torch.tensor(x, dtype=fuzz.torch.float64)).item()
        if same(a, b):
            continue
        differ += 1
        truth = float(exact(mpmath.mpf(x)))
        ours_right += a == truth
        theirs_right += b == truth
    return differ, ours_right, theirs_right


_RNG = random.Random(9)
POINTS = [_RNG.uniform(-5, 5) for _ in range(4000)]


def test_exp_of_the_c_library_is_correctly_rounded_more_often_than_pytorchs() -> None:
    import mpmath

    from chainrule import Value
    differ, ours, theirs = correctly_rounded_counts(lambda x: Value(x).exp().data, fuzz.torch.exp, mpmath.exp, POINTS)
    assert differ > 0 and ours > theirs, (differ, ours, theirs)


def test_tanh_of_pytorch_is_correctly_rounded_more_often_than_the_c_librarys() -> None:
    import mpmath

    from chainrule import Value
    differ, ours, theirs = correctly_rounded_counts(lambda x: Value(x).tanh().data, fuzz.torch.tanh, mpmath.tanh, POINTS)
    assert differ > 0 and theirs > ours, (differ, ours, theirs)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_and_cos_of_pytorch_are_correctly_rounded_more_often_than_the_c_librarys(name: str) -> None:
    import mpmath

    from chainrule import Value
    differ, ours, theirs = correctly_rounded_counts(lambda x: getattr(Value(x), name)().data,
                                                    getattr(fuzz.torch, name), getattr(mpmath, name), POINTS)
    assert differ > 0 and theirs > ours, (differ, ours, theirs)


@pytest.mark.parametrize("k", [3.0, -0.5, -2.0])
def test_constant_powers_are_correctly_rounded_where_pytorchs_fast_paths_are_not(k: float) -> None:
    from chainrule import Value
    positive = [abs(x) + 1e-3 for x in POINTS]
    differ, ours, theirs = correctly_rounded_counts(lambda x: (Value(x) ** k).data, lambda t: t ** k,
                                                    lambda m: m ** k, positive)
    assert differ > 0 and ours > 0.99 * differ and theirs < 0.05 * differ, (differ, ours, theirs)


def test_sigmoid_follows_pytorchs_formula_bit_for_bit() -> None:
    from chainrule import Value
    points = POINTS + [-745.0, -720.0, 710.0, -0.0, 0.0, 40.0, -40.0]
    assert all(same(Value(x).sigmoid().data, fuzz.torch.sigmoid(fuzz.torch.tensor(x, dtype=fuzz.torch.float64)).item())
               for x in points)



NEWER_OPS = ["sqrt", "log1p", "softplus", "erf", "atan"]


@pytest.mark.parametrize("name", NEWER_OPS)
def test_each_newer_op_is_fuzzed_and_its_c_library_twin_takes_pytorchs_derivative(name: str) -> None:
    # The graphs use it, and its "kernels" twin (the C library's value) passes back what PyTorch's own op does,
    # up to the C library's exp inside erf's and softplus's derivative: else the twin would explain wrongly.
    assert any(step[0] == name for seed in range(GRAPHS) for step in fuzz.recipe(random.Random(seed))[1])
    for x in (0.3, -0.7, -1.0, 2.5, 19.5, 20.5, 0.0):
        twin_leaf, torch_leaf = fuzz.torch_leaf(x), fuzz.torch_leaf(x)
        twin, real = fuzz.VARIANTS["kernels"][name](twin_leaf), fuzz.TORCH_UNARY[name](torch_leaf)
        twin.backward()
        real.backward()
        ours, theirs = twin_leaf.grad.item(), torch_leaf.grad.item()
        assert same(ours, theirs) or math.isclose(ours, theirs, rel_tol=5e-16), (name, x, ours, theirs)
