"""Case kinds on slopes in one variable: estimates by nudging, the rules, and the chain rule link by link.

    nudge-slopes   {"name", "function", "x", "hs": [numbers]}, the function one of ONE_VARIABLE;
                   call f(function, x, hs); expect (f(x + h) - f(x)) / h for every h, each f computed by
                   the engine (a forward pass on Values).
    rule-slopes    {"name", "x"}; call f(x); expect the derivative at x of each function of RULE_FUNCTIONS,
                   in order, from one backward pass each.
    chain-links    {"name", "links": [[op] or [op, c], ...], "x"}, op one of CHAIN_OPS; call f(links, x);
                   expect [y, dy/dx] for y = the links applied to x one after the other (a backward pass).

The functions are written so that the same float operations run on Values and on plain numbers, in the
same order as the exercises' starters write them, so every language can reach the engine's digits.
"""

from __future__ import annotations

import math
from typing import Callable

from chainrule.engine import Value
from chainrule.grading.json_objects import Case, JsonList
from chainrule.grading.kinds.base import (
    Attempt,
    CaseError,
    CaseKind,
    Fills,
    Mistake,
    all_zero,
    not_a_number,
    not_finite,
    number_field,
    numbers_field,
    sign_flipped,
)
from chainrule.grading.rounding import same_graded
from chainrule.number_text import format_number

__all__ = ["CHAIN_OPS", "ONE_VARIABLE", "RULE_FUNCTIONS", "SLOPE_KINDS", "chain_variant", "nudge_variant", "wrong_length"]

NOT_FINITE = "A number is NaN or infinite: check for a division by zero, or an h of 0."
EVERY_LINK = ("Every link on the way from x to y changes how much a nudge grows or shrinks: multiply all of their "
              "slopes.")

# --------------------------------------------------------------------------------- nudging a function

# The functions a nudge-slopes case may name; the starters define the same ones, written the same way.
ONE_VARIABLE: dict[str, Callable[[Value], Value]] = {
    "square": lambda x: x * x,
    "cube": lambda x: x * x * x,
    "poly": lambda x: 3 * x * x - 2 * x + 1,
    "wave": lambda x: (2 * x).tanh(),
}


def _on_engine(function: str, x: float) -> float:
    return ONE_VARIABLE[function](Value(x)).data


def _slope_on_engine(function: str, x: float) -> float:
    leaf = Value(x)
    ONE_VARIABLE[function](leaf).backward()
    return leaf.grad


def _nudge_inputs(case: Case) -> tuple[str, float, list[float]]:
    function = case.get("function")
    if function not in ONE_VARIABLE:
        raise CaseError(f"'function' must be one of {', '.join(ONE_VARIABLE)}, not {function!r}")
    hs = numbers_field(case, "hs")
    if any(h == 0 for h in hs):
        raise CaseError("every h in 'hs' must be a nudge other than 0")
    return function, number_field(case, "x"), hs


def nudge_variant(function: str, x: float, hs: list[float], variant: str) -> list[float]:
    """The estimates a learner's mistaken nudge gives (or the right one, variant "forward")."""
    def f(at: float) -> float:
        return _on_engine(function, at)

    formulas: dict[str, Callable[[float], float]] = {
        "forward": lambda h: (f(x + h) - f(x)) / h,
        "backward-difference": lambda h: (f(x) - f(x - h)) / h,
        "central-difference": lambda h: (f(x + h) - f(x - h)) / (2 * h),
        "no-divide": lambda h: f(x + h) - f(x),
        "times-h": lambda h: (f(x + h) - f(x)) * h,
    }
    return [formulas[variant](h) for h in hs]


def _nudge_expected(case: Case) -> list[float]:
    return nudge_variant(*_nudge_inputs(case), "forward")


def _replayed(variant: str) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        # Tighter than close_to: for tiny nudges every estimate agrees to a millionth, so only the digits
        # of the very formula the learner wrote (the same float operations) tell the variants apart.
        function, x, hs = attempt.args
        return {} if attempt.close_to(nudge_variant(function, x, hs, variant), rel=1e-12) and not attempt.matches(
            attempt.want) else None

    return recognise


def _exact_slope(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    function, x, hs = attempt.args
    exact = _slope_on_engine(function, x)
    return {} if attempt.close_to([exact] * len(hs), rel=1e-12) and not attempt.matches(attempt.want) else None


def wrong_length(count_of: Callable[[Attempt], int], what: str) -> Mistake:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        return {} if len(attempt.got) != count_of(attempt) else None

    return Mistake("wrong-length", what, recognise, about="a list of the wrong length")


NUDGE = CaseKind(
    "nudge-slopes",
    lambda case: list(_nudge_inputs(case)),
    _nudge_expected,
    lambda case: [f"slope estimate with h = {format_number(h)}" for h in case["hs"]],
    (
        wrong_length(lambda attempt: len(attempt.args[2]), "Return one estimate for every h in hs, in their order."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("all-zero", "Every estimate is 0: for each h, compute (f(x + h) - f(x)) / h as the worked example "
                "does, and put it in the list.", lambda attempt, run: {} if all_zero(attempt) else None,
                about="every estimate is 0"),
        sign_flipped("Every estimate has the wrong sign: the nudge is f(x + h) - f(x), the new value minus the "
                     "old one."),
        Mistake("backward-difference", "Your numbers are nudges to the left, (f(x) - f(x - h)) / h. Nudge to the "
                "right: (f(x + h) - f(x)) / h.", _replayed("backward-difference"),
                about="(f(x) - f(x - h)) / h"),
        Mistake("central-difference", "Your numbers are the two-sided estimate (f(x + h) - f(x - h)) / (2h). It is "
                "often better, but this exercise asks for the one-sided nudge (f(x + h) - f(x)) / h.",
                _replayed("central-difference"), about="(f(x + h) - f(x - h)) / (2h)"),
        Mistake("exact-slope", "You returned the true slope for every h. The task is the estimate each nudge "
                "gives, (f(x + h) - f(x)) / h, errors and all: watching them is the point.", _exact_slope,
                about="the exact derivative for every h"),
        Mistake("no-divide", "Your numbers are the change in f alone. A slope is a ratio: divide the change "
                "f(x + h) - f(x) by the nudge h.", _replayed("no-divide"), about="f(x + h) - f(x), not divided by h"),
        Mistake("times-h", "Your numbers multiply the change by h. A slope divides it: (f(x + h) - f(x)) / h.",
                _replayed("times-h"), about="the change times h"),
    ),
)

# --------------------------------------------------------------------------------- the rules

# The functions of the rule-slopes kind, in the order their derivatives are returned; each is written
# with the operations the rule it practises is about (and the same way in the starters' comments).
RULE_FUNCTIONS: tuple[tuple[str, Callable[[Value], Value]], ...] = (
    ("3x^2 + 2x - 5", lambda x: 3 * x * x + 2 * x - 5),
    ("x^5 - 4x^3 + x", lambda x: x ** 5 - 4 * x ** 3 + x),
    ("(x^2 + 1)(3x - 2)", lambda x: (x * x + 1) * (3 * x - 2)),
    ("2 / x", lambda x: 2 * x ** -1),
)

# Slopes a learner may write for each function instead, by mistake: {mistake: (function index, slope)}.
RULE_MISTAKES: dict[str, tuple[int, Callable[[float], float]]] = {
    "constant-kept": (0, lambda x: 6 * x + 2 - 5),
    "power-not-lowered": (1, lambda x: 5 * x ** 5 - 12 * x ** 3 + 1),
    "product-of-slopes": (2, lambda x: 2 * x * 3),
    "product-one-term": (2, lambda x: 2 * x * (3 * x - 2)),
    "negative-power": (3, lambda x: -2 * x ** -1),
}


def _rule_x(case: Case) -> float:
    x = number_field(case, "x")
    if x == 0:
        raise CaseError("'x' must not be 0: 2 / x has no slope there")
    return x


def _rule_expected(case: Case) -> list[float]:
    x = _rule_x(case)
    slopes = []
    for _, function in RULE_FUNCTIONS:
        leaf = Value(x)
        function(leaf).backward()
        slopes.append(leaf.grad)
    return slopes


def _left_at_zero(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    if len(attempt.got) != len(RULE_FUNCTIONS):
        return None
    unfilled = [name for (name, _), got, want in zip(RULE_FUNCTIONS, attempt.got, attempt.want)
                if got == 0 and not same_graded(want, 0.0)]
    if not unfilled:
        return None
    if len(unfilled) == 1:
        return {"slopes": f"The slope of {unfilled[0]} is"}
    return {"slopes": f"The slopes of {', '.join(unfilled[:-1])} and {unfilled[-1]} are"}


def _rule_mistake(name: str, message: str, about: str) -> Mistake:
    index, slope = RULE_MISTAKES[name]

    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        if len(attempt.got) != len(RULE_FUNCTIONS) or attempt.same(index):
            return None
        wrong = slope(attempt.args[0])
        close = math.isclose(attempt.got[index], wrong, rel_tol=1e-9, abs_tol=1e-9)
        return {} if close and not same_graded(wrong, attempt.want[index]) else None

    return Mistake(name, message, recognise, about=about)


RULES = CaseKind(
    "rule-slopes",
    lambda case: [_rule_x(case)],
    _rule_expected,
    lambda case: [f"slope of {name}" for name, _ in RULE_FUNCTIONS],
    (
        wrong_length(lambda attempt: len(RULE_FUNCTIONS),
                      f"Return a list of {len(RULE_FUNCTIONS)} slopes, one for each function, in the order given."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("left-at-zero", "{slopes} still 0: work each one out with the rules and put it in its place in the list.",
                _left_at_zero, fields=("slopes",), about="a slope left at 0"),
        _rule_mistake("constant-kept", "The slope of 3x^2 + 2x - 5 keeps the - 5. A constant does not move when x "
                      "is nudged, so its slope is 0: the answer is 6x + 2.", "a constant's slope kept"),
        _rule_mistake("power-not-lowered", "For x^5 - 4x^3 + x you brought the power down but kept it in the "
                      "exponent too. The power rule lowers it by one: x^n has the slope n x^(n-1).",
                      "n x^n instead of n x^(n-1)"),
        _rule_mistake("product-of-slopes", "For (x^2 + 1)(3x - 2) you multiplied the two slopes. The product rule "
                      "adds two terms: (slope of the first) × (the second) + (the first) × (slope of the second).",
                      "f' g' for the slope of f g"),
        _rule_mistake("product-one-term", "For (x^2 + 1)(3x - 2) you kept only one term of the product rule. Nudging "
                      "x moves both factors: add (x^2 + 1) × 3 to 2x(3x - 2).", "one term of the product rule"),
        _rule_mistake("negative-power", "For 2 / x = 2x^(-1) the power comes down as -1 and the exponent drops to "
                      "-2: the slope is -2x^(-2) = -2 / x^2.", "the exponent -1 kept"),
    ),
)

# --------------------------------------------------------------------------------- the chain rule, link by link

# Each op: how it acts on a Value, on a float, and its slope at the link's input u (given its output y).
# c is the link's constant (0.0 for a link that takes none, whose functions ignore it).
CHAIN_OPS: dict[str, tuple[Callable[[Value, float], Value], Callable[[float, float, float], float], str]] = {
    "add": (lambda u, c: u + c, lambda u, y, c: 1.0, "u + c"),
    "mul": (lambda u, c: u * c, lambda u, y, c: c, "c × u"),
    "square": (lambda u, c: u * u, lambda u, y, c: 2 * u, "u^2"),
    "tanh": (lambda u, c: u.tanh(), lambda u, y, c: 1 - y * y, "tanh(u)"),
    "exp": (lambda u, c: u.exp(), lambda u, y, c: y, "exp(u)"),
    "recip": (lambda u, c: 1 / u, lambda u, y, c: -1 / (u * u), "1 / u"),
}
_WITH_CONSTANT = ("add", "mul")


def _links(case: Case) -> tuple[list[JsonList], float]:
    links = case.get("links")
    if not isinstance(links, list) or not links:
        raise CaseError(f"'links' must be a non-empty list of [op] or [op, c], not {links!r}")
    for position, link in enumerate(links):
        where = f"link {position} ({link!r})"
        if not isinstance(link, list) or not link or link[0] not in CHAIN_OPS:
            raise CaseError(f"{where}: a link is [op] or [op, c] with op one of {', '.join(CHAIN_OPS)}")
        if link[0] in _WITH_CONSTANT:
            if len(link) != 2:
                raise CaseError(f"{where}: {link[0]} takes a constant: [\"{link[0]}\", c]")
            number_field({"c": link[1]}, "c")
        elif len(link) != 1:
            raise CaseError(f"{where}: {link[0]} takes no constant: [\"{link[0]}\"]")
    return links, number_field(case, "x")


def _chain_expected(case: Case) -> list[float]:
    links, x = _links(case)
    leaf = Value(x)
    out = leaf
    for op, *constant in links:
        out = CHAIN_OPS[op][0](out, float(constant[0]) if constant else 0.0)
    out.backward()
    return [out.data, leaf.grad]


def chain_variant(links: list[JsonList], x: float, variant: str) -> list[float]:
    """[y, slope] as a mistaken walk along the links computes them (plain floats)."""
    u, slopes = float(x), []
    for op, *constant in links:
        c = float(constant[0]) if constant else 0.0
        y = CHAIN_OPS[op][0](Value(u), c).data
        at = y if variant == "slope-at-output" else u
        slopes.append(CHAIN_OPS[op][1](at, CHAIN_OPS[op][0](Value(at), c).data, c))
        u = y
    if variant == "slopes-added":
        return [u, sum(slopes)]
    if variant == "last-link-only":
        return [u, slopes[-1]]
    if variant == "first-link-only":
        return [u, slopes[0]]
    return [u, math.prod(slopes)]


def _chain_replayed(variant: str) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        links, x = attempt.args
        if len(attempt.got) != 2 or not attempt.same(0) or len(links) < 2 and variant.endswith("only"):
            return None
        return {} if attempt.close_to(chain_variant(links, x, variant)) and not attempt.same(1) else None

    return recognise


def _slope_one(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if len(attempt.got) == 2 and attempt.same(0) and attempt.got[1] in (0.0, 1.0) and not attempt.same(
        1) else None


def _value_wrong(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if len(attempt.got) == 2 and not attempt.same(0) else None


def _value_unchanged(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    x = attempt.args[1]
    return {} if len(attempt.got) == 2 and same_graded(attempt.got[0], x) and not attempt.same(0) else None


CHAIN = CaseKind(
    "chain-links",
    lambda case: list(_links(case)),
    _chain_expected,
    lambda case: ["y", "dy/dx"],
    (
        wrong_length(lambda attempt: 2, "Return the list [y, slope]: the value after the last link, then dy/dx."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("value-unchanged", "y came back as x itself: move the value through every link, one after the "
                "other, as well as the slope.", _value_unchanged, about="y is x, unchanged"),
        Mistake("value-wrong", "The value y is wrong, so the links were not applied as listed: each link acts on "
                "the value the link before it made, starting from x.", _value_wrong, about="y is wrong"),
        Mistake("slope-unchanged", "The value is right but the slope never changed from where it started. At each "
                "link, multiply the slope so far by that link's own slope.", _slope_one,
                about="the slope left at 0 or 1"),
        Mistake("slopes-added", "You added the links' slopes. The chain rule multiplies them: a link that doubles "
                "its input doubles whatever slope reached it.", _chain_replayed("slopes-added"),
                about="the local slopes added, not multiplied"),
        Mistake("slope-at-output", "Each link's slope belongs at that link's input, the value before the link, "
                "not at its output. Work out the slope first, then move the value on.",
                _chain_replayed("slope-at-output"), about="each local slope taken at the link's output"),
        Mistake("last-link-only", f"Your slope is the last link's alone. {EVERY_LINK}",
                _chain_replayed("last-link-only"), about="only the last link's slope"),
        Mistake("first-link-only", f"Your slope is the first link's alone. {EVERY_LINK}",
                _chain_replayed("first-link-only"), about="only the first link's slope"),
    ),
)

SLOPE_KINDS = (NUDGE, RULES, CHAIN)
