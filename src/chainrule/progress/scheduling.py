"""Spaced-repetition scheduling: FSRS via py-fsrs, plus the human phrase for an interval.

The scheduling itself is py-fsrs's; this module chooses its settings (with FSRS's parameters fitted to the
logs when a fit predicted held-out reviews better than the defaults: progress/fitting.py) and words the
result.

Settings: py-fsrs defaults (desired retention 0.9, default weights, relearning step of 10 minutes)
except ``learning_steps=()``: a quiz question answered in a lesson goes straight to the review
state, so a right first answer comes back after days ("again in 2 days"), as the lesson promises,
rather than after py-fsrs's default learning steps of 1 and 10 minutes.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Sequence

from fsrs import Rating, Scheduler

from chainrule.progress.connection import Connection
from chainrule.progress.shapes import DueReview, Schedule

#: Keyword arguments given to fsrs.Scheduler besides enable_fuzzing (documented in docs/progress.md).
SCHEDULER_SETTINGS: dict[str, Any] = {"learning_steps": ()}


def make_scheduler(fuzzing: bool = True, parameters: Sequence[float] | None = None) -> Scheduler:
    """The FSRS scheduler the store uses; ``fuzzing=False`` makes intervals deterministic (tests);
    ``parameters``: FSRS's 21 weights fitted to review logs (progress/fitting.py), default py-fsrs's."""
    if parameters is None:
        return Scheduler(enable_fuzzing=fuzzing, **SCHEDULER_SETTINGS)
    return Scheduler(parameters=tuple(parameters), enable_fuzzing=fuzzing, **SCHEDULER_SETTINGS)


def fit_scope(kind: str, number: int) -> str:
    """Where a fit is kept: 'learner:<id>' (a personal store's learner) or 'class:<id>' (a class's pool)."""
    return f"{kind}:{int(number)}"


def fitted_parameters(conn: Connection, learner_id: int) -> list[float] | None:
    """The fitted parameters that schedule this learner's cards: the learner's own fit if used, else the
    fit of the learner's class if used, else None (py-fsrs's defaults)."""
    row = conn.execute(
        "SELECT parameters FROM scheduler_fits WHERE used = 1 AND scope IN (?, "
        "(SELECT 'class:' || class_id FROM accounts WHERE id = ?)) ORDER BY scope DESC LIMIT 1",
        (fit_scope("learner", learner_id), int(learner_id)),
    ).fetchone()
    return None if row is None else [float(x) for x in json.loads(row.parameters)]


def interleave_lessons(due: Sequence[DueReview]) -> list[DueReview]:
    """The due questions mixed across lessons: one from each lesson in turn (the lesson whose earliest
    question is due first leads), each lesson's own questions in the order they are due.

    Interleaved practice, moving between kinds of problem, makes a learner pick the rule each question
    needs instead of repeating the one just used; a queue sorted by due time alone would hand back a
    whole lesson's quiz in a row, since its questions were answered together.
    """
    by_lesson: dict[str, list[DueReview]] = {}
    for item in due:  # already in due order: the first lesson seen has the earliest question
        by_lesson.setdefault(item["lesson_id"], []).append(item)
    queues = list(by_lesson.values())
    mixed: list[DueReview] = []
    for turn in range(max((len(queue) for queue in queues), default=0)):
        mixed.extend(queue[turn] for queue in queues if turn < len(queue))
    return mixed


def rating_for(correct: bool) -> Rating:
    """A right answer is Rating.Good, a wrong one Rating.Again."""
    return Rating.Good if correct else Rating.Again


def _plural(count: int, unit: str) -> str:
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


def interval_phrase(interval: timedelta) -> str:
    """Say when a question comes back: "again in 10 minutes", "again in 3 hours", "again in 2 days".

    Under an hour: minutes (at least 1); under a day: hours; otherwise whole days, rounded
    to the nearest day (an interval of 2.4 days reads "again in 2 days").
    """
    seconds = max(interval.total_seconds(), 0.0)
    if seconds < 60 * 60:
        return "again in " + _plural(max(1, round(seconds / 60)), "minute")
    if seconds < 24 * 60 * 60:
        hours = round(seconds / 3600)
        if hours >= 24:
            return "again in 1 day"
        return "again in " + _plural(hours, "hour")
    return "again in " + _plural(round(seconds / 86400), "day")


def schedule_summary(card_due: datetime, reviewed_at: datetime) -> Schedule:
    """The dict answer_question/review return: due (ISO 8601), interval_days and the phrase."""
    interval = card_due - reviewed_at
    return {
        "due": card_due.isoformat(),
        "interval_days": interval.total_seconds() / 86400.0,
        "text": interval_phrase(interval),
    }
