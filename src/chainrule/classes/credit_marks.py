"""A teacher's hand on the gradebook: the one function that applies overrides and excuses to the credit the
late policy computed (classes/deadlines.py asks it for every learner and lesson, so the page, the CSV, the CLI
and the LMS score all see the same), and the rules of what a mark may be. classes/overrides.py sets them.

A lesson's mark replaces its credit: "override" gives the credit the teacher wrote (0 to its number of
sections), "excuse" leaves the lesson out: it earns nothing and its sections leave the total's "out of".
An exercise's mark changes the work the rule of "finished" sees (progress/finished.py): "override" 1 counts
the exercise as passed on time, 0 as not passed; "excuse" takes it out of what the lesson asks of this
learner (its section is finished by the other exercises). Each mark has a reason; undoing it gives back the
computed credit.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

from chainrule.errors import InputError
from chainrule.number_text import count_text, format_number
from chainrule.progress.shapes import Mark

__all__ = ["EXCUSE", "MAX_REASON", "OVERRIDE", "check_credit", "check_reason", "marked_credit"]

OVERRIDE, EXCUSE = "override", "excuse"
MAX_REASON = 500  # characters of a mark's reason
ON_TIME = datetime(1970, 1, 1, tzinfo=timezone.utc)  # an exercise credited by hand is done before any date


def check_reason(reason: Any) -> str:
    """A mark's reason: required, at most MAX_REASON characters, one paragraph of text."""
    text = " ".join(reason.split()) if isinstance(reason, str) else ""
    if not text:
        raise InputError("give a reason: the audit log keeps it beside the change, for the learner's sake and yours",
                         field="reason")
    if len(text) > MAX_REASON:
        raise InputError(f"the reason has {count_text(len(text), 'character')}: give at most {MAX_REASON}", field="reason")
    return text


def check_credit(shape: dict[str, Any], exercise: str | None, credit: Any) -> float:
    """The credit a teacher may give: a lesson 0 to its number of sections (a multiple of 0.01), an exercise
    0 (not passed) or 1 (passed on time)."""
    if isinstance(credit, bool) or not isinstance(credit, (int, float)) or credit != credit:
        credit = -1
    if exercise:
        if credit not in (0, 1):
            raise InputError(f"an exercise's credit is 0 (not passed) or 1 (passed on time), not {credit!r}",
                             field="credit")
        return float(credit)
    most = len(shape["sections"])
    if not 0 <= credit <= most or abs(round(credit * 100) - credit * 100) > 1e-6:
        raise InputError(f"the credit of {shape['id']!r} is a number from 0 to {most} (its sections), in steps "
                         "of 0.01", field="credit")
    return float(credit)


def marked_credit(shape: dict[str, Any], times: list[tuple], marks: dict[tuple[int, str, str], Mark], learner: int,
                  compute: Callable[[dict[str, Any], list[tuple]], dict[str, Any]]) -> dict[str, Any]:
    """One learner's credit in one lesson with the teacher's marks: compute(shape, times) is the late policy's
    credit (deadlines._lesson_credit); exercise marks change what it is given, a lesson mark its result. Adds
    "counted" (the sections the lesson counts for: 0 when excused), "mark" (the lesson's, or None) and
    "exercise_marks" ({exercise: mark})."""
    lesson = shape["id"]
    exercise_marks = {exercise: marks[(learner, lesson, exercise)] for exercise in shape["exercises"]
                      if (learner, lesson, exercise) in marks}
    if exercise_marks:
        excused = {exercise for exercise, mark in exercise_marks.items() if mark["kind"] == EXCUSE}
        given = {exercise for exercise, mark in exercise_marks.items() if mark["kind"] == OVERRIDE}
        shape = shape | {"exercises": [exercise for exercise in shape["exercises"] if exercise not in excused]}
        times = [piece for piece in times if not (piece[0] == "pass" and piece[2] in given)]
        times += [("pass", "", exercise, ON_TIME) for exercise in sorted(given) if exercise_marks[exercise]["credit"]]
    entry = compute(shape, times) | {"counted": len(shape["sections"]), "mark": marks.get((learner, lesson, "")),
                                     "exercise_marks": exercise_marks}
    mark = entry["mark"]
    if mark is not None and mark["kind"] == OVERRIDE:
        credit = float(mark["credit"])
        entry |= {"credit": credit, "credit_text": format_number(credit),
                  "score_text": f"{format_number(credit)} of {format_number(len(shape['sections']))}"}
    elif mark is not None:
        entry |= {"credit": 0.0, "credit_text": "excused", "score_text": "excused", "counted": 0}
    return entry
