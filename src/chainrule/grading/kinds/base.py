"""What a case kind is: how to call the learner's function, the engine's answer, and the mistakes it knows.

A kind turns a case as written in exercise.json (inputs only) into the call's arguments, the expected
numbers (computed by the engine) and a label per number. It also lists the classic mistakes it can
recognise from the numbers a failing test produced: each `Mistake` has a name, a message (an exercise
folder may replace it, see docs/authoring.md) and a recogniser.

A recogniser sees one `Attempt` (the case, the numbers got and wanted) and the whole run (every
attempt of the same grading, so "nothing reached any input" can be told from "this one test is 0").
It returns None when the mistake does not fit, else the fill-ins of the message's `{name}` fields.
A run-level mistake (`run_level=True`) is recognised on the whole result and its message is added
to the result's summary.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from typing import Callable

from chainrule.grading.json_objects import Case, JsonList, JsonObject
from chainrule.grading.rounding import all_same_graded, same_graded

__all__ = [
    "Attempt", "CaseError", "CaseKind", "Fills", "Mistake", "RaisedRecogniser", "Recogniser", "all_zero", "check_messages", "describe", "first_different",
    "format_message", "message_fields", "not_finite", "number_field", "numbers_field", "run_all_zero", "sign_flipped",
]


class CaseError(ValueError):
    """A case in an exercise.json is malformed; the message says which field and what is allowed."""


@dataclass(frozen=True)
class Attempt:
    """One test of a run that reported numbers: its case as written, its call's args, got and wanted."""

    inputs: Case
    args: JsonList
    got: list[float]  # NaN and infinities included; entries that are no number never reach a recogniser
    want: list[float]
    mistake: str | None = None  # the mistake recognised for it (filled in for run-level recognisers)
    hidden: bool = False  # a case drawn fresh for this run, not one the learner was shown

    def same(self, index: int) -> bool:
        return index < len(self.got) and same_graded(self.got[index], self.want[index])

    def matches(self, numbers: list[float]) -> bool:
        return all_same_graded(self.got, numbers)

    def close_to(self, numbers: list[float], rel: float = 1e-6) -> bool:
        """Equal to a replayed mistake's numbers up to rounding: a replay sums in its own order, and a run
        that diverges amplifies the difference far past the graded digits."""
        return len(self.got) == len(numbers) and all(
            math.isclose(g, n, rel_tol=rel, abs_tol=1e-9) for g, n in zip(self.got, numbers))


Fills = dict[str, str]
Recogniser = Callable[[Attempt, list[Attempt]], Fills | None]
# A test that raised instead of returning numbers: (the error as the harness reported it, {"type",
# "message", "line"}; the case's inputs as written) -> the fill-ins when the error means this mistake.
RaisedRecogniser = Callable[[JsonObject, Case], Fills | None]


@dataclass(frozen=True)
class Mistake:
    name: str
    message: str  # may hold {field} names, filled from what the recogniser returns
    recognise: Recogniser
    fields: tuple[str, ...] = ()
    run_level: bool = False
    about: str = ""  # one line for docs and for `lessons check`'s list of mistakes
    raised: RaisedRecogniser | None = None  # also recognised from an exception (Python's IndexError, ...)


@dataclass(frozen=True)
class CaseKind:
    name: str
    args: Callable[[Case], JsonList]
    expected: Callable[[Case], list[float]]
    labels: Callable[[Case], list[str]]
    mistakes: tuple[Mistake, ...] = field(default=())
    slot: str = "result"  # what the learner's list is called in messages: "grad" or "result"
    # Why a case's inputs sit on a kink of the function (a hinge's corner), where the engine and a learner's
    # float rounding may take different sides; None when they do not. Hidden draws avoid kinks.
    kink: Callable[[Case], str | None] | None = None
    # A driver: the stem of a file in grading/runtime (DRIVER.py, DRIVER.js) run beside the learner's code, whose
    # function `entry` each case calls; the learner's file then defines classes the driver uses (engine_build.py).
    driver: str | None = None
    entry: str | None = None
    # What a case's raw numbers carry beyond the graded ones (engine_build.py's walked graph): (the graded
    # numbers, a JSON drawing or None), read before anything judges the numbers.
    drawing: Callable[[Case, list[object]], tuple[list[object], JsonObject | None]] | None = None

    @property
    def all_mistakes(self) -> tuple[Mistake, ...]:
        """The kind's own mistakes, then those every kind knows."""
        return (*self.mistakes, *COMMON_MISTAKES)

    def mistake(self, name: str) -> Mistake | None:
        return next((m for m in self.all_mistakes if m.name == name), None)


def message_fields(message: str) -> set[str]:
    """The {field} names a message uses; ValueError for unbalanced braces."""
    return {name for _, name, _, _ in string.Formatter().parse(message) if name is not None}


def number_field(case: Case, key: str) -> float:
    value = case.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CaseError(f"{key!r} must be a finite number, not {value!r}")
    return float(value)


def numbers_field(case: Case, key: str, at_least: int = 1) -> list[float]:
    value = case.get(key)
    if not isinstance(value, list) or len(value) < at_least:
        raise CaseError(f"{key!r} must be a list of at least {at_least} number(s), not {value!r}")
    return [number_field({key: v}, key) for v in value]


def _any_not_finite(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if any(math.isnan(x) or math.isinf(x) for x in attempt.got) else None


def _only_nan(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if any(math.isnan(x) for x in attempt.got) and not any(math.isinf(x) for x in attempt.got) else None


# NaN with no infinity beside it is rarely a size problem: it is a calculation on something that is no number.
NOT_A_NUMBER = ("A number is NaN (not a number) and none is infinite, so nothing grew too large: NaN comes from "
                "a calculation on something that is not a number, such as a value read from a position or a name "
                "that holds nothing (in JavaScript values[i] is undefined when i is undefined or past the end, and "
                "Math.tanh(undefined) is NaN), or from 0 / 0. Check that every step reads a value that exists and "
                "is already computed.")


def not_a_number() -> Mistake:
    """A NaN among the numbers and no infinity: tried before `not_finite`, which names sizes."""
    return Mistake("not-a-number", NOT_A_NUMBER, _only_nan, about="a number is NaN and none is infinite")


def not_finite(message: str) -> Mistake:
    """The mistake every kind knows: a NaN or an infinity among the numbers."""
    return Mistake("not-finite", message, _any_not_finite, about="a number is NaN or infinite")


def all_zero(attempt: Attempt) -> bool:
    return bool(attempt.got) and all(x == 0 for x in attempt.got) and any(
        not same_graded(w, 0.0) for w in attempt.want)


def sign_flipped(message: str) -> Mistake:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        flipped = [-w for w in attempt.want]
        return {} if attempt.matches(flipped) and not attempt.matches(attempt.want) else None

    return Mistake("sign-flipped", message, recognise, about="every number has the wrong sign")


def run_all_zero(message: str, name: str = "nothing-reached") -> Mistake:
    """Every number of this test is 0, and so is every number of every other test of the run."""
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        return {} if all_zero(attempt) and all(all(x == 0 for x in other.got) for other in run) else None

    return Mistake(name, message, recognise, about="every number of every test is 0")


def _fits_shown_only(attempt: Attempt | None, run: list[Attempt]) -> Fills | None:
    shown = [a for a in run if not a.hidden]
    hidden = [a for a in run if a.hidden]
    if shown and all(a.matches(a.want) for a in shown) and any(not a.matches(a.want) for a in hidden):
        return {}
    return None


FITS_SHOWN_ONLY = (
    "Your code gives the right numbers for every case shown, but not for inputs drawn fresh for this run: it may "
    "only fit the cases shown (a table of their answers, or a rule that happens to hold for them). Compute the "
    "numbers from the inputs, whatever they are.")
COMMON_MISTAKES: tuple[Mistake, ...] = (
    Mistake("fits-shown-only", FITS_SHOWN_ONLY, _fits_shown_only, run_level=True,
            about="every shown case passes and a hidden one fails"),
)


def describe(kind: CaseKind) -> str:
    return ", ".join(m.name for m in kind.all_mistakes)


def format_message(mistake: Mistake, message: str, fills: Fills) -> str:
    return message.format_map({name: fills.get(name, "") for name in mistake.fields}) if mistake.fields else message


def check_messages(kind: CaseKind, messages: object) -> str | None:
    """Why a folder's "diagnoses" cannot be used by `kind` (None when it can)."""
    if not isinstance(messages, dict):
        return 'diagnoses must be an object {"mistake name": "message", ...}'
    for name, message in messages.items():
        mistake = kind.mistake(name)
        if mistake is None:
            return (f"diagnoses names the mistake {name!r}, which the case kind {kind.name!r} cannot recognise; "
                    f"its mistakes are: {describe(kind)}")
        if not isinstance(message, str) or not message.strip():
            return f"diagnoses[{name!r}] must be a non-empty message"
        try:
            used = message_fields(message)
        except ValueError:
            return f"diagnoses[{name!r}]: unbalanced {{ or }} (write {{{{ and }}}} for a brace)"
        unknown = used - set(mistake.fields)
        if unknown:
            allowed = ", ".join("{" + f + "}" for f in mistake.fields) or "none"
            return (f"diagnoses[{name!r}] uses {', '.join('{' + f + '}' for f in sorted(unknown))}; "
                    f"the fields this mistake fills are: {allowed}")
    return None


def first_different(attempt: Attempt) -> int | None:
    return next((i for i in range(min(len(attempt.got), len(attempt.want))) if not attempt.same(i)), None)
