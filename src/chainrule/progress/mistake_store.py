"""The SQL behind the class's common mistakes (classes/misconceptions.py holds the rules): the class's graded
runs that did not pass, counted per exercise, and the newest of them whose result names a mistake.

    found = MistakeStore(store).runs_not_passed(class_id, limit=2000)
    found.per_exercise   # exercise_id, runs, learners: every run of the class's learners that did not pass
    found.named, found.runs   # how many name a mistake; the newest ``limit`` of those (learner_id, id,
                              # exercise_id, language, at, result: the result's JSON text), newest first
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from chainrule.progress.class_store import CLASS_LEARNERS
from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

__all__ = ["MistakeStore", "RunsNotPassed"]

# The runs that count (origin ''): a regrade's once applied, in place of those it graded again; never imported ones.
NOT_PASSED = f"{CLASS_LEARNERS} AND origin = '' AND status != 'pass'"
# A result that names a mistake holds '"mistake": "' (a test's) or '"diagnosis_mistake": "' (the run's), as
# record_submission writes it (json.dumps); one without holds neither. The reader parses each result it gets,
# so a learner's printed output that happens to hold these words costs a parse, never a wrong count.
NAMES_A_MISTAKE = "result LIKE '%mistake\": \"%'"


class RunsNotPassed(NamedTuple):
    per_exercise: list[Record]  # exercise_id, runs, learners
    named: int  # how many runs that did not pass have a result naming a mistake
    runs: list[Record]  # the newest of those: learner_id, id, exercise_id, language, at, result


class MistakeStore:
    def __init__(self, store: ProgressStore) -> None:
        self.database = store.database

    def runs_not_passed(self, class_id: int, limit: int) -> RunsNotPassed:
        """The class's learners' own runs that did not pass: counted per exercise, and the newest ``limit`` of
        those whose result names a mistake; all read in one snapshot."""

        def work(conn: Connection) -> RunsNotPassed:
            per_exercise = conn.execute(
                f"SELECT exercise_id, COUNT(*) AS runs, COUNT(DISTINCT learner_id) AS learners FROM submissions "
                f"WHERE {NOT_PASSED} GROUP BY exercise_id ORDER BY exercise_id", (class_id,)).fetchall()
            named = conn.one(f"SELECT COUNT(*) AS n FROM submissions WHERE {NOT_PASSED} AND {NAMES_A_MISTAKE}",
                             (class_id,)).n
            rows = conn.execute(
                f"SELECT learner_id, id, exercise_id, language, at, result FROM submissions "
                f"WHERE {NOT_PASSED} AND {NAMES_A_MISTAKE} ORDER BY id DESC LIMIT ?", (class_id, int(limit))).fetchall()
            return RunsNotPassed(per_exercise, int(named), rows)

        return self.database.read(work, snapshot=True)
