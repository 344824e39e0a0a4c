"""The SQL of a class's roster and sections (schema migration 20); classes/roster.py and classes/class_sections.py hold
the rules.

A roster entry is a person a teacher listed: a name, the key they join with (an e-mail or a school id) and a
section. An import is one transaction: every entry of the file is added (or, for a key already listed, its
name and section are updated, and a learner who joined with it moves to that section), or none is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple, TypeVar

from chainrule.progress.audit_store import ACCOUNT_LOCK
from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")


class RosterEntry(NamedTuple):
    name: str
    key_kind: str  # "e-mail" or "school id"
    key: str
    section: str


class NotOnRoster(Exception):
    """claim_entry: no entry of the class has that key."""


class AlreadyClaimed(Exception):
    """claim_entry: a learner joined with that key already."""


def claim_entry(conn: Connection, class_id: int, key: str) -> Record:
    """Inside the write that makes a learner: the class's roster entry for ``key`` (a record: id, section), or
    NotOnRoster, or AlreadyClaimed (two joins with one key at once: the second finds it taken)."""
    row = conn.execute("SELECT id, section, account_id FROM roster_entries WHERE class_id = ? AND person_key = ?",
                       (class_id, key)).fetchone()
    if row is None:
        raise NotOnRoster(key)
    if row.account_id is not None:
        raise AlreadyClaimed(key)
    return row


class RosterStore:
    """The roster tables of a progress store's database (the class database)."""

    def __init__(self, store: ProgressStore) -> None:
        self.database = store.database

    def _write(self, work: Callable[[Connection], T]) -> T:
        return self.database.write(work, lock=ACCOUNT_LOCK)

    def import_entries(self, class_id: int, entries: list[RosterEntry], at: str) -> tuple[int, int]:
        """(added, updated): every entry in one transaction; a key already listed keeps its row, with the new
        name and section (its learner's too)."""

        def work(conn: Connection) -> tuple[int, int]:
            listed = {row.person_key: row for row in conn.execute(
                "SELECT id, person_key, account_id FROM roster_entries WHERE class_id = ?", (class_id,)).fetchall()}
            added = 0
            for entry in entries:
                known = listed.get(entry.key)
                if known is None:
                    conn.execute("INSERT INTO roster_entries (class_id, name, key_kind, person_key, section, "
                                 "imported_at) VALUES (?, ?, ?, ?, ?, ?)",
                                 (class_id, entry.name, entry.key_kind, entry.key, entry.section, at))
                    added += 1
                    continue
                conn.execute("UPDATE roster_entries SET name = ?, key_kind = ?, section = ? WHERE id = ?",
                             (entry.name, entry.key_kind, entry.section, known.id))
                if known.account_id is not None:
                    conn.execute("UPDATE accounts SET section = ? WHERE id = ?", (entry.section, known.account_id))
            return added, len(entries) - added

        return self._write(work)

    def entries(self, class_id: int) -> list[Record]:
        """Records (id, name, key_kind, person_key, section, account_id, account_name) of the class's roster,
        by section and name."""
        return self.database.read(lambda conn: conn.execute(
            "SELECT r.id, r.name, r.key_kind, r.person_key, r.section, r.account_id, a.name AS account_name "
            "FROM roster_entries r LEFT JOIN accounts a ON a.id = r.account_id WHERE r.class_id = ? "
            "ORDER BY r.section, r.name, r.id", (int(class_id),)).fetchall())

    def has_entries(self, class_id: int) -> bool:
        return self.database.read(lambda conn: conn.execute(
            "SELECT 1 FROM roster_entries WHERE class_id = ? LIMIT 1", (int(class_id),)).fetchone()) is not None

    def sections(self, class_id: int) -> list[str]:
        """Every section named in the class (its learners' and its roster's), sorted."""
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT section FROM accounts WHERE class_id = ? AND role = 'learner' AND section <> '' "
            "UNION SELECT section FROM roster_entries WHERE class_id = ? AND section <> ''",
            (int(class_id), int(class_id))).fetchall())
        return sorted({row.section for row in rows}, key=str.casefold)

    def set_section(self, class_id: int, learner_id: int, section: str) -> bool:
        """The learner's section (and their roster entry's); False if the class has no such learner."""

        def work(conn: Connection) -> bool:
            changed = conn.execute("UPDATE accounts SET section = ? WHERE id = ? AND class_id = ? AND role = 'learner'",
                                   (section, learner_id, class_id)).rowcount
            conn.execute("UPDATE roster_entries SET section = ? WHERE account_id = ?", (section, learner_id))
            return bool(changed)

        return self._write(work)
