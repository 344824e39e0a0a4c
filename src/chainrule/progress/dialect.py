"""Where SQLite and PostgreSQL meet: the one module that knows how the two write SQL differently.

The store writes each statement once, with ``?`` placeholders and the words both databases accept
(``INSERT ... ON CONFLICT (...) DO UPDATE SET x = excluded.x``, ``INSERT ... RETURNING id``, ``COALESCE``,
``LIKE ... ESCAPE '\\'``); a migration writes its DDL once, in SQLite's type names. A :class:`Dialect` turns that
text into what its driver runs, by reading it token by token (quoted text and comments are never changed):

- ``statement``: ``?`` becomes psycopg's ``%s`` (and a literal ``%`` becomes ``%%``) for PostgreSQL;
- ``ddl``: the column types PostgreSQL spells differently (an auto-increment key, an 8-byte float);
- the few statements that are not the same at all: the schema version, restarting an id sequence,
  an append-only table.

Rows come back as the same named records on both (:func:`sqlite_record`, :func:`postgres_records`):
``row.due``, never a position; a record is still a tuple, so a row unpacks as before.

Why a layer of our own and not SQLAlchemy Core: docs/architecture.md ("The SQL of two databases").
"""

from __future__ import annotations

import collections
import functools
import re
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, SupportsIndex, cast, overload

# One token of SQL: a quoted string ('...' with '' inside), a quoted name ("..."), a $$-quoted body, a comment,
# a word, or any other single character.
_TOKEN = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|\$\$.*?\$\$|--[^\n]*|/\*.*?\*/|\w+|\s+|.""", re.DOTALL)


def tokens(sql: str) -> list[str]:
    """The SQL as tokens; joined again they give back the text exactly."""
    return _TOKEN.findall(sql)


def like_prefix(text: str) -> str:
    """A LIKE pattern matching every text that starts with ``text`` (its ``%``, ``_`` and ``\\`` taken
    literally); use it as ``column LIKE ? ESCAPE '\\'``, which both databases read the same way."""
    return re.sub(r"([\\%_])", r"\\\1", text) + "%"


class Record(Protocol):
    """A row as both drivers give it: a named tuple of the statement's columns (``row.due``, ``row[0]``,
    unpacked). A column holds whatever the database keeps there (SQLite keeps any type it is given), so its
    value reads as Any; rows.py checks the values a reader relies on."""

    def __getattr__(self, column: str) -> Any: ...

    @overload
    def __getitem__(self, index: SupportsIndex) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Any, ...]: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...

    def _make(self, values: Iterable[Any]) -> Record: ...


class Cursor(Protocol):
    """What the store reads from a statement it ran (sqlite3's and psycopg's cursors both)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Record | None: ...

    def fetchall(self) -> list[Record]: ...

    def __iter__(self) -> Iterator[Record]: ...


class Executes(Protocol):
    """What a dialect needs of a connection: connection.Connection (``?`` placeholders on both databases)."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Cursor: ...

    def one(self, sql: str, params: Sequence[Any] = ...) -> Record: ...


class _RecordType(Protocol):
    """A named tuple class of one statement's columns."""

    def _make(self, values: Iterable[Any]) -> Record: ...


@functools.lru_cache(maxsize=512)
def _record_type(names: tuple[str, ...]) -> _RecordType:
    # rename=True: a column without a usable name (COUNT(*), a second "name" in a join) is read by index, as _1.
    row_type = collections.namedtuple("Row", names, rename=True)  # type: ignore[misc]  # names known only at run time
    return cast(_RecordType, row_type)


@functools.lru_cache(maxsize=512)
def _sqlite_type(description: tuple[tuple[Any, ...], ...]) -> _RecordType:
    return _record_type(tuple(name for name, *_ in description))  # DB-API: each column's name comes first


def sqlite_record(cursor: Any, row: tuple[Any, ...]) -> Record:
    """sqlite3's row factory: the row as a named tuple of its columns (``SELECT due FROM ...``: ``row.due``)."""
    return _sqlite_type(cursor.description)._make(row)


def postgres_records(cursor: Any) -> Callable[[Sequence[Any]], Record]:
    """psycopg's row factory, the same named tuples (psycopg's own namedtuple_row refuses a name twice)."""
    description = cursor.description or ()
    return _record_type(tuple(column.name for column in description))._make


class Dialect:
    """SQLite's: the store's SQL is already written in its words."""

    name = "sqlite"

    def statement(self, sql: str) -> str:
        return sql

    def ddl(self, script: str) -> str:
        return script

    def schema_version(self, conn: Executes) -> int:
        return int(conn.one("PRAGMA user_version").user_version)

    def set_schema_version(self, conn: Executes, version: int) -> None:
        conn.execute(f"PRAGMA user_version = {int(version)}")

    def make_double(self, conn: Executes, table: str, column: str) -> None:
        """Make ``column`` an 8-byte float (SQLite's REAL is one already)."""

    def restart_ids(self, conn: Executes, table: str) -> None:
        """After rows were copied in with their ids, new rows get ids after the highest (SQLite does so itself)."""

    def refuse_changes(self, conn: Executes, table: str, refused: str) -> None:
        """Make ``table`` append-only: an UPDATE or DELETE fails with the message ``refused``."""
        for event in ("UPDATE", "DELETE"):
            conn.execute(f"CREATE TRIGGER {table}_no_{event.lower()} BEFORE {event} ON {table} "
                         f"BEGIN SELECT RAISE(ABORT, '{refused}'); END")


class PostgresDialect(Dialect):
    """PostgreSQL's (psycopg 3): ``%s`` placeholders, identity keys, 8-byte floats by their own name."""

    name = "postgresql"
    # SQLite's column types -> PostgreSQL's. REAL is a 4-byte float in PostgreSQL: DOUBLE PRECISION keeps the
    # 8-byte float SQLite stores, so a number reads back exactly as it was written.
    TYPES = {
        ("INTEGER", "PRIMARY", "KEY", "AUTOINCREMENT"): "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        ("REAL",): "DOUBLE PRECISION",
    }

    def statement(self, sql: str) -> str:
        return _postgres_statement(sql)

    def ddl(self, script: str) -> str:
        parts = tokens(script)
        out: list[str] = []
        index = 0
        while index < len(parts):
            for words, replacement in self.TYPES.items():
                found, end = _words_at(parts, index, words)
                if found:
                    out.append(replacement)
                    index = end
                    break
            else:
                out.append(parts[index])
                index += 1
        return "".join(out)

    def schema_version(self, conn: Executes) -> int:
        if not conn.one("SELECT to_regclass('chainrule_schema') IS NOT NULL AS found").found:
            return 0
        row = conn.execute("SELECT version FROM chainrule_schema").fetchone()
        return 0 if row is None else int(row.version)

    def set_schema_version(self, conn: Executes, version: int) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS chainrule_schema (version INTEGER NOT NULL)")
        conn.execute("DELETE FROM chainrule_schema")
        conn.execute("INSERT INTO chainrule_schema (version) VALUES (?)", (int(version),))

    def make_double(self, conn: Executes, table: str, column: str) -> None:
        conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE DOUBLE PRECISION")

    def restart_ids(self, conn: Executes, table: str) -> None:
        conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false) "
                     f"FROM {table}")

    def refuse_changes(self, conn: Executes, table: str, refused: str) -> None:
        conn.execute(f"CREATE FUNCTION {table}_append_only() RETURNS trigger LANGUAGE plpgsql AS "
                     f"$$ BEGIN RAISE EXCEPTION '{refused}'; END $$")
        conn.execute(f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON {table} "
                     f"FOR EACH STATEMENT EXECUTE FUNCTION {table}_append_only()")


@functools.lru_cache(maxsize=512)
def _postgres_statement(sql: str) -> str:
    """``?`` outside quoted text as ``%s``; every ``%`` as ``%%`` (psycopg reads % everywhere, quoted text too)."""
    return "".join("%s" if token == "?" else token.replace("%", "%%") for token in tokens(sql))


def _words_at(parts: list[str], index: int, words: tuple[str, ...]) -> tuple[bool, int]:
    """Whether the tokens from ``index`` are ``words`` (any case, whitespace between), and where they end."""
    for number, word in enumerate(words):
        if number:
            if index >= len(parts) or not parts[index].isspace():
                return False, index
            index += 1
        if index >= len(parts) or parts[index].upper() != word:
            return False, index
        index += 1
    return True, index


SQLITE = Dialect()
POSTGRESQL = PostgresDialect()
DIALECTS = {dialect.name: dialect for dialect in (SQLITE, POSTGRESQL)}
