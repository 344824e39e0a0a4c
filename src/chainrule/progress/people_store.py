"""The SQL of a class's people and life (schema migration 10): the class's state and its invite's salt,
renaming a learner, a further teacher, a new password. classes/people.py holds the rules.
"""

from __future__ import annotations

from typing import Callable

from chainrule.progress.class_store import ACCOUNT_LOCK
from chainrule.progress.connection import Connection

CLASS_STATES = ("open", "closed", "archived")


class PeopleStore:
    """The class tables of a progress store's database, for classes/people.py."""

    def __init__(self, store) -> None:
        self.database = store.database

    def _write(self, work):
        return self.database.write(work, lock=ACCOUNT_LOCK)

    def class_state(self, class_id: int) -> tuple[str, str | None]:
        """(state, the invite's salt or None) of the class."""
        row = self.database.read(lambda conn: conn.execute(
            "SELECT state, invite_salt FROM classes WHERE id = ?", (int(class_id),)).fetchone())
        return (row[0], row[1]) if row is not None else ("open", None)

    def set_state(self, class_id: int, state: str) -> None:
        if state not in CLASS_STATES:
            raise ValueError(f"a class's state is one of {CLASS_STATES}, got {state!r}")
        self._write(lambda conn: conn.execute("UPDATE classes SET state = ? WHERE id = ?", (state, int(class_id))))

    def set_invite(self, class_id: int, invite_hash: str, salt: str) -> None:
        self._write(lambda conn: conn.execute("UPDATE classes SET invite_hash = ?, invite_salt = ? WHERE id = ?",
                                              (invite_hash, salt, int(class_id))))

    def class_of_invite(self, invite_hash: str) -> tuple[int, str, str] | None:
        """(class id, name, state) of the class whose invite this is."""
        row = self.database.read(lambda conn: conn.execute(
            "SELECT id, name, state FROM classes WHERE invite_hash = ?", (invite_hash,)).fetchone())
        return None if row is None else (int(row[0]), row[1], row[2])

    def rename(self, account_id: int, class_id: int, name: str, check_names: Callable[[list[str]], None]) -> None:
        """Give the account a new name; ``check_names`` sees the class's other names inside the same write."""

        def work(conn: Connection) -> None:
            check_names([row[0] for row in conn.execute(
                "SELECT name FROM accounts WHERE class_id = ? AND id <> ?", (class_id, account_id)).fetchall()])
            conn.execute("UPDATE accounts SET name = ? WHERE id = ?", (name, account_id))

        self._write(work)

    def add_teacher(self, class_id: int, name: str, at: str, check_names: Callable[[list[str]], None],
                    link_hash: str, link_expires: float) -> int:
        """A further teacher account of the class with its first one-time link; its id."""

        def work(conn: Connection) -> int:
            check_names([row[0] for row in conn.execute(
                "SELECT name FROM accounts WHERE class_id = ?", (class_id,)).fetchall()])
            teacher_id = int(conn.execute(
                "INSERT INTO accounts (class_id, role, name, created_at) VALUES (?, 'teacher', ?, ?) RETURNING id",
                (class_id, name, at)).fetchone()[0])
            conn.execute("INSERT INTO one_time_links (token_hash, account_id, purpose, expires_ts) "
                         "VALUES (?, ?, 'set-password', ?)", (link_hash, teacher_id, link_expires))
            return teacher_id

        return self._write(work)

    def teachers(self, class_id: int) -> list[tuple[int, str, bool]]:
        """(id, name, whether a password is set) of each teacher of the class, oldest first."""
        return [(int(row[0]), row[1], row[2] is not None) for row in self.database.read(lambda conn: conn.execute(
            "SELECT id, name, password_hash FROM accounts WHERE class_id = ? AND role = 'teacher' ORDER BY id",
            (int(class_id),)).fetchall())]

    def password_hash(self, account_id: int) -> str | None:
        row = self.database.read(lambda conn: conn.execute(
            "SELECT password_hash FROM accounts WHERE id = ?", (int(account_id),)).fetchone())
        return None if row is None else row[0]

    def set_password(self, account_id: int, password_hash: str) -> int:
        """The new hash; every session of the account ends (the epoch goes up). Returns the new epoch."""

        def work(conn: Connection) -> int:
            conn.execute("UPDATE accounts SET password_hash = ?, session_epoch = session_epoch + 1 WHERE id = ?",
                         (password_hash, account_id))
            return int(conn.execute("SELECT session_epoch FROM accounts WHERE id = ?", (account_id,)).fetchone()[0])

        return self._write(work)
