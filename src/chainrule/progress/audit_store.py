"""The SQL of the audit log (schema migration 13): every change to what a learner is credited, written in the
same transaction as the change itself, and never changed afterwards (the database's triggers refuse it).

    def work(conn, log):
        conn.execute("UPDATE classes SET late_policy = ? ...")
        log.add("late-policy", before={"late": "no-credit"}, after={"late": "10%"})
    audited_write(store, Actor(7, "Ms Rivera"), class_id, work)

One place: the stores that change credit (deadline_store.py, mark_store.py, regrade_store.py, class_store.py's
removal) run their writes through audited_write; no route writes the log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from chainrule.progress.connection import Connection

__all__ = ["Actor", "AuditLog", "AuditStore", "COMMAND_LINE", "actor_of", "audited_write", "rescore_learner"]

ACCOUNT_LOCK = -2  # the advisory lock key for account writes that read first (learners' keys are >= 0)
COLUMNS = ("id, at, actor_id, actor_name, kind, learner_id, learner_name, lesson_id, exercise_id, before, after, "
           "reason")


@dataclass(frozen=True)
class Actor:
    """Who made a change: a teacher's account (id, name), or the command line (id 0)."""

    id: int
    name: str


COMMAND_LINE = Actor(0, "the command line (chainrule class)")


def actor_of(account: Any) -> Actor:
    """The "who" of a signed-in teacher's account (the command line acts as account 0)."""
    return COMMAND_LINE if int(account.id) == 0 else Actor(int(account.id), str(account.name))


def rescore_learner(conn: Connection, learner_id: int) -> None:
    """Inside a write that changes one learner's credit: the LMS score scan looks at them again."""
    conn.execute("DELETE FROM lti_work_seen WHERE account_id = ?", (int(learner_id),))


class AuditLog:
    """The entries one write adds, all at the store's time of that write."""

    def __init__(self, conn: Connection, class_id: int, actor: Actor, at: str) -> None:
        self.conn, self.class_id, self.actor, self.at = conn, int(class_id), actor, at

    def add(self, kind: str, *, learner: int | None = None, lesson: str = "", exercise: str = "",
            before: Any = None, after: Any = None, reason: str = "") -> None:
        name = ""
        if learner is not None:
            row = self.conn.execute("SELECT name FROM accounts WHERE id = ?", (int(learner),)).fetchone()
            name = "" if row is None else row.name
        self.conn.execute(
            "INSERT INTO audit_log (class_id, at, actor_id, actor_name, kind, learner_id, learner_name, lesson_id, "
            "exercise_id, before, after, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.class_id, self.at, int(self.actor.id), self.actor.name, kind, learner, name, lesson, exercise,
             json.dumps(before, sort_keys=True), json.dumps(after, sort_keys=True), reason))


def audited_write(store: Any, actor: Actor, class_id: int, work: Callable[[Connection, AuditLog], Any]) -> Any:
    """Run work(conn, log) in one write transaction: the change and its entries commit together or not at all."""
    at = store.now().isoformat()
    return store.database.write(lambda conn: work(conn, AuditLog(conn, class_id, actor, at)), lock=ACCOUNT_LOCK)


class AuditStore:
    def __init__(self, store: Any) -> None:
        self.database = store.database

    def entries(self, class_id: int, limit: int, offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
        """(how many entries the class has, the page of them from ``offset``, newest first)."""

        def work(conn: Connection) -> tuple[int, list[dict[str, Any]]]:
            total = conn.execute("SELECT COUNT(*) AS entries FROM audit_log WHERE class_id = ?",
                                 (class_id,)).fetchone().entries
            rows = conn.execute(f"SELECT {COLUMNS} FROM audit_log WHERE class_id = ? ORDER BY id DESC LIMIT ? "
                                "OFFSET ?", (class_id, int(limit), int(offset))).fetchall()
            return int(total), [dict(zip(COLUMNS.split(", "), row)) for row in rows]

        return self.database.read(work, snapshot=True)
