"""When a lesson, and each of its sections, is finished: the one rule, and the one builder of its inputs,
which the lesson page, the path page, the teacher's grid, the gradebook and the CLI all show.

    work = learner_work(conn, "learner_id = ?", (learner_id,))          # {learner_id: Work}
    state = lesson_state(shape, work.get(learner_id, Work()))
    # shape: what the lesson asks for, from chainrule.lessons.lesson_shape(lesson_id):
    #   {"sections": ["01", ..., "08"], "predictions": [keys], "exercises": [ids], "quiz": [question ids]}

A section that asks for work (chainrule.sections) is finished when its work is: every prediction made,
every exercise passed (in any language, by a run graded here: an imported run counts for nothing),
every quiz question answered, the explanation written. Work the lesson does not ask for (a prediction
key or a question id it does not have) counts for nothing. A reading section before the first one with
work is finished once the learner has started the lesson (any of that work saved, code of one of its
exercises included); one after it (the recap) once every section with work is finished. The lesson is
finished when every section is.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record
from chainrule.progress.rows import sound_rows
from chainrule.sections import WORK_OF_SECTION

__all__ = ["COUNTED_PASS", "OWN_RUN", "Work", "finished", "learner_work", "lesson_state"]

# The runs that count, as SQL conditions on submissions (every reader of runs for credit, "finished" and the
# teacher's numbers uses these). A run counts when it is the learner's own run graded here (origin ''):
# never an imported one ('imported'), a regrade's run not applied or reverted ('regrade:<id>') or a run an
# applied regrade set aside ('superseded:<id>'). "Tried" is any run of the learner's own code (a regrade's
# run is the teacher's, of code the learner already ran).
COUNTED_PASS = "status = 'pass' AND origin = ''"
OWN_RUN = "origin NOT LIKE 'regrade:%'"


def finished(sections: list[str], totals: dict[str, int], done: dict[str, Any]) -> dict[str, Any]:
    """{"sections": [numbers finished, in order], "lesson": bool}: the rule itself.

    totals: how many predictions, exercises and quiz questions the lesson asks for. done: how many of
    each the learner did, "explanation" (written) and "started" (bools)."""
    def work_done(number: str) -> bool:
        part = WORK_OF_SECTION[number]
        if part == "explanation":
            return bool(done.get("explanation"))
        return int(done.get(part, 0)) >= int(totals.get(part, 0))

    work = [number for number in sections if number in WORK_OF_SECTION]
    all_work = all(work_done(number) for number in work)
    first_work = work[0] if work else None
    result = []
    for number in sections:
        if number in WORK_OF_SECTION:
            is_done = work_done(number)
        elif first_work is not None and number < first_work:
            is_done = bool(done.get("started"))
        else:
            is_done = all_work
        if is_done:
            result.append(number)
    return {"sections": result, "lesson": len(result) == len(sections) and bool(sections)}


@dataclass
class Work:
    """One learner's work, every lesson's: what "finished" is decided from."""

    predictions: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # lesson -> keys made
    passed: set[str] = field(default_factory=set)  # exercises with a passing run graded here
    tried: set[str] = field(default_factory=set)  # exercises with code saved or a run
    answered: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # lesson -> questions
    explained: set[str] = field(default_factory=set)  # lessons whose explanation is written


def learner_work(conn: Connection, learners: str, params: tuple[Any, ...]) -> dict[int, Work]:
    """Every learner's Work, for the learners that the SQL condition ``learners`` (on learner_id) selects;
    one read of each table, every row checked (progress/rows.py)."""
    work: dict[int, Work] = defaultdict(Work)

    def rows(table: str, columns: tuple[str, ...], sql: str) -> list[Record]:
        found = conn.execute(f"SELECT DISTINCT learner_id, {', '.join(columns)} FROM {table} WHERE {learners}{sql}",
                             params).fetchall()
        return sound_rows(table, columns, found, keep=1)

    for learner, lesson, key, _ in rows("predictions", ("lesson_id", "key", "value"), ""):
        work[learner].predictions[lesson].add(key)
    for learner, exercise in rows("submissions", ("exercise_id",), f" AND {COUNTED_PASS}"):
        work[learner].passed.add(exercise)
    for learner, exercise in rows("submissions", ("exercise_id",), f" AND {OWN_RUN}"):
        work[learner].tried.add(exercise)
    for learner, exercise in rows("code", ("exercise_id",), ""):
        work[learner].tried.add(exercise)
    for learner, lesson, question in rows("quiz_answers", ("lesson_id", "question_id"), ""):
        work[learner].answered[lesson].add(question)
    for learner, lesson in rows("explanations", ("lesson_id",), " AND text != ''"):
        work[learner].explained.add(lesson)
    return work


def lesson_state(shape: dict[str, Any], work: Work) -> dict[str, Any]:
    """Where a learner is in one lesson: {"sections", "lesson"} (finished), "started", "done" and "totals"
    (counted among what the lesson asks for), and "parts": each part of work the lesson has, done or not."""
    lesson = shape["id"]
    made = set(shape["predictions"]) & work.predictions.get(lesson, set())
    passed = set(shape["exercises"]) & work.passed
    answered = set(shape["quiz"]) & work.answered.get(lesson, set())
    done: dict[str, Any] = {"predictions": len(made), "exercises": len(passed), "quiz": len(answered),
                            "explanation": lesson in work.explained}
    done["started"] = bool(made or passed or answered or done["explanation"]
                           or set(shape["exercises"]) & work.tried)
    totals = {part: len(shape[part]) for part in ("predictions", "exercises", "quiz")}
    state = finished(shape["sections"], totals, done)
    parts = {part: number in state["sections"] for number, part in WORK_OF_SECTION.items()
             if number in shape["sections"] and (part == "explanation" or totals[part])}
    return state | {"started": done.pop("started"), "done": done, "totals": totals, "parts": parts,
                    "passed": sorted(passed), "answered": sorted(answered)}
