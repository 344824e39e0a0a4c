"""The SQL of a teacher's marks on the gradebook (schema migration 13): a learner's credit of a lesson or an
exercise overridden or excused, with a reason. classes/overrides.py holds the rules. Each change is audited
(audit_store.py's audited_write, which raises credit_changes.scores_changed for the learner: the LMS score
scan looks at them again, in the same transaction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chainrule.progress.audit_store import Actor, AuditLog, audited_write
from chainrule.progress.class_store import CLASS_LEARNERS
from chainrule.progress.connection import Connection
from chainrule.progress.shapes import Mark

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

__all__ = ["MarkStore", "marks_of"]


def marks_of(conn: Connection, class_id: int) -> dict[tuple[int, str, str], Mark]:
    """{(learner, lesson, exercise or ''): {"kind", "credit", "reason"}} of the class's learners."""
    rows = conn.execute(f"SELECT learner_id, lesson_id, exercise_id, kind, credit, reason FROM credit_marks "
                        f"WHERE {CLASS_LEARNERS}", (class_id,)).fetchall()
    return {(int(learner), lesson, exercise): {"kind": kind, "credit": None if credit is None else float(credit),
                                                "reason": reason}
            for learner, lesson, exercise, kind, credit, reason in rows}


def _mark(conn: Connection, learner: int, lesson: str, exercise: str) -> Mark | None:
    row = conn.execute("SELECT kind, credit, reason FROM credit_marks WHERE learner_id = ? AND lesson_id = ? AND "
                       "exercise_id = ?", (learner, lesson, exercise)).fetchone()
    return None if row is None else {"kind": row.kind, "credit": None if row.credit is None else float(row.credit),
                                     "reason": row.reason}


class MarkStore:
    def __init__(self, store: ProgressStore) -> None:
        self.store = store

    def marks(self, class_id: int) -> dict[tuple[int, str, str], Mark]:
        return self.store.database.read(lambda conn: marks_of(conn, class_id))

    def set_mark(self, class_id: int, learner: int, lesson: str, exercise: str, kind: str | None,
                 credit: float | None, reason: str, by: Actor, credit_before: object, credit_after: object) -> Mark | None:
        """Set the mark (kind None: undo it, back to the computed credit); the mark it replaced, or None.
        credit_before, credit_after: the learner's credit there without and with this change, for the log."""

        def work(conn: Connection, log: AuditLog) -> Mark | None:
            was = _mark(conn, learner, lesson, exercise)
            if kind is None:
                conn.execute("DELETE FROM credit_marks WHERE learner_id = ? AND lesson_id = ? AND exercise_id = ?",
                             (learner, lesson, exercise))
            else:
                conn.execute("INSERT INTO credit_marks (class_id, learner_id, lesson_id, exercise_id, kind, credit, "
                             "reason) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (learner_id, lesson_id, exercise_id) "
                             "DO UPDATE SET kind = excluded.kind, credit = excluded.credit, reason = excluded.reason",
                             (class_id, learner, lesson, exercise, kind, credit, reason))
            now = None if kind is None else {"kind": kind, "credit": credit}
            log.add(kind or "undo", learner=learner, lesson=lesson, exercise=exercise,
                    before={"mark": None if was is None else {"kind": was["kind"], "credit": was["credit"]},
                            "credit": credit_before},
                    after={"mark": now, "credit": credit_after}, reason=reason)
            return was

        return audited_write(self.store, by, class_id, work)
