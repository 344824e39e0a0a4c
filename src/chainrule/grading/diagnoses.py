"""Targeted hints for classic mistakes, recognised from the numbers a failing run produced.

The exercise's case kind lists the mistakes it knows, in the order they are tried (chainrule.grading.kinds);
the exercise folder may give any of them its own message ("diagnoses" in exercise.json). For each failing
test the first mistake that fits gives the hint; a test that raised gets the hint of the first mistake
whose `raised` recogniser reads that exception (Python's IndexError when a value is read before it is
computed means the same mistake as JavaScript's NaN). Then the whole run: a run-level mistake of the kind
that fits, else the hint every test that did not pass shares (when at least two did not; the shown ones
when any of them did not), becomes the summary, said once at the top of the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from chainrule.grading.exercise_folder import Exercise, GradingCase
from chainrule.grading.json_objects import JsonObject
from chainrule.grading.kinds.base import Attempt, format_message

__all__ = ["Diagnosis", "diagnose_run"]

_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


@dataclass(frozen=True)
class Diagnosis:
    hints: list[str | None]  # one per case: the hint for a failing test, else None
    summary: str | None  # for the whole result
    mistakes: list[str | None] = field(default_factory=list)  # one per case: the mistake its hint names
    summary_mistake: str | None = None  # the mistake the summary names


def _numbers(raw: list[object]) -> list[float] | None:
    """The numbers a test reported (a NaN or infinity as a runtime spells it), or None if some entry is none."""
    numbers = []
    for x in raw:
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            numbers.append(float(x))
        elif isinstance(x, str) and x in _SPECIAL:
            numbers.append(_SPECIAL[x])
        else:
            return None
    return numbers


def _recognise(exercise: Exercise, attempt: Attempt | None, run: list[Attempt], run_level: bool) -> tuple[str, str] | None:
    for mistake in exercise.kind.all_mistakes:
        if mistake.run_level != run_level:
            continue
        fills = mistake.recognise(attempt, run)  # type: ignore[arg-type]
        if fills is not None:
            return mistake.name, format_message(mistake, exercise.message(mistake.name, mistake.message), fills)
    return None


def _recognise_raised(exercise: Exercise, error: JsonObject, case: GradingCase) -> tuple[str, str] | None:
    for mistake in exercise.kind.mistakes:
        fills = mistake.raised(error, case.inputs) if mistake.raised is not None else None
        if fills is not None:
            return mistake.name, format_message(mistake, exercise.message(mistake.name, mistake.message), fills)
    return None


def diagnose_run(exercise: Exercise, cases: list[GradingCase], raws: list[list[Any] | None],
                 failing: list[bool], function: str = "your function",
                 errors: list[JsonObject | None] | None = None) -> Diagnosis:
    """Hints for a graded run: `raws` holds each test's reported list (None when it raised or never
    reported), `failing` whether its numbers were judged wrong, `errors` the exception each test raised
    (None for the others); `function` is the learner's function's name in their language, for messages."""
    hints: list[str | None] = [None] * len(cases)
    names: list[str | None] = [None] * len(cases)
    for index, error in enumerate(errors or []):
        if isinstance(error, dict) and index < len(cases):
            found = _recognise_raised(exercise, error, cases[index])
            if found is not None:
                names[index], hints[index] = found
    attempts: dict[int, Attempt] = {}
    for index, (case, raw) in enumerate(zip(cases, raws)):
        if raw is None:
            continue
        got = _numbers(raw)
        if got is None:
            if failing[index]:
                hints[index] = ("Every entry of grad must be a number (a float); check what you stored."
                                if exercise.kind.slot == "grad" else
                                f"Every entry of the list {function} returns must be a number.")
            continue
        attempts[index] = Attempt(case.inputs, case.args, got, list(case.expected), hidden=case.hidden)
    run = list(attempts.values())
    for index, attempt in attempts.items():
        if not failing[index]:
            continue
        found = _recognise(exercise, attempt, run, run_level=False)
        if found is not None:
            attempts[index] = replace(attempt, mistake=found[0])
            names[index], hints[index] = found
    run = list(attempts.values())
    summary = _recognise(exercise, None, run, run_level=True) if run else None
    if summary is not None:
        return Diagnosis(hints, summary[1], names, summary[0])
    # The mistake every test that did not pass shows (at least two): said once, in the first one's words.
    raised = [isinstance(error, dict) for error in (errors or [])] + [False] * len(cases)
    not_passing = [i for i in range(len(cases)) if failing[i] or raised[i]]
    # The shown cases are chosen to tell mistakes apart; a hidden draw may fit two, so they speak when they fail.
    shown_not_passing = [i for i in not_passing if not cases[i].hidden]
    not_passing = shown_not_passing or not_passing
    shared = {names[i] for i in not_passing}
    if len(not_passing) >= 2 and len(shared) == 1 and None not in shared:
        return Diagnosis(hints, hints[not_passing[0]], names, names[not_passing[0]])
    return Diagnosis(hints, None, names)
