"""Versioned schema migrations, applied by one tool to both backends.

The steps are the Python functions of schema.MIGRATIONS, in order. The database records how many are
applied: SQLite in ``PRAGMA user_version`` (as every store made before PostgreSQL support does),
PostgreSQL in a one-row table ``chainrule_schema``. Opening a store applies the missing steps, each in
the same write transaction that records the new version, so a crash mid-way leaves the previous version
(PostgreSQL's DDL is transactional too). Two processes opening one database at once: SQLite's write lock,
or a PostgreSQL advisory lock, lets one migrate; the other re-reads the version inside the lock and
finds nothing to do. Why not Alembic: see docs/progress.md.

A step writes its DDL once, in SQLite's words; :func:`run_statements` runs it in the connection's dialect
(dialect.py: the column types PostgreSQL spells differently, an auto-increment key and an 8-byte float).
"""

from __future__ import annotations

from typing import Callable

from chainrule.progress.connection import Connection, Database
from chainrule.progress.store_errors import NEWER_VERSION, StoreError

MIGRATION_LOCK = -1  # the advisory lock key migrations take (learners' keys are >= 0)

def run_statements(conn: Connection, script: str) -> None:
    """Run several ";"-separated statements (none may contain ";" inside, comments included)
    inside the caller's transaction, in the connection's dialect.

    (sqlite3's executescript would COMMIT first, breaking the migration's atomicity.)
    """
    for statement in conn.speaks.ddl(script).split(";"):
        if statement.strip():
            conn.execute(statement)


def schema_version(conn: Connection) -> int:
    """How many migrations the database has (0 for a new one)."""
    return conn.speaks.schema_version(conn)


def _set_version(conn: Connection, version: int) -> None:
    conn.speaks.set_schema_version(conn, version)


def apply_migrations(database: Database, migrations: list[Callable[[Connection], None]]) -> int:
    """Bring the database to ``len(migrations)``; returns how many steps ran. A database of a newer
    chainrule (more steps than we know) is refused with StoreError(kind="newer-version"), unchanged."""
    latest = len(migrations)
    version = database.read(schema_version)
    _refuse_newer(database, version, latest)
    if version == latest:
        return 0

    def migrate(conn: Connection) -> int:
        # Re-read inside the write lock: another process may have migrated meanwhile.
        current = schema_version(conn)
        _refuse_newer(database, current, latest)
        for index in range(current, latest):
            migrations[index](conn)
            _set_version(conn, index + 1)
        return latest - current

    return database.write(migrate, lock=MIGRATION_LOCK)


def _refuse_newer(database: Database, version: int, latest: int) -> None:
    if version > latest:
        raise StoreError(
            f"The progress database {database.where} was written by a newer chainrule (schema "
            f"version {version}; this one knows up to {latest}). Nothing was changed. "
            "Upgrade chainrule, or use --data-dir to keep a separate store for this version.",
            kind=NEWER_VERSION,
            path=getattr(database, "path", None),
        )
