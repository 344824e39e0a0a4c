"""A learner's own progress file, added to their class account: nothing in it becomes a grade as written.

    outcome = add_own_file(store.for_learner(account.id), created_at, document, quota=quota)
    outcome.added        # per section, what was added
    outcome.grade_again  # [RunToGrade]: the code to grade again through the class's own grader

A file made by `chainrule progress export` is the learner's own account of their work, and anyone can
write one by hand. So, before anything is kept:
- every time in it (progress/exchange.py's TIME_FIELDS: every section's, help used too) must lie within
  the account's life (from its creation to now, with a few minutes' allowance for a clock that is off): a
  file dated before the learner joined, or in the future, is refused whole;
- each quiz answer and prediction is checked against the lesson's own answer (lessons/checking.py): its
  "correct" is ours, not the file's; one the lesson has no question or prediction for counts for nothing;
- runs are kept as imported (their code and times, shown to the teacher as imported), and count for
  nothing: no pass, no diagnosis, no attempt. The latest imported code of each exercise and language the
  class offers is graded again by the class's own grader (the same path as "Run tests"), and that new run
  counts like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from chainrule import lessons
from chainrule.errors import InputError
from chainrule.progress.store import ProgressStore

IMPORTED = "imported"
CLOCK_ALLOWANCE = timedelta(minutes=10)
MAX_TIMES_SHOWN = 3


@dataclass(frozen=True)
class RunToGrade:
    exercise_id: str
    language: str
    source: str


@dataclass(frozen=True)
class Outcome:
    added: dict[str, int]
    grade_again: list[RunToGrade]


def check_times(document: dict, created_at: datetime, now: datetime) -> None:
    """InputError (a 422) naming the times outside the account's life, if any."""
    from chainrule.progress.exchange import stated_times

    earliest, latest = created_at - CLOCK_ALLOWANCE, now + CLOCK_ALLOWANCE
    outside = [(where, at) for where, at in stated_times(document)
               if not earliest <= datetime.fromisoformat(at).astimezone(timezone.utc) <= latest]
    if outside:
        shown = "; ".join(f"{where} is {at}" for where, at in outside[:MAX_TIMES_SHOWN])
        more = f" (and {len(outside) - MAX_TIMES_SHOWN} more)" if len(outside) > MAX_TIMES_SHOWN else ""
        raise InputError(
            f"This file holds work dated outside your account's life in this class (from "
            f"{created_at.isoformat(timespec='minutes')} to now): {shown}{more}. Only work done since you joined "
            "can be added; nothing was imported.")


def _checked(lesson_id: str, check: Any) -> bool:
    """The lesson's own verdict; False for an item the lesson does not have, or an answer it cannot read."""
    if lesson_id not in lessons.lesson_ids():
        return False
    try:
        return bool(check().get("correct"))
    except (LookupError, ValueError):
        return False


def check_answers(document: dict) -> dict:
    """The document with every quiz answer and prediction marked right or wrong by the lesson itself."""
    checked = dict(document)
    checked["quiz_answers"] = [
        record | {"correct": _checked(record["lesson_id"], lambda r=record: lessons.check_quiz_answer(
            r["lesson_id"], r["question_id"], r["answer"]))} for record in document["quiz_answers"]]
    checked["predictions"] = [
        record | {"correct": _checked(record["lesson_id"], lambda r=record: lessons.check_prediction(
            r["lesson_id"], r["key"], float(r["value"])))} for record in document["predictions"]]
    return checked


def runs_to_grade(new_runs: list[tuple]) -> list[RunToGrade]:
    """The latest new run of each exercise and language this class offers (its code is graded again)."""
    catalog = lessons.exercise_catalog()
    latest: dict[tuple[str, str], RunToGrade] = {}
    for exercise, language, source, _at in sorted(new_runs, key=lambda run: datetime.fromisoformat(run[3])):
        offered = catalog.get(exercise, {}).get("languages", list(lessons.LANGUAGES)) if exercise in catalog else []
        if language in offered:
            latest[exercise, language] = RunToGrade(exercise, language, source)
    return list(latest.values())


def add_own_file(store: ProgressStore, created_at: datetime, document: Any, *, quota: int | None) -> Outcome:
    """Check ``document`` (a validated export) and keep it as the learner's, imported (module docstring)."""
    from chainrule.progress import validate_export

    validate_export(document)
    check_times(document, created_at, store.now())
    added = store.import_runs(check_answers(document), origin=IMPORTED, quota=quota)
    return Outcome({key: value for key, value in added.items() if key != "new_runs"},
                   runs_to_grade(added["new_runs"]))
