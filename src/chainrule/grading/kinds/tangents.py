"""Case kinds on forward mode: tangents carried beside the values, one sweep per direction.

    expression-jvp  {"name", "expression", "values": [numbers], "tangents": [numbers]}, the expression one of
                    chainrule.grading.expressions (neuron, reuse, chain, shared); call
                    f(expression, values, tangents); expect [out, d out along the tangents] (the engine's
                    `chainrule.forward.jvp`).
    jacobian        {"name", "function", "values": [numbers]}, the function one of VECTOR_FUNCTIONS;
                    call f(function, values); expect the Jacobian d y_i / d x_j row by row (i the output,
                    j the input), each column from one forward sweep of the engine seeded at x_j.

The mistakes of a hand-written dual number are replayed with `Dual`, a dual number whose product or tanh
rule can be given a classic error: one term of the product rule, the tangents multiplied together, tanh's
slope taken at its input or left out.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from chainrule.engine import Value
from chainrule.forward import jvp
from chainrule.grading.expressions import BUILDERS, INPUT_NAMES
from chainrule.grading.json_objects import Case
from chainrule.grading.kinds.base import (
    Attempt,
    CaseError,
    CaseKind,
    Fills,
    Mistake,
    not_a_number,
    not_finite,
    numbers_field,
)
from chainrule.grading.rounding import same_graded
from chainrule.number_text import count_text

__all__ = ["Dual", "TANGENT_KINDS", "VECTOR_FUNCTIONS", "dual_variant", "jacobian_on_engine"]

NOT_FINITE = "A number is NaN or infinite: check for a division, or an overflowing exp, in your code."

# --------------------------------------------------------------------------------- dual numbers

# Classic mistakes in a dual number's rules: {name: (product rule, tanh rule)} as functions of the parts.
_PRODUCT: dict[str, Callable[[float, float, float, float], float]] = {
    "right": lambda av, at, bv, bt: at * bv + av * bt,
    "left-term": lambda av, at, bv, bt: at * bv,
    "right-term": lambda av, at, bv, bt: av * bt,
    "tangents-multiplied": lambda av, at, bv, bt: at * bt,
}
_TANH: dict[str, Callable[[float, float, float], float]] = {
    "right": lambda av, at, y: (1 - y * y) * at,
    "slope-at-input": lambda av, at, y: (1 - av * av) * at,
    "no-slope": lambda av, at, y: at,
    "slope-only": lambda av, at, y: 1 - y * y,
}


class Dual:
    """A value and its tangent, with + * and tanh; `product` and `tanh` name the rules it uses."""

    def __init__(self, value: float, tangent: float = 0.0, product: str = "right", tanh: str = "right") -> None:
        self.value, self.tangent, self.product, self.rule = float(value), float(tangent), product, tanh

    def _lift(self, other: "Dual | float") -> "Dual":
        return other if isinstance(other, Dual) else Dual(other, 0.0, self.product, self.rule)

    def __add__(self, other: "Dual | float") -> "Dual":
        other = self._lift(other)
        return Dual(self.value + other.value, self.tangent + other.tangent, self.product, self.rule)

    def __mul__(self, other: "Dual | float") -> "Dual":
        other = self._lift(other)
        tangent = _PRODUCT[self.product](self.value, self.tangent, other.value, other.tangent)
        return Dual(self.value * other.value, tangent, self.product, self.rule)

    __radd__ = __add__
    __rmul__ = __mul__

    def tanh(self) -> "Dual":
        y = math.tanh(self.value)
        return Dual(y, _TANH[self.rule](self.value, self.tangent, y), self.product, self.rule)


def dual_variant(expression: str, values: Sequence[float], tangents: Sequence[float], product: str = "right",
                 tanh: str = "right") -> list[float]:
    """[out, its tangent] of a named expression, carried by dual numbers with the given rules."""
    out = BUILDERS[expression]([Dual(v, t, product, tanh) for v, t in zip(values, tangents)])
    return [out.value, out.tangent]


def _jvp_inputs(case: Case) -> tuple[str, list[float], list[float]]:
    expression = case.get("expression")
    if expression not in INPUT_NAMES:
        raise CaseError(f"'expression' must be one of {', '.join(INPUT_NAMES)}, not {expression!r}")
    names = INPUT_NAMES[expression]
    values, tangents = numbers_field(case, "values"), numbers_field(case, "tangents")
    if len(values) != len(names) or len(tangents) != len(names):
        raise CaseError(f"{expression} takes {count_text(len(names), 'value')} ({', '.join(names)}) and as many tangents, "
                        f"not {len(values)} and {len(tangents)}")
    return expression, values, tangents


def _jvp_expected(case: Case) -> list[float]:
    expression, values, tangents = _jvp_inputs(case)
    value, tangent = jvp(lambda *leaves: BUILDERS[expression](list(leaves)), values, tangents)
    return [value, tangent]


def _dual_mistake(name: str, message: str, about: str, rules: list[tuple[str, str]],
                  unless: Sequence[tuple[str, str]] = ()) -> Mistake:
    """A test whose numbers one of `rules` gives, and none of `unless` (where a case cannot tell two
    mistakes apart, such as a' × b' and a' × b when b' is 0, neither is named)."""
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        if len(attempt.got) != 2 or attempt.same(1):
            return None
        expression, values, tangents = attempt.args
        fits = lambda rule: attempt.close_to(dual_variant(expression, values, tangents, *rule))  # noqa: E731
        return {} if any(map(fits, rules)) and not any(map(fits, unless)) else None

    return Mistake(name, message, recognise, about=about)


def _tangent_never_set(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    """Run level: every value right, every tangent 0 where some should not be."""
    complete = [a for a in run if len(a.got) == 2]
    if not complete or any(not a.same(0) or a.got[1] != 0.0 for a in complete):
        return None
    return {} if any(not same_graded(a.want[1], 0.0) for a in complete) else None


def _value_wrong(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if len(attempt.got) == 2 and not attempt.same(0) else None


JVP = CaseKind(
    "expression-jvp",
    lambda case: list(_jvp_inputs(case)),
    _jvp_expected,
    lambda case: ["out", "tangent of out"],
    (
        Mistake("wrong-length", "tangent_of returns the list [out.value, out.tangent]: keep that line as it is.",
                lambda attempt, run: {} if len(attempt.got) != 2 else None, about="not two numbers"),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("value-wrong", "The value itself is wrong: a rule must compute the value exactly as a plain "
                "number would (a + b, a × b, tanh(a)); only the tangent is new.", _value_wrong,
                about="the value is wrong"),
        _dual_mistake("product-one-term", "Your product's tangent keeps one term of the product rule. A nudge "
                      "moves both factors: the tangent of a × b is a' × b + a × b'.",
                      "one term of the product rule", [("left-term", "right"), ("right-term", "right")],
                      unless=[("tangents-multiplied", "right")]),
        _dual_mistake("tangents-multiplied", "Your product's tangent multiplies the two tangents. The product rule "
                      "pairs each tangent with the other factor's value: a' × b + a × b'.",
                      "a' × b' for a product", [("tangents-multiplied", "right")],
                      unless=[("left-term", "right"), ("right-term", "right")]),
        _dual_mistake("tanh-slope-at-input", "Your tanh uses 1 - a^2 with a its input. Its slope is 1 - y^2 with "
                      "y = tanh(a), the output: compute y first, then the tangent (1 - y^2) × a'.",
                      "tanh's slope from its input", [("right", "slope-at-input")]),
        _dual_mistake("no-tanh-slope", "Your tanh passes its input's tangent through unchanged. It must scale it "
                      "by tanh's slope: (1 - y^2) × a', with y the output.", "tanh without its slope",
                      [("right", "no-slope")]),
        _dual_mistake("tanh-slope-only", "Your tanh's tangent is its slope alone. The tangent is that slope times "
                      "the tangent that came in: (1 - y^2) × a'.", "tanh's slope without the incoming tangent",
                      [("right", "slope-only")]),
        Mistake("tangent-never-set", "Every value is right and every tangent is 0: the tangents never left the "
                "inputs. Each rule must return a new Dual whose tangent comes from its inputs' tangents.",
                _tangent_never_set, run_level=True, about="(result) every tangent is 0"),
    ),
)

# --------------------------------------------------------------------------------- a Jacobian, column by column

# Functions of several inputs with several outputs, written with + * and tanh only (the starters' Dual
# class has those): {name: (number of inputs, the outputs as a function of the list of inputs)}.
VECTOR_FUNCTIONS: dict[str, tuple[int, Callable[[list[Value]], list[Value]]]] = {
    "spread": (1, lambda x: [x[0] * x[0], x[0].tanh(), x[0] * x[0].tanh()]),
    "gather": (4, lambda x: [x[0] * x[1] + (x[2] * x[3]).tanh()]),
    "layer": (3, lambda x: [(x[0] * x[1] + x[2]).tanh(), x[0] * x[1] * x[2]]),
    "swap": (2, lambda x: [x[0] * x[1], x[0] + x[1] * x[1]]),
}


def _jacobian_inputs(case: Case) -> tuple[str, list[float]]:
    function = case.get("function")
    if function not in VECTOR_FUNCTIONS:
        raise CaseError(f"'function' must be one of {', '.join(VECTOR_FUNCTIONS)}, not {function!r}")
    values = numbers_field(case, "values")
    if len(values) != VECTOR_FUNCTIONS[function][0]:
        raise CaseError(f"{function} takes {count_text(VECTOR_FUNCTIONS[function][0], 'value')}, not {len(values)}")
    return function, values


def jacobian_on_engine(function: str, values: list[float]) -> list[list[float]]:
    """Rows d y_i / d x_j, each column j from one forward sweep of the engine seeded at x_j."""
    count, outputs = VECTOR_FUNCTIONS[function]
    columns = []
    for j in range(count):
        seed = [1.0 if k == j else 0.0 for k in range(count)]
        _, tangents = jvp(lambda *leaves: outputs(list(leaves)), values, seed)
        columns.append(list(tangents))
    return [list(row) for row in zip(*columns)]


def _shape(attempt: Attempt) -> tuple[int, int]:
    function, _ = attempt.args
    return len(attempt.want) // VECTOR_FUNCTIONS[function][0], VECTOR_FUNCTIONS[function][0]


def _transposed(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    rows, cols = _shape(attempt)
    if rows == 1 or cols == 1 or len(attempt.got) != len(attempt.want):
        return None
    by_column = [attempt.want[i * cols + j] for j in range(cols) for i in range(rows)]
    return {} if attempt.matches(by_column) else None


def _all_seeded(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    rows, cols = _shape(attempt)
    if cols == 1 or len(attempt.got) != len(attempt.want):
        return None
    sums = [sum(attempt.want[i * cols:(i + 1) * cols]) for i in range(rows)]
    return {} if attempt.close_to([sums[i] for i in range(rows) for _ in range(cols)]) else None


def _one_sweep(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    rows, cols = _shape(attempt)
    if cols == 1 or len(attempt.got) != len(attempt.want):
        return None
    first = [attempt.want[i * cols] for i in range(rows)]
    return {} if attempt.close_to([first[i] if j == 0 else 0.0 for i in range(rows) for j in range(cols)]) else None


JACOBIAN = CaseKind(
    "jacobian",
    lambda case: list(_jacobian_inputs(case)),
    lambda case: [d for row in jacobian_on_engine(*_jacobian_inputs(case)) for d in row],
    lambda case: [f"d y{i + 1}/d x{j + 1}" for i, row in enumerate(jacobian_on_engine(*_jacobian_inputs(case)))
                  for j in range(len(row))],
    (
        Mistake("wrong-length", "Return every entry of the Jacobian in one list: one row per output, each row "
                "holding one slope per input.",
                lambda attempt, run: {} if len(attempt.got) != len(attempt.want) else None,
                about="not outputs × inputs numbers"),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("transposed", "Your numbers are right but in columns: list them row by row, first every "
                "d y1/d xj for j = 1, 2, ..., then the row of y2, and so on.", _transposed,
                about="the entries column by column"),
        Mistake("all-seeded", "Every column of yours is the same: it matches one sweep with every input's tangent "
                "set to 1, which adds the columns together. Seed one input at a time (tangent 1 for it, 0 for "
                "the others), one sweep per input.", _all_seeded, about="one sweep with every tangent 1"),
        Mistake("one-sweep", "Only the first column is filled in: one forward sweep gives the slopes with respect "
                "to one input. Run one sweep per input, seeding each input in turn.", _one_sweep,
                about="only the first input's column"),
    ),
)

TANGENT_KINDS = (JVP, JACOBIAN)
