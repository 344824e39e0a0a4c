"""Case kinds on functions of two inputs: a gradient by nudging, a gradient by the rules, and the sum over paths.

    nudge-gradient  {"name", "function", "point": [x, y], "h"}, the function one of TWO_VARIABLE; call
                    f(function, point, h); expect [(f(x + h, y) - f(x, y)) / h, (f(x, y + h) - f(x, y)) / h],
                    each f computed by the engine (a forward pass on Values).
    rule-gradient   {"name", "x", "y"}; call f(x, y); expect [df/dx, df/dy] of each function of
                    GRADIENT_FUNCTIONS in turn, from one backward pass each.
    path-sum        {"name", "graph", "t"}, the graph one of PATH_GRAPHS (t feeds u and v, both feed z); call
                    f(graph, t); expect [z, the path through u, the path through v, dz/dt]: a path's share is
                    dz/du × du/dt (each factor from its own backward pass), and dz/dt is the engine's gradient.

As in slopes.py, each function does the float operations of the starters' own, in their order: every
language reaches the engine's digits.
"""

from __future__ import annotations

import math
from typing import Callable

from chainrule.engine import Value
from chainrule.grading.json_objects import Case
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
from chainrule.grading.kinds.slopes import wrong_length
from chainrule.grading.rounding import same_graded

__all__ = ["GRADIENT_FUNCTIONS", "GRADIENT_KINDS", "PATH_GRAPHS", "TWO_VARIABLE", "nudge_gradient_variant",
           "path_shares"]

NOT_FINITE = "A number is NaN or infinite: check for a division by zero, or an h of 0."
Two = Callable[[Value, Value], Value]

# --------------------------------------------------------------------------------- nudging each input

# The functions a nudge-gradient case may name; the starters define the same ones, written the same way.
TWO_VARIABLE: dict[str, Two] = {
    "bowl": lambda x, y: x * x + 3 * y * y,
    "saddle": lambda x, y: x * x - y * y,
    "ridge": lambda x, y: (x * y).tanh() + x,
}


def _nudge_inputs(case: Case) -> tuple[str, list[float], float]:
    function = case.get("function")
    if function not in TWO_VARIABLE:
        raise CaseError(f"'function' must be one of {', '.join(TWO_VARIABLE)}, not {function!r}")
    point = numbers_field(case, "point", at_least=2)
    if len(point) != 2:
        raise CaseError(f"'point' must be [x, y], two numbers, not {case.get('point')!r}")
    h = number_field(case, "h")
    if h == 0:
        raise CaseError("'h' must be a nudge other than 0")
    return function, point, h


def nudge_gradient_variant(function: str, point: list[float], h: float, variant: str) -> list[float]:
    """The two estimates a learner's mistaken nudging gives (or the right ones, variant "each")."""
    def f(x: float, y: float) -> float:
        return TWO_VARIABLE[function](Value(x), Value(y)).data

    x, y = point
    base = f(x, y)
    along_x, along_y, both = f(x + h, y) - base, f(x, y + h) - base, f(x + h, y + h) - base
    if variant == "both-nudged":
        return [both / h, both / h]
    if variant == "not-restored":
        return [along_x / h, (f(x + h, y + h) - f(x + h, y)) / h]
    if variant == "no-divide":
        return [along_x, along_y]
    if variant == "swapped":
        return [along_y / h, along_x / h]
    return [along_x / h, along_y / h]


def _exact_gradient(function: str, point: list[float]) -> list[float]:
    x, y = Value(point[0]), Value(point[1])
    TWO_VARIABLE[function](x, y).backward()
    return [x.grad, y.grad]


def _nudge_replayed(variant: str) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        function, point, h = attempt.args
        wrong = nudge_gradient_variant(function, point, h, variant)
        return {} if attempt.close_to(wrong, rel=1e-12) and not attempt.matches(attempt.want) else None

    return recognise


def _exact_instead(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    function, point, _ = attempt.args
    exact = _exact_gradient(function, point)
    return {} if attempt.close_to(exact, rel=1e-12) and not attempt.matches(attempt.want) else None


NUDGE_GRADIENT = CaseKind(
    "nudge-gradient",
    lambda case: list(_nudge_inputs(case)),
    lambda case: nudge_gradient_variant(*_nudge_inputs(case), "each"),
    lambda case: ["estimate of df/dx", "estimate of df/dy"],
    (
        wrong_length(lambda attempt: 2, "Return two estimates, [df/dx, df/dy]: one nudge of x, then one of y."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("all-zero", "Both estimates are 0: nudge x alone and divide how far f moved by h, then do the same "
                "for y.", lambda attempt, run: {} if all_zero(attempt) else None, about="both estimates are 0"),
        sign_flipped("Both estimates have the wrong sign: the change is the nudged value minus the old one, "
                     "f(x + h, y) - f(x, y)."),
        Mistake("both-nudged", "You moved x and y together, so both numbers are the same. A partial derivative "
                "nudges one input and holds the other still: f(x + h, y) for x, f(x, y + h) for y.",
                _nudge_replayed("both-nudged"), about="x and y nudged together for both estimates"),
        Mistake("not-restored", "The estimate for y was taken with x still nudged: f(x + h, y + h) - f(x + h, y). "
                "Put x back before you nudge y, so that only y moves.", _nudge_replayed("not-restored"),
                about="x left nudged while y is nudged"),
        Mistake("swapped", "The two estimates are in the wrong order: the first is for x, the second for y.",
                _nudge_replayed("swapped"), about="[df/dy, df/dx]"),
        Mistake("no-divide", "Your numbers are the changes in f alone. A slope is a ratio: divide each change by "
                "the nudge h.", _nudge_replayed("no-divide"), about="the changes, not divided by h"),
        Mistake("exact-gradient", "You returned the exact partial derivatives. The task is the estimates the "
                "nudges give, (f(x + h, y) - f(x, y)) / h and its partner for y, errors and all.", _exact_instead,
                about="the exact gradient instead of the estimates"),
    ),
)

# --------------------------------------------------------------------------------- the rules, one input at a time

# The functions of the rule-gradient kind, in the order their gradients are returned; each is written with
# the operations its rule is about (and the same way in the starters' comments).
GRADIENT_FUNCTIONS: tuple[tuple[str, Two], ...] = (
    ("x^2 y + 3y", lambda x, y: x * x * y + 3 * y),
    ("x y^3 - 2x", lambda x, y: x * y * y * y - 2 * x),
    ("(x + 2y)^2", lambda x, y: (x + 2 * y) * (x + 2 * y)),
)
PARTIALS = ("x", "y")

# Partials a learner may write instead, by mistake: {mistake: (position in the list, the wrong partial)}.
GRADIENT_MISTAKES: dict[str, tuple[int, Callable[[float, float], float]]] = {
    "other-input-dropped": (0, lambda x, y: 2 * x),
    "other-input-zero": (1, lambda x, y: 3.0),
    "power-not-lowered": (3, lambda x, y: 3 * x * y * y * y),
    "inner-slope-missing": (5, lambda x, y: 2 * (x + 2 * y)),
}


def _xy(case: Case) -> list[float]:
    return [number_field(case, "x"), number_field(case, "y")]


def _rule_expected(case: Case) -> list[float]:
    partials: list[float] = []
    for _, function in GRADIENT_FUNCTIONS:
        x, y = (Value(v) for v in _xy(case))
        function(x, y).backward()
        partials += [x.grad, y.grad]
    return partials


def _rule_labels(case: Case) -> list[str]:
    return [f"d/d{name} of {formula}" for formula, _ in GRADIENT_FUNCTIONS for name in PARTIALS]


def left_at_zero(labels: Callable[[Case], list[str]], message: str) -> Mistake:
    """Some numbers still 0 where the engine's are not: {left} names them by their labels."""
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        if len(attempt.got) != len(attempt.want):
            return None
        unfilled = [label for label, got, want in zip(labels(attempt.inputs), attempt.got, attempt.want)
                    if got == 0 and not same_graded(want, 0.0)]
        return {"left": ", ".join(unfilled)} if unfilled else None

    return Mistake("left-at-zero", message, recognise, fields=("left",), about="a number left at 0")


def _rule_mistake(name: str, message: str, about: str) -> Mistake:
    index, partial = GRADIENT_MISTAKES[name]

    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        if len(attempt.got) != len(attempt.want) or attempt.same(index):
            return None
        wrong = partial(*attempt.args)
        close = math.isclose(attempt.got[index], wrong, rel_tol=1e-9, abs_tol=1e-9)
        return {} if close and not same_graded(wrong, attempt.want[index]) else None

    return Mistake(name, message, recognise, about=about)


def _pairs_swapped(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    swapped = [attempt.want[i + 1 - 2 * (i % 2)] for i in range(len(attempt.want))]
    return {} if attempt.matches(swapped) and not attempt.matches(attempt.want) else None


RULE_GRADIENT = CaseKind(
    "rule-gradient",
    lambda case: _xy(case),
    _rule_expected,
    _rule_labels,
    (
        wrong_length(lambda attempt: 2 * len(GRADIENT_FUNCTIONS),
                      f"Return {2 * len(GRADIENT_FUNCTIONS)} numbers: df/dx, then df/dy, for each function in turn."),
        not_a_number(), not_finite(NOT_FINITE),
        left_at_zero(_rule_labels, "Still 0: {left}. Work each one out and put it in its place in the list."),
        Mistake("swapped", "Every pair is in the wrong order: for each function, first df/dx, then df/dy.",
                _pairs_swapped, about="df/dy before df/dx"),
        _rule_mistake("other-input-dropped", "For x^2 y + 3y, the partial in x keeps y as a constant factor: "
                      "x^2 times y has the partial 2x × y, not 2x.", "y dropped from d/dx of x^2 y"),
        _rule_mistake("other-input-zero", "For x^2 y + 3y, the partial in y treats x^2 as a constant factor, "
                      "not as 0: x^2 y has the partial x^2 in y, so the answer is x^2 + 3.",
                      "x^2 y given the partial 0 in y"),
        _rule_mistake("power-not-lowered", "For x y^3 - 2x you brought the power down but kept it in the exponent: "
                      "y^3 has the partial 3y^2 in y, so the answer is 3x y^2.", "3 x y^3 instead of 3 x y^2"),
        _rule_mistake("inner-slope-missing", "For (x + 2y)^2 in y, the chain rule multiplies by the inner slope "
                      "too: the inside x + 2y moves 2 for each unit of y, so the answer is 2(x + 2y) × 2.",
                      "the inner slope 2 left out"),
    ),
)

# --------------------------------------------------------------------------------- the sum over paths

# The graphs of the path-sum kind: t feeds u and v, and z is made of both. Each is (u of t, v of t, z of u, v).
PATH_GRAPHS: dict[str, tuple[Callable[[Value], Value], Callable[[Value], Value], Two]] = {
    "product": (lambda t: t * t, lambda t: 3 * t + 1, lambda u, v: u * v),
    "wave": (lambda t: t.tanh(), lambda t: t * t, lambda u, v: u * v + u),
}


def _path_inputs(case: Case) -> tuple[str, float]:
    graph = case.get("graph")
    if graph not in PATH_GRAPHS:
        raise CaseError(f"'graph' must be one of {', '.join(PATH_GRAPHS)}, not {graph!r}")
    return graph, number_field(case, "t")


def _slope(function: Callable[[Value], Value], t: float) -> float:
    leaf = Value(t)
    function(leaf).backward()
    return leaf.grad


def path_shares(graph: str, t: float) -> dict[str, float]:
    """z, the partials dz/du and dz/dv, the slopes du/dt and dv/dt, and dz/dt, each from the engine."""
    u_of, v_of, z_of = PATH_GRAPHS[graph]
    leaf = Value(t)
    u, v = u_of(leaf), v_of(leaf)
    z = z_of(u, v)
    z.backward()
    return {"z": z.data, "dz/du": u.grad, "dz/dv": v.grad, "du/dt": _slope(u_of, t), "dv/dt": _slope(v_of, t),
            "dz/dt": leaf.grad}


PATH_LABELS = ["z", "the path through u", "the path through v", "dz/dt"]


def _path_expected(case: Case) -> list[float]:
    s = path_shares(*_path_inputs(case))
    return [s["z"], s["dz/du"] * s["du/dt"], s["dz/dv"] * s["dv/dt"], s["dz/dt"]]


def _path_mistake(wrong: Callable[[dict[str, float], Attempt], bool]) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        if len(attempt.got) != 4 or attempt.matches(attempt.want):
            return None
        return {} if wrong(path_shares(*attempt.args), attempt) else None

    return recognise


def _close(got: float, number: float) -> bool:
    return math.isclose(got, number, rel_tol=1e-9, abs_tol=1e-9)


PATH_SUM = CaseKind(
    "path-sum",
    lambda case: list(_path_inputs(case)),
    _path_expected,
    lambda case: PATH_LABELS,
    (
        wrong_length(lambda attempt: 4, "Return four numbers: [z, the path through u, the path through v, dz/dt]."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("value-wrong", "z is wrong: compute u and v from t first, then z from u and v.",
                lambda attempt, run: {} if len(attempt.got) == 4 and not attempt.same(0) else None,
                about="z is wrong"),
        left_at_zero(lambda case: PATH_LABELS, "Still 0: {left}. Work it out and put it in its place in the list."),
        Mistake("local-only", "A path's share is wrong: it is the partial of z along the path times the slope of "
                "the step from t, dz/du × du/dt. You left out du/dt (or dv/dt).",
                _path_mistake(lambda s, a: _close(a.got[1], s["dz/du"]) or _close(a.got[2], s["dz/dv"])),
                about="a path's share without the step from t"),
        Mistake("one-path-only", "dz/dt is a single path's share. t reaches z along two paths, through u and through "
                "v: add their shares.",
                _path_mistake(lambda s, a: a.same(1) and a.same(2) and (a.same(3) is False) and (
                    _close(a.got[3], a.want[1]) or _close(a.got[3], a.want[2]))),
                about="dz/dt is one path's share"),
        Mistake("paths-multiplied", "You multiplied the two paths' shares. Paths add: the nudge of t reaches z by "
                "each path, and the two moves add up.",
                _path_mistake(lambda s, a: a.same(1) and a.same(2) and not a.same(3) and _close(
                    a.got[3], a.want[1] * a.want[2])),
                about="the shares multiplied"),
    ),
)

GRADIENT_KINDS = (NUDGE_GRADIENT, RULE_GRADIENT, PATH_SUM)
