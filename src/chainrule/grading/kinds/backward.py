"""Case kinds on a backward pass the learner writes: one neuron by hand, or a whole expression's.

    neuron-params     {"name", "x": [numbers], "w": [numbers], "b"}: out = tanh(w[0]*x[0] + ... + b).
                      call f(x, w, b, out, grad) with grad a list of zeros; expect
                      [d out/d w1, ..., d out/d b].
    expression-grads  {"name", "expression", "values": [numbers]}, the expression one of
                      chainrule.grading.expressions (neuron, reuse, chain, shared);
                      call f(expression, values, grad) with grad a list of zeros; expect
                      d out/d value for every value, in order.

Both name the learner's list `grad` in their messages. The mistakes they recognise are those of a
hand-written backward pass: nothing sent back, a sign, tanh's slope, `=` instead of `+=` on a value
used more than once, and walks without a topological order (replayed on engine Values).
"""

from __future__ import annotations

import math
from typing import Callable

from chainrule.engine import Value
from chainrule.grading.expressions import INPUT_NAMES, WALKS, build, simulate_backward
from chainrule.grading.json_objects import Case, JsonList
from chainrule.grading.kinds.base import (
    Attempt,
    CaseError,
    CaseKind,
    Fills,
    Mistake,
    Recogniser,
    all_zero,
    not_a_number,
    not_finite,
    number_field,
    numbers_field,
    run_all_zero,
    sign_flipped,
)
from chainrule.grading.rounding import same_graded
from chainrule.ops import TANH

__all__ = ["BACKWARD_KINDS", "NAIVE_RECURSION", "SHARED_EXPLAINED"]

NOT_FINITE = "A gradient is NaN or infinite: check for a division, or an overflowing exp, in your code."
SIGN = "Every gradient has the wrong sign: check a subtraction (1 - out**2, not out**2 - 1)."
NAIVE_RECURSION = (
    "Your backward visits h before every use of h has sent its gradient: build a topological order "
    "first and walk it in reverse."
)
SHARED_EXPLAINED = (
    "In shared, h = tanh(x*w) feeds two later values (h + h*h uses it three times), so h's gradient is "
    "complete only after + and h*h have both run their _backward."
)
REUSE_ACCUMULATE = ("a is used three times (in a*b, and twice in a*a), so its gradient must collect every use: "
                    "accumulate with +=, not =, in every _backward.")

# ------------------------------------------------------------------------------------- one neuron


def _neuron_inputs(case: Case) -> tuple[list[float], list[float], float]:
    x, w = numbers_field(case, "x"), numbers_field(case, "w")
    if len(x) != len(w):
        raise CaseError(f"'x' and 'w' must be as long as each other, not {len(x)} and {len(w)}")
    return x, w, number_field(case, "b")


def _neuron_on_engine(case: Case) -> tuple[Value, list[Value], Value]:
    """(out, the weights, the bias) with out = tanh(x1*w1 + x2*w2 + ... + b), summed in that order."""
    x, w, b = _neuron_inputs(case)
    weights, bias = [Value(v) for v in w], Value(b)
    terms = [Value(xi) * wi for xi, wi in zip(x, weights)]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return (total + bias).tanh(), weights, bias


def _neuron_args(case: Case) -> JsonList:
    x, w, b = _neuron_inputs(case)
    return [x, w, b, _neuron_on_engine(case)[0].data, [0.0] * (len(w) + 1)]


def _neuron_expected(case: Case) -> list[float]:
    out, weights, bias = _neuron_on_engine(case)
    out.backward()
    return [wi.grad for wi in weights] + [bias.grad]


def _neuron_labels(case: Case) -> list[str]:
    return [f"d out/d w{i + 1}" for i in range(len(case["w"]))] + ["d out/d b"]


def _slots(count: int) -> str:
    names = [f"grad[{i}]" for i in range(count)]
    return ", ".join(names[:-1]) + " and " + names[-1] if count > 1 else names[0]


def _neuron_all_zero(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {"slots": _slots(len(attempt.want))} if len(attempt.got) == len(attempt.want) and all_zero(attempt) else None


def _slope(attempt: Attempt) -> float:
    (slope,) = TANH.local(None, attempt.args[3])  # tanh's slope from the op table: 1 - out^2
    return float(slope)


def _no_tanh_slope(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    x = attempt.args[0]
    plain = list(x) + [1.0]
    return {} if attempt.matches(plain) and not same_graded(_slope(attempt), 1.0) else None


def _weight_for_input(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    x, w = attempt.args[0], attempt.args[1]
    slope = _slope(attempt)
    if len(attempt.got) != len(attempt.want) or any(same_graded(a, b) for a, b in zip(w, x)):
        return None
    return {} if all(same_graded(attempt.got[i], slope * w[i]) for i in range(len(w))) else None


def _bias_zero(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    if len(attempt.got) != len(attempt.want):
        return None
    return {} if same_graded(attempt.got[-1], 0.0) and not same_graded(_slope(attempt), 0.0) else None


NEURON = CaseKind(
    "neuron-params", _neuron_args, _neuron_expected, _neuron_labels,
    (
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("all-zero", "Every gradient is 0: fill {slots} before returning grad.", _neuron_all_zero,
                fields=("slots",), about="grad came back as it was given (all 0)"),
        sign_flipped(SIGN),
        Mistake("no-tanh-slope", "You left out tanh's local derivative: multiply every gradient by 1 - out**2.",
                _no_tanh_slope, about="the gradients of the sum, without tanh's slope"),
        Mistake("weight-for-input", "d out/d w1 is (1 - out**2) times the input x1 that w1 multiplies, not the "
                "weight itself; the same goes for w2.", _weight_for_input,
                about="each weight's gradient uses the weight instead of its input"),
        Mistake("bias-zero", "d out/d b is (1 - out**2) * 1: the bias is added, so its local derivative is 1.",
                _bias_zero, about="the bias's gradient is 0"),
    ),
    slot="grad",
)

# ------------------------------------------------------------------------------------- a named expression


def _expression_inputs(case: Case) -> tuple[str, list[float]]:
    expression = case.get("expression")
    if expression not in INPUT_NAMES:
        raise CaseError(f"'expression' must be one of {', '.join(INPUT_NAMES)}, not {expression!r}")
    values = numbers_field(case, "values")
    if len(values) != len(INPUT_NAMES[expression]):
        names = ", ".join(INPUT_NAMES[expression])
        raise CaseError(f"'values' of {expression} are {len(INPUT_NAMES[expression])} numbers ({names}), "
                        f"not {len(values)}")
    return expression, values


def _expression_args(case: Case) -> JsonList:
    expression, values = _expression_inputs(case)
    return [expression, values, [0.0] * len(values)]


def _expression_expected(case: Case) -> list[float]:
    leaves, out = build(*_expression_inputs(case))
    out.backward()
    return [leaf.grad for leaf in leaves]


def _on(expression: str, recognise: Callable[[Attempt], Fills | None]) -> Recogniser:
    def on_expression(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        if attempt.inputs.get("expression") != expression or len(attempt.got) != len(attempt.want):
            return None
        return recognise(attempt)

    return on_expression


def _reuse_shares(attempt: Attempt) -> dict[str, float]:
    a, b = attempt.args[1]
    return {"b (the share from a*b)": b, "a (one share from a*a)": a, "2a (the share from a*a)": 2 * a}


def _reuse_a_wrong(attempt: Attempt) -> bool:
    return attempt.same(1) and not attempt.same(0)


def _reuse_one_share(attempt: Attempt) -> Fills | None:
    if not _reuse_a_wrong(attempt):
        return None
    kept = next((label for label, share in _reuse_shares(attempt).items() if same_graded(attempt.got[0], share)), None)
    return {"kept": f" It equals {kept} alone."} if kept is not None else None


def _close(got: list[float], want: list[float]) -> bool:
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12) for g, w in zip(got, want))


WALK_DETAIL = {
    "recursive": "It matches a recursion that calls _backward and then recurses into the inputs, with no "
                 "memory of what it has visited: h's _backward ran three times, each time with the part "
                 "of its gradient that had arrived so far.",
    "recursive-seen": "It matches a recursion that skips values it has already visited: h's _backward ran "
                      "once, but before h*h had sent h its share.",
}


def _shared_walk(attempt: Attempt) -> Fills | None:
    for walk in WALKS:
        if _close(attempt.got, simulate_backward("shared", attempt.args[1], walk)):
            return {"walk": WALK_DETAIL[walk]}
    return None


def _chain_w(attempt: Attempt) -> Fills | None:
    return {} if attempt.same(0) and not attempt.same(1) else None


def _only_shared_fail(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    """Run level: every test passed except the shared ones, and some shared test's numbers are those of
    a walk without a topological order. neuron, reuse and chain are trees above their leaves, so such
    a walk still gets them right; only shared, where h is used more than once, shows it."""
    shared = [a for a in run if a.inputs.get("expression") == "shared"]
    others = [a for a in run if a.inputs.get("expression") != "shared"]
    if not shared or not others or any(not a.matches(a.want) for a in others):
        return None
    return {} if any(a.mistake == "shared-walk" for a in shared) else None


EXPRESSION = CaseKind(
    "expression-grads", _expression_args, _expression_expected,
    lambda case: [f"d out/d {name}" for name in INPUT_NAMES[case["expression"]]],
    (
        not_a_number(), not_finite(NOT_FINITE),
        run_all_zero("Every gradient is 0: the gradient never propagated. Set out.grad = 1, then call _backward() "
                     "on every value from out back to the leaves, the topological order reversed; walking it "
                     "forwards runs each _backward before its gradient has arrived."),
        sign_flipped(SIGN),
        Mistake("reuse-one-share", REUSE_ACCUMULATE + "{kept}",
                _on("reuse", _reuse_one_share),
                fields=("kept",), about="in reuse, a's gradient is one use's share alone (= instead of +=)"),
        Mistake("reuse-a-wrong",
                "a is used three times (in a*b, and twice in a*a), so its gradient must collect every use exactly "
                "once. Build a topological order that remembers what it has seen, and run each value's _backward "
                "once, after every value that uses it (the order reversed); a walk that visits a value twice "
                "runs its _backward twice.",
                _on("reuse", lambda attempt: {} if _reuse_a_wrong(attempt) else None),
                about="in reuse, only a's gradient is wrong"),
        Mistake("shared-walk", f"{NAIVE_RECURSION} {SHARED_EXPLAINED} {{walk}}", _on("shared", _shared_walk),
                fields=("walk",), about="in shared, the numbers of a recursive walk without a topological order"),
        Mistake("shared-wrong",
                f"{SHARED_EXPLAINED} Run each value's _backward exactly once, after every value that uses it: "
                "build a topological order first and walk it in reverse.",
                _on("shared", lambda attempt: {}), about="shared is wrong in another way"),
        Mistake("chain-w", "w is used in all ten steps, so its gradient must collect every use: accumulate with +=, "
                "and run each value's _backward exactly once, in reverse topological order.",
                _on("chain", _chain_w), about="in chain, x is right and w is wrong"),
        Mistake("only-shared-fail", f"Only the shared tests fail. {NAIVE_RECURSION}", _only_shared_fail,
                run_level=True, about="(result) only the shared tests fail, as a walk without an order"),
    ),
    slot="grad",
)

BACKWARD_KINDS = (NEURON, EXPRESSION)
