"""Forward mode (`chainrule.jvp`, `chainrule.forward.tangents`) against `torch.func.jvp` in float64.

The random graphs of the reverse-mode parity test (tests/parity_fuzz.py: every op, 0, -0.0, subnormals,
huge numbers, inf, nan, negative bases), each with a random direction. Every output value and tangent is
bit-identical to torch.func.jvp (nan matching nan), or differs only in the sign of a zero, or its difference
falls into a named class shown by a witness, as in tests/test_parity_torch.py: the difference disappears when
the named choices of PyTorch are replaced by chainrule's (`parity_fuzz.FORWARD_VARIANTS`, run by PyTorch's
own forward-mode AD). Anything else fails. The counts are the table in docs/engine.md (one machine's; each
class within the bound the table states, tests/measured_tables.py).
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import random
from pathlib import Path

import pytest

pytest.importorskip("torch")
import chainrule  # noqa: E402
import measured_tables  # noqa: E402
import parity_fuzz as fuzz  # noqa: E402
from chainrule import Value  # noqa: E402
from chainrule.engine import topological_order  # noqa: E402
from chainrule.forward import tangents  # noqa: E402

GRAPHS = 2000
DOCS = Path(__file__).resolve().parent.parent / "docs" / "engine.md"
COMBOS = [combo for r in (1, 2, 3) for combo in itertools.combinations(fuzz.FORWARD_VARIANTS, r)]


same = fuzz.same


def case(seed: int) -> tuple[list[float], list[tuple], list[float]]:
    leaves, steps = fuzz.recipe(random.Random(seed))
    return leaves, steps, fuzz.seeds(random.Random(10_000 + seed), len(leaves))


def explain(leaves, steps, directions, k: int, ours: float) -> str:
    """The smallest set of replacements under which PyTorch's forward mode gives chainrule's result k."""
    for combo in COMBOS:
        theirs = fuzz.torch_forward_twin(leaves, steps, directions, combo)[k]
        if fuzz.same_up_to_zero_sign(ours, theirs):
            return " & ".join(combo)
    return "unexplained"


@functools.lru_cache(maxsize=1)
def measure() -> tuple[collections.Counter, dict, list]:
    counts: collections.Counter = collections.Counter()
    examples: dict = {}
    unfaithful = []  # seeds where the dual-tensor twin without replacements is not torch.func.jvp
    for seed in range(GRAPHS):
        leaves, steps, directions = case(seed)
        ours = fuzz.chainrule_jvp(leaves, steps, directions)
        theirs = fuzz.torch_jvp(leaves, steps, directions)
        if not all(map(same, fuzz.torch_forward_twin(leaves, steps, directions), theirs)):
            unfaithful.append(seed)
        fuzz.count_classes(counts, examples, seed, ours, theirs, ("values", "tangents"),
                           lambda k, a: explain(leaves, steps, directions, k, a))
    return counts, examples, unfaithful


def test_every_difference_from_torch_func_jvp_falls_in_a_named_class() -> None:
    counts, examples, unfaithful = measure()
    assert unfaithful == [], "the dual-tensor twin must reproduce torch.func.jvp before it can explain anything"
    unexplained = {key: examples[key] for key in counts if key[0] == "unexplained"}
    assert unexplained == {}, f"(name, kind): (seed, position, chainrule, PyTorch) {unexplained}"
    assert counts[("bit-identical", "tangents")] / GRAPHS > 0.9


def test_the_docs_table_names_every_class_and_each_count_is_within_its_bound() -> None:
    counts, _, _ = measure()
    measured_tables.check(DOCS.read_text(encoding="utf-8"), ["class", "output values", "tangents"],
                          measured_tables.by_class(counts, ["values", "tangents"]))


def test_the_classifier_catches_a_difference_it_cannot_explain(monkeypatch) -> None:
    # A deliberately wrong sigmoid in PyTorch (an op no named class replaces): nothing may absorb it.
    leaves, steps, directions = [0.3], [("sigmoid", 0, 0, 0.0)], [1.0]
    monkeypatch.setitem(fuzz.TORCH_UNARY, "sigmoid", lambda v: fuzz.torch.sigmoid(v) * 1.0000001)
    ours = fuzz.chainrule_jvp(leaves, steps, directions)
    assert not same(ours[1], fuzz.torch_jvp(leaves, steps, directions)[1])
    assert explain(leaves, steps, directions, 1, ours[1]) == "unexplained"


def test_jvp_equals_the_gradient_dotted_with_the_direction() -> None:
    # An independent route to the same number: reverse mode, d f/d x . t.
    def f(x, y, z):
        return (x * y).tanh() + (z / y).exp() - x ** 3 + (x * x).sigmoid()

    point, direction = [0.3, -1.2, 0.7], [0.5, 2.0, -1.0]
    value, tangent = chainrule.jvp(f, point, direction)
    leaves = [Value(p) for p in point]
    out = f(*leaves)
    gradient = chainrule.grad(out, leaves)
    assert value == out.data
    assert tangent == pytest.approx(sum(g.data * t for g, t in zip(gradient, direction)), rel=1e-14)


def test_jvp_of_many_outputs_in_one_sweep_and_a_single_input() -> None:
    values, derivatives = chainrule.jvp(lambda x: [x * k for k in range(1, 5)] + [x.exp()], 2.0, 1.0)
    assert values == (2.0, 4.0, 6.0, 8.0, math.exp(2.0))
    assert derivatives == (1.0, 2.0, 3.0, 4.0, math.exp(2.0))


def test_constants_and_unseeded_leaves_pass_nothing_not_zero_times_inf() -> None:
    # At x = inf the constant 2.0 has no tangent, so no term 0 * x = nan joins x's term t * 2.0 ...
    assert chainrule.jvp(lambda x: x * 2.0 + 1.0, [math.inf], [1.0]) == (math.inf, 2.0)
    # ... while a tangent the caller gives is a real number, even 0: 0 * inf is nan, as in torch.func.jvp.
    assert math.isnan(chainrule.jvp(lambda x: x * math.inf, [2.0], [0.0])[1])


def test_tangents_gives_every_node_in_the_engines_walk_order() -> None:
    x, y = Value(0.5, label="x"), Value(2.0, label="y")
    e = x * y
    out = e.tanh() + x
    found = tangents(out, {x: 1.0})
    assert list(found) == topological_order(out)
    assert found[x] == 1.0 and found[y] == 0.0 and found[e] == 2.0
    assert found[out] == pytest.approx(2.0 * (1 - math.tanh(1.0) ** 2) + 1.0, rel=1e-15)
    assert found[out] == chainrule.jvp(lambda a, b: (a * b).tanh() + a, [0.5, 2.0], [1.0, 0.0])[1]


@pytest.mark.parametrize("call, error, words", [
    (lambda: chainrule.jvp(lambda x: x, [1.0, 2.0], [1.0]), ValueError, "one tangent per input"),
    (lambda: chainrule.jvp(lambda x: x, ["1"], [1.0]), TypeError, "real number"),
    (lambda: chainrule.jvp(lambda x: 3.0, [1.0], [1.0]), TypeError, "return a Value"),
    (lambda: tangents(Value(1.0) * 2.0, {Value(3.0): 1.0}), ValueError, "leaves of the output's graph"),
    (lambda: tangents(2.0, {}), TypeError, "Value as output"),
])
def test_bad_input_is_a_clear_error(call, error, words) -> None:
    with pytest.raises(error, match=words):
        call()
