"""Targeted hints for the classic mistakes, recognised from the numbers a failing test produced.

* All gradients 0 while the engine's are not: nothing reached the inputs (an empty _backward, or
  a backward pass that never seeded out.grad = 1 or walked the graph forwards, not in reverse).
* The `reuse` case, out = a*b + a*a, wrong only for a: a is used three times and must collect all
  three contributions. With `=` instead of `+=`, a keeps just one use's share (b, or a);
  a walk that runs a*a's _backward twice gives the wrong sum. (Plain recursion without a topological
  order gets reuse right: only leaves are shared. The `shared` case catches it.)
* The `shared` case, h = tanh(x*w), out = h + h*h: h is an interior value used three times, so a
  backward that recurses from out without a topological order runs h's _backward too early (or
  more than once). The numbers such walks give are replayed on engine Values
  (`expressions.simulate_backward`) and recognised; `summary_hint` also names the signature
  "only the shared tests fail" for the whole result.
* Exercise 1: leaving out tanh's local derivative 1 - out**2, using the weight instead of the
  input, or flipping the sign.
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.grading.expressions import WALKS, simulate_backward
from chainrule.ops import TANH

NAIVE_RECURSION = (
    "Your backward visits h before every use of h has sent its gradient: build a topological order "
    "first and walk it in reverse."
)
SHARED_EXPLAINED = (
    "In shared, h = tanh(x*w) feeds two later values (h + h*h uses it three times), so h's gradient is "
    "complete only after + and h*h have both run their _backward."
)


def _numbers(raw: list[Any]) -> list[float] | None:
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in raw):
        return None
    return [float(x) for x in raw]


def _same(x: float, y: float) -> bool:
    from chainrule.grading.grader import round9  # the one place grading rounds (grader imports us)

    return round9(x) == round9(y)


def diagnose(exercise_id: str, case: Any, raw: list[Any]) -> str | None:
    """A one-paragraph hint for a failed test, or None when no classic mistake fits."""
    got = _numbers(raw)
    if got is None:
        return "Every entry of grad must be a number (a float); check what you stored."
    want = list(case.expected)
    if case.inputs is not None:  # an exercise folder's case: its kind knows the classic mistakes
        from chainrule.grading.case_kinds import kind_of

        if any(math.isnan(x) or math.isinf(x) for x in got):
            return "A number is NaN or infinite: check for a division by zero, or values that grow without bound."
        return kind_of(case.expression).diagnose(case.inputs, got, want)
    if any(math.isnan(x) or math.isinf(x) for x in got):
        return "A gradient is NaN or infinite: check for a division, or an overflowing exp, in your code."
    if len(got) != len(want):
        return None
    if all(x == 0 for x in got) and any(not _same(w, 0.0) for w in want):
        if exercise_id == "neuron-grads":
            return "Every gradient is 0: fill grad[0], grad[1] and grad[2] before returning grad."
        if exercise_id == "local-gradients":
            return ("Every gradient is 0: nothing reached the inputs. Each _backward must add to its inputs' "
                    "grad, for example self.grad += out.grad for an addition.")
        return ("Every gradient is 0: the gradient never propagated. Set out.grad = 1, then call _backward() "
                "on every value from out back to the leaves, the topological order reversed; walking it "
                "forwards runs each _backward before its gradient has arrived.")
    if all(_same(g, -w) for g, w in zip(got, want)):
        return "Every gradient has the wrong sign: check a subtraction (1 - out**2, not out**2 - 1)."
    if exercise_id == "neuron-grads":
        return _neuron_hint(case, got)
    if case.expression == "reuse":
        return _reuse_hint(exercise_id, case, got, want)
    if case.expression == "shared":
        return _shared_hint(exercise_id, case, got)
    if case.expression == "chain" and _same(got[0], want[0]) and not _same(got[1], want[1]):
        return ("w is used in all ten steps, so its gradient must collect every use: accumulate with +=, "
                "and run each value's _backward exactly once, in reverse topological order.")
    return None


def _neuron_hint(case: Any, got: list[float]) -> str | None:
    x, w, b, out = case.args[0], case.args[1], case.args[2], case.args[3]
    (dn,) = TANH.local(None, out)  # tanh's slope from the op table: 1 - out^2
    if _same(got[0], x[0]) and _same(got[1], x[1]) and _same(got[2], 1.0) and not _same(dn, 1.0):
        return "You left out tanh's local derivative: multiply every gradient by 1 - out**2."
    if _same(got[0], dn * w[0]) and _same(got[1], dn * w[1]) and not _same(w[0], x[0]):
        return ("d out/d w1 is (1 - out**2) times the input x1 that w1 multiplies, not the weight itself; "
                "the same goes for w2.")
    if _same(got[2], 0.0) and not _same(dn, 0.0):
        return "d out/d b is (1 - out**2) * 1: the bias is added, so its local derivative is 1."
    return None


def _reuse_hint(exercise_id: str, case: Any, got: list[float], want: list[float]) -> str | None:
    a, b = case.args[1]
    if not _same(got[1], want[1]) or _same(got[0], want[0]):
        return None
    shares = {"b (the share from a*b)": b, "a (one share from a*a)": a, "2a (the share from a*a)": 2 * a}
    kept = next((label for label, share in shares.items() if _same(got[0], share)), None)
    if exercise_id == "local-gradients" or kept is not None:
        detail = f" It equals {kept} alone." if kept else ""
        return ("a is used three times (in a*b, and twice in a*a), so its gradient must collect every use: "
                f"accumulate with +=, not =, in every _backward.{detail}")
    return ("a is used three times (in a*b, and twice in a*a), so its gradient must collect every use exactly "
            "once. Build a topological order that remembers what it has seen, and run each value's _backward "
            "once, after every value that uses it (the order reversed); a walk that visits a value twice "
            "runs its _backward twice.")


def _close(got: list[float], want: list[float]) -> bool:
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12) for g, w in zip(got, want))


def _shared_hint(exercise_id: str, case: Any, got: list[float]) -> str | None:
    """Recognise the numbers of a walk without a topological order; else the general advice."""
    vals = case.args[1]
    detail = {
        "recursive": "It matches a recursion that calls _backward and then recurses into the inputs, with no "
                     "memory of what it has visited: h's _backward ran three times, each time with the part "
                     "of its gradient that had arrived so far.",
        "recursive-seen": "It matches a recursion that skips values it has already visited: h's _backward ran "
                          "once, but before h*h had sent h its share.",
    }
    for walk in WALKS:
        if _close(got, simulate_backward("shared", vals, walk)):
            return f"{NAIVE_RECURSION} {SHARED_EXPLAINED} {detail[walk]}"
    if exercise_id == "local-gradients":
        return (f"{SHARED_EXPLAINED} Each _backward must add its share with +=, never replace what an "
                "earlier use has sent.")
    return (f"{SHARED_EXPLAINED} Run each value's _backward exactly once, after every value that uses it: "
            "build a topological order first and walk it in reverse.")


def summary_hint(tests: list[dict], cases: list[Any]) -> str | None:
    """The whole result's hint when its signature is clear: every test passed except the shared ones,
    and their numbers are those of a walk without a topological order.

    neuron, reuse and chain are trees above their leaves, so a backward without a topological order
    still gets them right; only shared, where the interior value h is used more than once, shows it.
    """
    if cases and all(c.inputs is not None for c in cases):
        return _common_hint(tests)
    shared = [t for t, c in zip(tests, cases) if c.expression == "shared"]
    others = [t for t, c in zip(tests, cases) if c.expression != "shared"]
    if not shared or not others or any(t["status"] != "pass" for t in others):
        return None
    if any(t["status"] == "error" for t in shared):
        return None
    # Said only when some shared test's numbers were recognised as such a walk (not merely wrong).
    if not any(NAIVE_RECURSION in (t.get("message") or "") for t in shared if t["status"] == "fail"):
        return None
    return f"Only the shared tests fail. {NAIVE_RECURSION}"


def _common_hint(tests: list[dict]) -> str | None:
    """An exercise folder's result: the hint every failing test ends with, when they all give the same one."""
    failing = [t for t in tests if t["status"] == "fail"]
    hints = {(t.get("message") or "").rsplit("\n", 1)[-1] for t in failing}
    if len(failing) < 2 or len(hints) != 1:
        return None
    hint = hints.pop()
    return hint if hint and "): expected " not in hint else None  # a hint, not one of the numbers' lines
