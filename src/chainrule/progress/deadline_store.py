"""The SQL of due dates (schema migration 9): a class's time zone and late policy, due dates per lesson or
exercise, learners' extensions, and the times of each learner's work that credit is judged by.
classes/deadlines.py holds the rules and the verbs (set_policy, set_due, extend); every statement lives here,
in the save_* methods those verbs call once they have checked what they save.

Every change is written to the audit log in its own transaction (progress/audit_store.py's audited_write),
which raises the event of a change to credit (progress/credit_changes.py's scores_changed) in the same
transaction: the LMS score scan computes the learners' scores again, and a score that changed goes through the
outbox (classes/lti_scores.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple, TypeVar

from chainrule.progress.audit_store import Actor, AuditLog, audited_write
from chainrule.progress.class_store import CLASS_LEARNERS
from chainrule.progress.connection import Connection
from chainrule.progress.finished import COUNTED_PASS, OWN_RUN
from chainrule.progress.mark_store import marks_of
from chainrule.progress.shapes import DeadlineSettings

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")


class WorkTime(NamedTuple):
    """One piece of work "finished" counts and when it was first done (DeadlineStore.work_times)."""

    learner: int
    kind: str  # 'prediction', 'pass', 'tried', 'answer' or 'explanation'
    lesson: str  # '' for a run or code
    item: str  # the prediction's key, the exercise, the question; '' for an explanation
    at: str


__all__ = ["DeadlineStore", "WorkTime"]


def _policy(time_zone: str, late_policy: str, late_percent: int) -> dict[str, str]:
    return {"time_zone": time_zone, "late": late_policy if late_policy == "no-credit" else f"{int(late_percent)}%"}


class DeadlineStore:
    def __init__(self, store: ProgressStore) -> None:
        self.store = store
        self.database = store.database

    def _read(self, work: Callable[[Connection], T]) -> T:
        return self.database.read(work, snapshot=True)

    def settings(self, class_id: int) -> DeadlineSettings:
        """{"time_zone", "late_policy", "late_percent", "due": {(lesson, exercise): due},
        "extensions": {(learner, lesson): due}, "marks": the teacher's (mark_store.marks_of)} of one class."""

        def work(conn: Connection) -> DeadlineSettings:
            zone, policy, percent = conn.one(
                "SELECT time_zone, late_policy, late_percent FROM classes WHERE id = ?", (class_id,))
            due = conn.execute("SELECT lesson_id, exercise_id, due FROM due_dates WHERE class_id = ?",
                               (class_id,)).fetchall()
            extended = conn.execute(
                f"SELECT learner_id, lesson_id, due FROM extensions WHERE {CLASS_LEARNERS}", (class_id,)).fetchall()
            return {"time_zone": zone, "late_policy": policy, "late_percent": int(percent),
                    "due": {(lesson, exercise): at for lesson, exercise, at in due},
                    "extensions": {(int(learner), lesson): at for learner, lesson, at in extended},
                    "marks": marks_of(conn, class_id)}

        return self._read(work)

    def save_policy(self, class_id: int, time_zone: str, late_policy: str, late_percent: int, by: Actor) -> None:
        def work(conn: Connection, log: AuditLog) -> None:
            before = conn.one("SELECT time_zone, late_policy, late_percent FROM classes WHERE id = ?", (class_id,))
            conn.execute("UPDATE classes SET time_zone = ?, late_policy = ?, late_percent = ? WHERE id = ?",
                         (time_zone, late_policy, int(late_percent), class_id))
            log.add("late-policy", before=_policy(*before), after=_policy(time_zone, late_policy, late_percent))

        audited_write(self.store, by, class_id, work)

    def save_due(self, class_id: int, lesson_id: str, exercise_id: str, due: str | None, by: Actor) -> None:
        """Set (or, with None, remove) a lesson's ('' exercise) or an exercise's due date."""

        def work(conn: Connection, log: AuditLog) -> None:
            before = conn.execute("SELECT due FROM due_dates WHERE class_id = ? AND lesson_id = ? AND exercise_id = ?",
                                  (class_id, lesson_id, exercise_id)).fetchone()
            if due is None:
                conn.execute("DELETE FROM due_dates WHERE class_id = ? AND lesson_id = ? AND exercise_id = ?",
                             (class_id, lesson_id, exercise_id))
            else:
                conn.execute("INSERT INTO due_dates (class_id, lesson_id, exercise_id, due) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT (class_id, lesson_id, exercise_id) DO UPDATE SET due = excluded.due",
                             (class_id, lesson_id, exercise_id, due))
            log.add("due-date", lesson=lesson_id, exercise=exercise_id, before={"due": before and before[0]},
                    after={"due": due})

        audited_write(self.store, by, class_id, work)

    def save_extensions(self, class_id: int, extensions: list[tuple[int, str, str | None]], by: Actor) -> None:
        """Each (learner, lesson, due or None: removed), all in one transaction (a CSV is taken whole)."""

        def work(conn: Connection, log: AuditLog) -> None:
            for learner, lesson, due in extensions:
                before = conn.execute("SELECT due FROM extensions WHERE learner_id = ? AND lesson_id = ?",
                                      (learner, lesson)).fetchone()
                if due is None:
                    conn.execute("DELETE FROM extensions WHERE learner_id = ? AND lesson_id = ?", (learner, lesson))
                else:
                    conn.execute("INSERT INTO extensions (learner_id, lesson_id, due) VALUES (?, ?, ?) "
                                 "ON CONFLICT (learner_id, lesson_id) DO UPDATE SET due = excluded.due",
                                 (learner, lesson, due))
                log.add("extension", learner=learner, lesson=lesson, before={"due": before and before[0]},
                        after={"due": due})

        audited_write(self.store, by, class_id, work)

    def work_times(self, class_id: int, learner_ids: list[int] | None = None) -> list[WorkTime]:
        """(learner, kind, lesson or '', item, first time) of every piece of work "finished" counts, for the
        class's learners (or those of them in ``learner_ids``): kind 'prediction' (lesson, key), 'pass' and 'tried' ('', exercise:
        a passing run that counts; a run or code saved), 'answer' (lesson, question), 'explanation' (lesson,
        ''). The time is when it was first done: a run's work time (when the server accepted it), the first
        answer, the prediction first made, the explanation first written, the code first saved (a re-save
        after the due date does not make it late). A row whose values are not text is left out (the reader of times skips a time it
        cannot read)."""
        queries = (
            ("prediction", "lesson_id, key, COALESCE(first_at, at)", "predictions", ""),
            ("pass", "'', exercise_id, MIN(at)", "submissions", f" AND {COUNTED_PASS} GROUP BY learner_id, exercise_id"),
            ("tried", "'', exercise_id, MIN(at)", "submissions", f" AND {OWN_RUN} GROUP BY learner_id, exercise_id"),
            ("tried", "'', exercise_id, MIN(COALESCE(first_at, at))", "code", " GROUP BY learner_id, exercise_id"),
            ("answer", "lesson_id, question_id, MIN(at)", "quiz_answers", " GROUP BY learner_id, lesson_id, question_id"),
            ("explanation", "lesson_id, '', COALESCE(first_at, at)", "explanations", " AND text != ''"),
        )

        learners = CLASS_LEARNERS
        params: tuple[int, ...] = (int(class_id),)
        if learner_ids is not None:
            learners += f" AND learner_id IN ({', '.join('?' for _ in learner_ids)})"
            params += tuple(int(learner) for learner in learner_ids)

        def work(conn: Connection) -> list[WorkTime]:
            found = []
            for kind, columns, table, rest in queries:
                rows = conn.execute(f"SELECT learner_id, {columns} FROM {table} WHERE {learners}{rest}",
                                    params).fetchall()
                found += [WorkTime(int(learner), kind, lesson, item, at) for learner, lesson, item, at in rows
                          if isinstance(lesson, str) and isinstance(item, str) and isinstance(at, str)]
            return found

        return self._read(work)
