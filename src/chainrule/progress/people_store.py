"""The SQL of a class's people and life (schema migration 10): the class's state and its invite's salt,
renaming a learner, a further teacher, a new password, and removing an account. classes/people.py holds the
rules.

Removing an account (a learner, or a teacher who is not the class's last) is one transaction on both backends,
and what it does to each table that names an account is declared once, below: every (table, column) that holds
an account's id is in exactly one of DELETED_WITH_ACCOUNT, ANONYMISED and KEPT_AFTER_REMOVAL
(tests/test_class_removal.py reads the tables from the schema itself, so a new table cannot be forgotten).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

from chainrule.progress.audit_store import ACCOUNT_LOCK, Actor, AuditLog, audited_write
from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")

CLASS_STATES = ("open", "closed", "archived")

# Every table of a learner's own work (the audit log's entry of a removal counts its rows).
WORK_TABLES = ("predictions", "code", "submissions", "quiz_answers", "explanations", "cards", "review_logs",
               "comments", "help_used")
# (table, the column holding the account's id): its rows go with the account, in the removal's transaction.
DELETED_WITH_ACCOUNT = (
    *((table, "learner_id") for table in WORK_TABLES),
    ("extensions", "learner_id"), ("credit_marks", "learner_id"), ("regrade_runs", "learner_id"),
    ("one_time_links", "account_id"), ("sso_users", "account_id"), ("lti_users", "account_id"),
    ("lti_scores", "account_id"), ("lti_work_seen", "account_id"),
    # The roster entry the learner joined with goes with them (listed again by the next import, a seat again).
    ("roster_entries", "account_id"),
    # The account's runs waiting for the grader: deleted right after, by the runs seam (classes/graded_runs.py's
    # forget_learner, in a transaction of its own under the learner's lock, the lock a worker saving a run
    # holds), which also says how many were taken back. A run a worker finishes meanwhile finds no job and
    # keeps nothing.
    ("grading_jobs", "learner_id"),
    ("accounts", "id"),
)
BY_THE_RUNS_SEAM = ("grading_jobs",)
# Kept, with the account's id replaced by 0 (no account): a removed teacher's comments on learners' runs stay in
# the learners' threads, from "someone who has left the class" (classes/comments.py).
ANONYMISED = (("comments", "author_id"),)
# Kept as they are, and why: the audit log is append-only (its triggers refuse UPDATE and DELETE); it keeps who
# did what under the names they had, so that a credit changed by a teacher since removed still says by whom.
KEPT_AFTER_REMOVAL = (("audit_log", "learner_id"), ("audit_log", "actor_id"))
REMOVED_ACCOUNT = 0


class LastTeacher(Exception):
    """remove_account: the account is the class's only teacher."""


class NotRemoved(Exception):
    """remove_accounts: one of the accounts is not (or no longer) the class's: the transaction is rolled back and
    no one is removed. Its argument is that account's id."""


def _remove_account(conn: Connection, log: AuditLog, account_id: int, class_id: int, role: str) -> bool:
    """Everything of the account, as the lists above say; False if the class has no such account of that role."""
    found = conn.execute("SELECT 1 FROM accounts WHERE id = ? AND class_id = ? AND role = ?",
                         (account_id, class_id, role)).fetchone()
    if found is None:
        return False
    if role == "teacher" and int(conn.one("SELECT COUNT(*) AS teachers FROM accounts WHERE class_id = ? "
                                          "AND role = 'teacher'", (class_id,)).teachers) < 2:
        raise LastTeacher(account_id)
    rows = {table: int(conn.one(f"SELECT COUNT(*) AS how_many FROM {table} WHERE learner_id = ?",
                                (account_id,)).how_many) for table in WORK_TABLES}
    log.add(f"{role}-removed", learner=account_id, before={"work rows": rows}, after=None)
    for table, column in ANONYMISED:
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (REMOVED_ACCOUNT, account_id))
    for table, column in DELETED_WITH_ACCOUNT:
        if table not in BY_THE_RUNS_SEAM:
            conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (account_id,))
    # Its sign-in failures are counted by scope (text), not by a column naming the account.
    conn.execute("DELETE FROM sign_in_failures WHERE scope IN (?, ?)", (f"account:{account_id}",
                                                                        f"password:{account_id}"))
    return True


def remove_account(store: ProgressStore, account_id: int, class_id: int, role: str, by: Actor) -> bool:
    """Remove the class's account of that role and everything of it in one transaction (its sessions end with
    it); the audit log keeps that it was removed, by whom, and how much went with it. False if there is no such
    account; LastTeacher for the class's only teacher (checked inside the same transaction)."""
    return audited_write(store, by, class_id, lambda conn, log: _remove_account(conn, log, int(account_id),
                                                                               int(class_id), role))


def remove_accounts(store: ProgressStore, account_ids: list[int], class_id: int, role: str, by: Actor) -> None:
    """Remove several accounts of the class, all in ONE transaction, as remove_account removes one: every one of
    them or none (NotRemoved names the first that is not the class's, even one removed meanwhile by another
    teacher; LastTeacher as remove_account)."""

    def work(conn: Connection, log: AuditLog) -> None:
        for account_id in account_ids:
            if not _remove_account(conn, log, int(account_id), int(class_id), role):
                raise NotRemoved(int(account_id))

    audited_write(store, by, class_id, work)


class PeopleStore:
    """The class tables of a progress store's database, for classes/people.py."""

    def __init__(self, store: ProgressStore) -> None:
        self.store = store
        self.database = store.database

    def _write(self, work: Callable[[Connection], T]) -> T:
        return self.database.write(work, lock=ACCOUNT_LOCK)

    def class_state(self, class_id: int) -> tuple[str, str | None]:
        """(state, the invite's salt or None) of the class."""
        row = self.database.read(lambda conn: conn.execute(
            "SELECT state, invite_salt FROM classes WHERE id = ?", (int(class_id),)).fetchone())
        return (row.state, row.invite_salt) if row is not None else ("open", None)

    def set_state(self, class_id: int, state: str) -> None:
        if state not in CLASS_STATES:
            raise ValueError(f"a class's state is one of {CLASS_STATES}, got {state!r}")
        self._write(lambda conn: conn.execute("UPDATE classes SET state = ? WHERE id = ?", (state, int(class_id))))

    def set_invite(self, class_id: int, invite_hash: str, salt: str) -> None:
        self._write(lambda conn: conn.execute("UPDATE classes SET invite_hash = ?, invite_salt = ? WHERE id = ?",
                                              (invite_hash, salt, int(class_id))))

    def class_of_invite(self, invite_hash: str) -> Any | None:
        """The class whose invite this is (a record: id, name, state), or None."""
        return self.database.read(lambda conn: conn.execute(
            "SELECT id, name, state FROM classes WHERE invite_hash = ?", (invite_hash,)).fetchone())

    def rename(self, account_id: int, class_id: int, name: str, check_names: Callable[[list[str]], None]) -> None:
        """Give the account a new name; ``check_names`` sees the class's other names inside the same write."""

        def work(conn: Connection) -> None:
            check_names([row.name for row in conn.execute(
                "SELECT name FROM accounts WHERE class_id = ? AND id <> ?", (class_id, account_id)).fetchall()])
            conn.execute("UPDATE accounts SET name = ? WHERE id = ?", (name, account_id))

        self._write(work)

    def add_teacher(self, class_id: int, name: str, at: str, check_names: Callable[[list[str]], None],
                    link_hash: str, link_expires: float, role: str = "teacher") -> int:
        """A further teacher (or teaching assistant: ``role`` "assistant") account of the class with its first
        one-time link; its id."""

        def work(conn: Connection) -> int:
            check_names([row.name for row in conn.execute(
                "SELECT name FROM accounts WHERE class_id = ?", (class_id,)).fetchall()])
            teacher_id = int(conn.one(
                "INSERT INTO accounts (class_id, role, name, created_at) VALUES (?, ?, ?, ?) RETURNING id",
                (class_id, role, name, at)).id)
            conn.execute("INSERT INTO one_time_links (token_hash, account_id, purpose, expires_ts) "
                         "VALUES (?, ?, 'set-password', ?)", (link_hash, teacher_id, link_expires))
            return teacher_id

        return self._write(work)

    def teachers(self, class_id: int, role: str = "teacher") -> list[Record]:
        """Records (id, name, signed_up: whether a password is set) of each teacher (or assistant) of the class,
        oldest first."""
        return list(self.database.read(lambda conn: conn.execute(
            "SELECT id, name, password_hash IS NOT NULL AS signed_up FROM accounts WHERE class_id = ? AND role = ? "
            "ORDER BY id", (int(class_id), role)).fetchall()))

    def password_hash(self, account_id: int) -> str | None:
        row = self.database.read(lambda conn: conn.execute(
            "SELECT password_hash FROM accounts WHERE id = ?", (int(account_id),)).fetchone())
        return None if row is None else row.password_hash

    def set_password(self, account_id: int, password_hash: str) -> int:
        """The new hash; every session of the account ends (the epoch goes up). Returns the new epoch."""

        def work(conn: Connection) -> int:
            conn.execute("UPDATE accounts SET password_hash = ?, session_epoch = session_epoch + 1 WHERE id = ?",
                         (password_hash, account_id))
            return int(conn.one("SELECT session_epoch FROM accounts WHERE id = ?",
                                (account_id,)).session_epoch)

        return self._write(work)

    def remove_teacher(self, teacher_id: int, class_id: int, by: Actor, role: str = "teacher") -> bool:
        return remove_account(self.store, teacher_id, class_id, role, by)
