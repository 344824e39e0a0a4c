"""The transforms (`chainrule.vjp`, `jacrev`, `jacfwd`, `hessian`) against `torch.func` in float64, on the
random graphs of the parity test (tests/parity_fuzz.py: every op, 0, -0.0, subnormals, huge numbers, inf, nan,
negative bases), each made a function of all its leaves with two outputs (for vjp, jacrev and jacfwd; the
Hessian is of the one output). Every number is bit-identical to torch.func's (nan matching nan), differs only
in the sign of a zero, or falls into a class named by a witness: a twin of PyTorch with the named choices
replaced by chainrule's reproduces chainrule's number (or chainrule's own number with its sweep run in
PyTorch's order does). Each twin is first checked to reproduce torch.func exactly with nothing replaced.
The counts are docs/engine.md's table ("Composable transforms": one machine's, each class within the bound
the table states, tests/measured_tables.py); anything unexplained fails.

The classes are those of the first-order tests, plus, for the Hessian, **derivative formulas**: PyTorch
differentiates its hand-written backward kernels (sigmoid_backward, tanh_backward, pow's and div's
backward) with hand-written second-order formulas, chainrule its one table's pullbacks by the chain rule;
the witness is PyTorch with those ops' backward written as the table's pullbacks in plain PyTorch ops.
"""

from __future__ import annotations

import collections
import functools
import itertools
import random
from pathlib import Path

import pytest

pytest.importorskip("torch")
import measured_tables  # noqa: E402
import parity_fuzz as fuzz  # noqa: E402

GRAPHS = 600
DOCS = Path(__file__).resolve().parent.parent / "docs" / "engine.md"
REVERSE = [c for r in (1, 2, 3) for c in itertools.combinations(fuzz.VARIANTS, r)]
FORWARD = [c for r in (1, 2, 3) for c in itertools.combinations(fuzz.FORWARD_VARIANTS, r)]
SECOND = [c for r in (1, 2, 3, 4) for c in itertools.combinations(fuzz.SECOND_ORDER_VARIANTS, r)]
KINDS = {"vjp": "vjp", "jacrev": "jacrev", "jacfwd": "jacfwd", "hessian": "hessian"}


def case(seed: int):
    leaves, steps = fuzz.recipe(random.Random(seed))
    rng = random.Random(20_000 + seed)
    return leaves, steps, [rng.choice([rng.uniform(-2, 2), 1.0, 0.0]) for _ in range(2)]


def reverse_explain(leaves, steps, cotangents, k: int, ours: float, row: bool = False) -> str:
    """The smallest set of replacements under which PyTorch's backward() gives chainrule's number k, or
    under which it gives chainrule's number with chainrule's sweep in PyTorch's order. For a row of a
    Jacobian (`row`) also with the outputs of zero cotangent left out ("zero cotangents": torch.func's
    jacrev seeds them, so that 0 x an inf or nan derivative of another output reaches the row; chainrule's
    jacrev differentiates the row's output alone)."""
    reordered = fuzz.chainrule_vjp_in_creation_order(leaves, steps, cotangents, seed_zeros=not row)[k]
    for seed_zeros in (True, False) if row else (True,):
        prefix = () if seed_zeros else ("zero cotangents",)
        for combo in [(), *REVERSE]:
            theirs = fuzz.torch_vjp_twin(leaves, steps, cotangents, combo, seed_zeros)[k]
            if (combo or prefix) and fuzz.same_up_to_zero_sign(ours, theirs):
                return " & ".join((*prefix, *combo))
            if fuzz.same_up_to_zero_sign(reordered, theirs):
                return " & ".join((*prefix, "summation order", *combo))
    return "unexplained"


def forward_explain(leaves, steps, k: int, ours: float) -> str:
    for combo in FORWARD:
        if fuzz.same_up_to_zero_sign(ours, fuzz.torch_jacfwd_twin(leaves, steps, combo)[k]):
            return " & ".join(combo)
    return "unexplained"


def hessian_explain(leaves, steps, k: int, ours: float) -> str:
    reordered = fuzz.chainrule_hessian_in_creation_order(leaves, steps)[k]
    for combo in [(), *SECOND]:
        theirs = fuzz.torch_hessian_twin(leaves, steps, combo)[k]
        if combo and fuzz.same_up_to_zero_sign(ours, theirs):
            return " & ".join(combo)
        if fuzz.same_up_to_zero_sign(reordered, theirs):
            return " & ".join(("summation order", *combo))
    return "unexplained"


def classify(counts, examples, seed, kind, ours, theirs, explain) -> None:
    for k, (a, b) in enumerate(zip(ours, theirs)):
        if fuzz.same(a, b):
            name = "bit-identical"
        elif a == 0.0 and b == 0.0:
            name = "sign of zero"
        else:
            name = explain(k, a)
        counts[(name, kind)] += 1
        examples.setdefault((name, kind), (seed, k, a, b))


@functools.lru_cache(maxsize=1)
def measure():
    counts: collections.Counter = collections.Counter()
    examples: dict = {}
    unfaithful: list = []
    for seed in range(GRAPHS):
        leaves, steps, cotangents = case(seed)
        n = len(leaves)
        # vjp: both outputs' values, then the leaves' cotangent-weighted gradients
        theirs = fuzz.torch_vjp(leaves, steps, cotangents)
        if not all(map(fuzz.same, fuzz.torch_vjp_twin(leaves, steps, cotangents), theirs)):
            unfaithful.append(("vjp", seed))
        classify(counts, examples, seed, "vjp", fuzz.chainrule_vjp(leaves, steps, cotangents), theirs,
                 lambda k, a: reverse_explain(leaves, steps, cotangents, k, a))
        # jacrev: one vjp per output, with a one-hot cotangent
        theirs = fuzz.torch_jacobian(fuzz.torch.func.jacrev, leaves, steps)
        rows = [fuzz.torch_vjp_twin(leaves, steps, hot)[2:] for hot in ((1.0, 0.0), (0.0, 1.0))]
        if not all(map(fuzz.same, [x for row in rows for x in row], theirs)):
            unfaithful.append(("jacrev", seed))
        classify(counts, examples, seed, "jacrev", fuzz.chainrule_jacobian(fuzz.chainrule.jacrev, leaves, steps), theirs,
                 lambda k, a: reverse_explain(leaves, steps, (1.0, 0.0) if k < n else (0.0, 1.0), 2 + k % n, a, row=True))
        # jacfwd: one jvp per leaf
        theirs = fuzz.torch_jacobian(fuzz.torch.func.jacfwd, leaves, steps)
        if not all(map(fuzz.same, fuzz.torch_jacfwd_twin(leaves, steps), theirs)):
            unfaithful.append(("jacfwd", seed))
        classify(counts, examples, seed, "jacfwd", fuzz.chainrule_jacobian(fuzz.chainrule.jacfwd, leaves, steps), theirs,
                 lambda k, a: forward_explain(leaves, steps, k, a))
        # hessian of the one output
        theirs = fuzz.torch_hessian(leaves, steps)
        if not all(map(fuzz.same, fuzz.torch_hessian_twin(leaves, steps), theirs)):
            unfaithful.append(("hessian", seed))
        classify(counts, examples, seed, "hessian", fuzz.chainrule_hessian(leaves, steps), theirs,
                 lambda k, a: hessian_explain(leaves, steps, k, a))
    return counts, examples, unfaithful


def test_every_difference_from_torch_func_falls_in_a_named_class() -> None:
    counts, examples, unfaithful = measure()
    assert unfaithful == [], "each twin must reproduce torch.func before it can explain anything"
    unexplained = {key: examples[key] for key in counts if key[0] == "unexplained"}
    assert unexplained == {}, f"(name, kind): (seed, position, chainrule, PyTorch) {unexplained}"
    for kind in KINDS:
        total = sum(c for (_, k), c in counts.items() if k == kind)
        assert counts[("bit-identical", kind)] / total > 0.85, kind


def test_the_docs_table_names_every_class_and_each_count_is_within_its_bound() -> None:
    counts, _, _ = measure()
    measured_tables.check(DOCS.read_text(encoding="utf-8"), ["class", *KINDS.values()],
                          measured_tables.by_class(counts, list(KINDS)))


def test_the_classifier_catches_a_difference_it_cannot_explain(monkeypatch) -> None:
    # A deliberately wrong sigmoid in PyTorch: no named class may absorb it, at first or second order.
    leaves, steps = [0.3], [("sigmoid", 0, 0, 0.0)]
    monkeypatch.setitem(fuzz.TORCH_UNARY, "sigmoid", lambda v: fuzz.torch.sigmoid(v) * 1.0000001)
    ours = fuzz.chainrule_hessian(leaves, steps)
    assert not fuzz.same(ours[0], fuzz.torch_hessian(leaves, steps)[0])
    assert hessian_explain(leaves, steps, 0, ours[0]) == "unexplained"
    ours = fuzz.chainrule_vjp(leaves, steps, (2.0, 1.0))
    assert reverse_explain(leaves, steps, (2.0, 1.0), 2, ours[2]) == "unexplained"
