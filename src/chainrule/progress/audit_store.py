"""The SQL of the audit log (schema migration 13): every change to what a learner is credited, written in the
same transaction as the change itself, and never changed afterwards (the database's triggers refuse it).

    def work(conn, log):
        conn.execute("UPDATE classes SET late_policy = ? ...")
        log.add("late-policy", before={"late": "no-credit"}, after={"late": "10%"})
    audited_write(store, Actor(7, "Ms Rivera"), class_id, work)

One place: the stores that change credit (deadline_store.py, mark_store.py, regrade_store.py, people_store.py's
removal) run their writes through audited_write; no route writes the log. audited_write also raises the event
of a change to credit, credit_changes.scores_changed, for the learners the entries name (the whole class for an
entry that names none), in the same transaction: that is how the LMS comes to get the new scores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from chainrule.progress.connection import Connection
from chainrule.progress.credit_changes import scores_changed

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")

__all__ = ["Actor", "AuditLog", "AuditStore", "COMMAND_LINE", "actor_of", "audited_write"]

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


class AuditLog:
    """The entries one write adds, all at the store's time of that write, and whose credit they change."""

    def __init__(self, conn: Connection, class_id: int, actor: Actor, at: str) -> None:
        self.conn, self.class_id, self.actor, self.at = conn, int(class_id), actor, at
        self.learners: set[int] = set()  # the learners the entries name
        self.whole_class = False  # an entry named no learner (a due date, the late policy)

    def add(self, kind: str, *, learner: int | None = None, lesson: str = "", exercise: str = "",
            before: Any = None, after: Any = None, reason: str = "") -> None:
        name = ""
        if learner is None:
            self.whole_class = True
        else:
            self.learners.add(int(learner))
            row = self.conn.execute("SELECT name FROM accounts WHERE id = ?", (int(learner),)).fetchone()
            name = "" if row is None else row.name
        self.conn.execute(
            "INSERT INTO audit_log (class_id, at, actor_id, actor_name, kind, learner_id, learner_name, lesson_id, "
            "exercise_id, before, after, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.class_id, self.at, int(self.actor.id), self.actor.name, kind, learner, name, lesson, exercise,
             json.dumps(before, sort_keys=True), json.dumps(after, sort_keys=True), reason))


def audited_write(store: ProgressStore, actor: Actor, class_id: int, work: Callable[[Connection, AuditLog], T]) -> T:
    """Run work(conn, log) in one write transaction, then raise scores_changed for the learners its entries
    name: the change, its entries and the event commit together or not at all."""
    at = store.now().isoformat()

    def write(conn: Connection) -> T:
        log = AuditLog(conn, class_id, actor, at)
        done = work(conn, log)
        scores_changed(conn, class_id=class_id if log.whole_class else None, learners=log.learners)
        return done

    return store.database.write(write, lock=ACCOUNT_LOCK)


class AuditStore:
    def __init__(self, store: ProgressStore) -> None:
        self.database = store.database

    def entries(self, class_id: int, limit: int, offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
        """(how many entries the class has, the page of them from ``offset``, newest first)."""

        def work(conn: Connection) -> tuple[int, list[dict[str, Any]]]:
            total = conn.one("SELECT COUNT(*) AS entries FROM audit_log WHERE class_id = ?",
                             (class_id,)).entries
            rows = conn.execute(f"SELECT {COLUMNS} FROM audit_log WHERE class_id = ? ORDER BY id DESC LIMIT ? "
                                "OFFSET ?", (class_id, int(limit), int(offset))).fetchall()
            return int(total), [dict(zip(COLUMNS.split(", "), row)) for row in rows]

        return self.database.read(work, snapshot=True)
