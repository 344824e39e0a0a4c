"""The SQL of regrades (schema migration 9; classes/regrade.py holds the rules): which runs a regrade grades
again, what they gave, and applying or reverting it in one transaction.

Applying keeps the learners' earlier runs of the exercise apart (origin 'superseded:<id>') and lets the
regrade's runs count (origin ''); reverting swaps them back. Both are audited writes, which raise
credit_changes.scores_changed for the learners whose runs changed, so that a changed score is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from chainrule.progress.audit_store import ACCOUNT_LOCK, Actor, AuditLog, audited_write
from chainrule.progress.class_store import CLASS_LEARNERS
from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")

__all__ = ["RegradeStore"]

REGRADE_COLUMNS = "id, class_id, exercise_id, pick, cases, nonce, state, last_run, created_at"


def _open_regrade(conn: Connection, class_id: int, exercise_id: str, pick: str, cases: str) -> int | None:
    row = conn.execute("SELECT id FROM regrades WHERE class_id = ? AND exercise_id = ? AND pick = ? AND cases = ? "
                       "AND state != 'reverted' ORDER BY id DESC", (class_id, exercise_id, pick, cases)).fetchone()
    return None if row is None else int(row.id)


class RegradeStore:
    def __init__(self, store: ProgressStore) -> None:
        self.store = store
        self.database = store.database

    def _write(self, work: Callable[[Connection], T]) -> T:
        return self.database.write(work, lock=ACCOUNT_LOCK)

    def runs_of_exercise(self, class_id: int, exercise_id: str) -> tuple[int, list[Record]]:
        """(the highest submission id now, records (learner_id, id, language, source, status, result) of every
        counting run of the exercise by the class's learners, oldest first)."""

        def work(conn: Connection) -> tuple[int, list[Record]]:
            last = conn.one("SELECT COALESCE(MAX(id), 0) AS id FROM submissions").id
            rows = conn.execute(
                f"SELECT learner_id, id, language, source, status, result FROM submissions WHERE {CLASS_LEARNERS} "
                "AND exercise_id = ? AND origin = '' AND id <= ? ORDER BY id", (class_id, exercise_id, last)).fetchall()
            return int(last), rows

        return self.database.read(work, snapshot=True)

    def open_regrade(self, class_id: int, exercise_id: str, pick: str, cases: str) -> int | None:
        """A regrade of the same exercise, pick and cases that was not reverted (starting again finds it)."""
        return self.database.read(lambda conn: _open_regrade(conn, class_id, exercise_id, pick, cases))

    def create(self, class_id: int, exercise_id: str, pick: str, cases: str, nonce: str, last_run: int, at: str,
               runs: list[tuple[int, int, str, bool]]) -> int:
        """A new regrade of ``runs`` (learner, submission id, language, passed before), or the same one not
        reverted if there is one: its id. Looked for and made in one transaction under the account writes' lock
        (one writer at a time on both backends), so that simultaneous starts make one regrade."""

        def work(conn: Connection) -> int:
            found = _open_regrade(conn, class_id, exercise_id, pick, cases)
            if found is not None:
                return found
            regrade_id = int(conn.one(
                "INSERT INTO regrades (class_id, exercise_id, pick, cases, nonce, state, last_run, created_at) "
                "VALUES (?, ?, ?, ?, ?, 'grading', ?, ?) RETURNING id",
                (class_id, exercise_id, pick, cases, nonce, last_run, at)).id)
            for learner, submission, language, passed in runs:
                conn.execute("INSERT INTO regrade_runs (regrade_id, learner_id, submission_id, language, passed_before) "
                             "VALUES (?, ?, ?, ?, ?)", (regrade_id, learner, submission, language, int(passed)))
            return regrade_id

        return self._write(work)

    def regrade(self, class_id: int, regrade_id: int) -> dict[str, Any] | None:
        row = self.database.read(lambda conn: conn.execute(
            f"SELECT {REGRADE_COLUMNS} FROM regrades WHERE id = ? AND class_id = ?", (regrade_id, class_id)).fetchone())
        return None if row is None else dict(zip(REGRADE_COLUMNS.split(", "), row))

    def regrades(self, class_id: int) -> list[dict[str, Any]]:
        rows = self.database.read(lambda conn: conn.execute(
            f"SELECT {REGRADE_COLUMNS} FROM regrades WHERE class_id = ? ORDER BY id", (class_id,)).fetchall())
        return [dict(zip(REGRADE_COLUMNS.split(", "), row)) for row in rows]

    def runs(self, regrade_id: int) -> list[Record]:
        """Records (learner_id, name, submission_id, language, source, passed_before, after_status, job_id, at: the
        run's work time, result: its first grading's JSON) of each run."""
        return self.database.read(lambda conn: conn.execute(
            "SELECT r.learner_id, a.name, r.submission_id, r.language, s.source, r.passed_before, r.after_status, "
            "r.job_id, s.at, s.result FROM regrade_runs r JOIN accounts a ON a.id = r.learner_id "
            "JOIN submissions s ON s.id = r.submission_id WHERE r.regrade_id = ? ORDER BY a.name, a.id",
            (regrade_id,)).fetchall())

    def set_job(self, regrade_id: int, learner: int, job_id: int) -> None:
        self._write(lambda conn: conn.execute(
            "UPDATE regrade_runs SET job_id = ? WHERE regrade_id = ? AND learner_id = ?", (job_id, regrade_id, learner)))

    def set_after(self, regrade_id: int, learner: int, status: str) -> None:
        self._write(lambda conn: conn.execute(
            "UPDATE regrade_runs SET after_status = ? WHERE regrade_id = ? AND learner_id = ?",
            (status, regrade_id, learner)))

    def set_state(self, regrade_id: int, state: str, was: tuple[str, ...]) -> bool:
        """Move the regrade to ``state`` if it is in one of ``was``; whether it moved."""
        return self._write(lambda conn: conn.execute(
            f"UPDATE regrades SET state = ? WHERE id = ? AND state IN ({', '.join('?' for _ in was)})",
            (state, regrade_id, *was)).rowcount) == 1

    def swap(self, regrade: dict[str, Any], apply: bool, by: Actor) -> bool:
        """Apply (or revert) the regrade in one transaction, if it is graded (or applied); whether it did.
        Only learners whose run was graded again take part; each one's change goes to the audit log."""
        regrade_id, exercise = int(regrade["id"]), regrade["exercise_id"]
        mine, superseded = f"regrade:{regrade_id}", f"superseded:{regrade_id}"

        def work(conn: Connection, log: AuditLog) -> bool:
            moved = conn.execute("UPDATE regrades SET state = ? WHERE id = ? AND state = ?",
                                 ("applied" if apply else "reverted", regrade_id,
                                  "graded" if apply else "applied")).rowcount
            if moved != 1:
                return False
            graded = ("SELECT learner_id FROM regrade_runs WHERE regrade_id = ? AND after_status IS NOT NULL "
                      "AND after_status != 'not-graded'")
            new_runs = "SELECT new_run FROM regrade_runs WHERE regrade_id = ? AND new_run IS NOT NULL"
            if apply:
                conn.execute(f"UPDATE submissions SET origin = ? WHERE exercise_id = ? AND origin = '' AND id <= ? "
                             f"AND learner_id IN ({graded})", (superseded, exercise, regrade["last_run"], regrade_id))
                # Each learner's run of this regrade: kept apart under its origin, with the regraded run's code.
                conn.execute(
                    "UPDATE regrade_runs SET new_run = (SELECT MAX(s.id) FROM submissions s WHERE "
                    "s.learner_id = regrade_runs.learner_id AND s.exercise_id = ? AND s.origin = ? AND s.source = "
                    "(SELECT o.source FROM submissions o WHERE o.id = regrade_runs.submission_id)) "
                    f"WHERE regrade_id = ? AND learner_id IN ({graded})", (exercise, mine, regrade_id, regrade_id))
                conn.execute(f"UPDATE submissions SET origin = '' WHERE id IN ({new_runs})", (regrade_id,))
            else:
                conn.execute(f"UPDATE submissions SET origin = ? WHERE id IN ({new_runs})", (mine, regrade_id))
                conn.execute("UPDATE submissions SET origin = '' WHERE exercise_id = ? AND origin = ?",
                             (exercise, superseded))
            for learner, passed, after in conn.execute(
                    "SELECT learner_id, passed_before, after_status FROM regrade_runs WHERE regrade_id = ? AND "
                    "after_status IS NOT NULL AND after_status != 'not-graded' ORDER BY learner_id",
                    (regrade_id,)).fetchall():
                standing = [{"passed": bool(passed)}, {"passed": after == "pass", "regrade": regrade_id}]
                log.add("regrade-applied" if apply else "regrade-reverted", learner=int(learner),
                        exercise=exercise, before=standing[0 if apply else 1], after=standing[1 if apply else 0])
            return True

        return audited_write(self.store, by, int(regrade["class_id"]), work)
