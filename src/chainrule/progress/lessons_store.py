"""The lessons a class server serves, as recorded in the class database (table served_lessons, migration 18):
their content hash (lessons/fingerprint.py) and the --lessons folders, written by `chainrule serve` at start
and read by `chainrule worker` and `chainrule class` on any host. classes/class_lessons.py holds the rules.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from chainrule.progress.connection import Connection

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore


class ServedLessons(NamedTuple):
    hash: str
    folders: list[str]  # [] : the built-in lessons
    recorded_at: str


def record_served_lessons(store: ProgressStore, lessons_hash: str, folders: list[str]) -> ServedLessons | None:
    """Record what this server serves; what was recorded before (None the first time)."""

    def work(conn: Connection) -> ServedLessons | None:
        before = _read(conn)
        conn.execute(
            "INSERT INTO served_lessons (id, hash, folders, recorded_at) VALUES (1, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, folders = excluded.folders, "
            "recorded_at = excluded.recorded_at",
            (lessons_hash, json.dumps(folders), store.now().isoformat()))
        return before

    return store.database.write(work)


def served_lessons(store: ProgressStore) -> ServedLessons | None:
    """What the latest `chainrule serve` recorded; None if no server has recorded anything yet."""
    return store.database.read(_read)


def _read(conn: Connection) -> ServedLessons | None:
    row = conn.execute("SELECT hash, folders, recorded_at FROM served_lessons WHERE id = 1").fetchone()
    if row is None:
        return None
    try:
        folders = [str(folder) for folder in json.loads(row.folders)]
    except (ValueError, TypeError):  # a row edited by hand: taken as the built-in lessons, the hash says the rest
        folders = []
    return ServedLessons(row.hash, folders, row.recorded_at)
