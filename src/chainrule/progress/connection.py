"""How the progress store reaches its database: one SQLite file, or a PostgreSQL server by URL.

Both backends offer the same four calls to the store, which never sees which one it has:
``write(work, lock=...)`` runs ``work(conn)`` in one short transaction, ``read(work, snapshot=...)``
runs a read, ``prepare(check_integrity)`` checks the database on open, ``close()`` closes its
connections. ``conn`` is a :class:`Connection`: ``execute(sql, params)`` with ``?`` placeholders, rows as named
records, and a ``dialect`` ("sqlite" or "postgresql"; dialect.py says how the two write SQL differently).

SQLite, for a learner's own machine and a class on one machine (WAL, synchronous=FULL, a busy timeout,
one connection per thread per process, reopened after a fork; every write ``BEGIN IMMEDIATE``, retried
a bounded number of times while another writer holds the lock).

PostgreSQL, for a class on a school's server or several web processes: a bounded pool per process
(psycopg_pool: at most ``pool_size`` connections, idle ones given back to the server after POOL_IDLE_SECONDS;
when one turns out broken, every idle one is checked at once and the work runs again on a new one, so that web processes and workers share max_connections by a budget,
commands/connection_budget.py); a write that reads before it writes (one learner's two tabs answering at
once) takes a transaction-scoped advisory lock on the learner, which is what SQLite's single writer gives
for free. A dropped connection or a serialization failure is retried like a busy SQLite.

Every driver error becomes a StoreError that says what happened, where, and what to do.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Generic, Protocol, Sequence, TypeVar
from urllib.parse import urlsplit

from chainrule.progress.dialect import DIALECTS, Cursor, Dialect, Record, postgres_records, sqlite_record
from chainrule.progress.store_errors import (
    CANNOT_OPEN,
    INVALID_INPUT,
    IO_ERROR,
    LOCKED,
    NOT_FOUND,
    StoreError,
    translate_sqlite_error,
)

T = TypeVar("T")
Raw = TypeVar("Raw")  # a driver's connection

DEFAULT_BUSY_TIMEOUT = 5.0  # seconds SQLite waits for a lock before reporting "busy"
DEFAULT_WRITE_ATTEMPTS = 3  # a busy write is retried this many times in all
POSTGRES_SCHEMES = ("postgresql", "postgres")
ADVISORY_NAMESPACE = 0x63726C  # "crl": the first key of every advisory lock chainrule takes
DEFAULT_POOL_SIZE = 10  # PostgreSQL connections one process opens at most (the web process's 40 threads share them)
POOL_IDLE_SECONDS = 30.0  # a pooled connection unused this long is closed (one per such period, down to none)
POOL_WAIT_SECONDS = 10.0  # how long a request waits for a pooled connection before "busy, try again"
# psycopg_pool retries a failed connection after 1, 2, 4, ... s until its reconnect_timeout: while PostgreSQL is
# away that backoff grows, and once it is back the pool would wait out the last delay. Giving up after 3 s (tries
# at 0, 1 and 3 s) lets the next request start afresh, so a restarted database is used again within a second or two.
POOL_RECONNECT_SECONDS = 3.0


class RawConnection(Protocol):
    """A driver's own connection (sqlite3's, psycopg's), whose SQL is already in its dialect's words."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Cursor: ...


class Connection:
    """One open database connection, as the store's SQL sees it: ``?`` placeholders on both backends."""

    __slots__ = ("raw", "dialect", "speaks")

    def __init__(self, raw: RawConnection, dialect: str) -> None:
        self.raw = raw
        self.dialect = dialect
        self.speaks: Dialect = DIALECTS[dialect]

    def one(self, sql: str, params: Sequence[Any] = ()) -> Record:
        """The row of a statement that always gives one (``INSERT ... RETURNING``, ``COUNT(*)``, a PRAGMA)."""
        row = self.execute(sql, params).fetchone()
        if row is None:
            raise LookupError(f"the statement gave no row, where it always gives one: {sql}")
        return row

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        if self.dialect == "sqlite":
            return self.raw.execute(sql, params)
        if not params:
            return self.raw.execute(sql)
        if any(isinstance(value, str) and "\x00" in value for value in params):
            # PostgreSQL's text cannot hold U+0000: refused as input, before anything reaches the server.
            raise StoreError("a text to keep holds a NUL character (U+0000), which the class database cannot "
                             "store: remove it and send it again", kind=INVALID_INPUT)
        return self.raw.execute(self.speaks.statement(sql), params)


def is_database_url(text: str) -> bool:
    return urlsplit(text).scheme in POSTGRES_SCHEMES


# Every way a PostgreSQL password can be written: in a URL's user info, as a URL's ?password= parameter,
# and as password=... in a key=value connection string (quoted or not).
_SECRET_FORMS = (
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s/?#@:]*:)[^\s/?#@]*@", re.IGNORECASE), r"\1***@"),
    (re.compile(r"([?&;]password=)[^&#\s'\"]*", re.IGNORECASE), r"\1***"),
    (re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s'\"&]+)", re.IGNORECASE), r"\1***"),
)


def redact_secrets(text: str) -> str:
    """``text`` (a URL, a connection string, an error message) with every password in it written ***."""
    for pattern, replacement in _SECRET_FORMS:
        text = pattern.sub(replacement, text)
    return text


def redacted_url(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return redact_secrets(url)


def _is_busy(error: sqlite3.Error) -> bool:
    name = getattr(error, "sqlite_errorname", "") or ""
    text = str(error).lower()
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text


def missing_store_error(path: Path) -> StoreError:
    """The StoreError (kind NOT_FOUND) for a database that open_store(create=False) did not find."""
    return StoreError(
        f"no progress database at {path}: nothing has been saved there yet (check --data-dir)",
        kind=NOT_FOUND,
        path=path,
    )


class _PerThread(Generic[Raw]):
    """One connection per thread per process; connections inherited through a fork are left alone.

    A thread that has ended (a server's pool threads come and go) has its connection closed when another
    thread opens one, so that connections do not pile up on the database server.
    """

    def __init__(self, close: Callable[[Raw], None]) -> None:
        self._close = close
        self._local = threading.local()
        self._all: list[tuple[int, threading.Thread, Raw]] = []  # (pid that opened it, its thread, connection)
        self._registry_lock = threading.Lock()

    def get(self, connect: Callable[[], Raw]) -> Raw:
        raw: Raw | None = getattr(self._local, "conn", None)
        if raw is None or self._local.pid != os.getpid():
            raw = connect()
            pid = os.getpid()
            with self._registry_lock:
                ended = [entry for entry in self._all if entry[0] == pid and not entry[1].is_alive()]
                self._all = [entry for entry in self._all if not any(entry is gone for gone in ended)]
                self._all.append((pid, threading.current_thread(), raw))
            for _, _, old in ended:
                self._close(old)
            self._local.conn = raw
            self._local.pid = os.getpid()
        return raw

    def close_all(self) -> None:
        pid = os.getpid()
        with self._registry_lock:
            connections, self._all = self._all, []
        for owner, _, raw in connections:
            if owner == pid:
                self._close(raw)
        self._local = threading.local()


class SqliteDatabase:
    """The store's database as one SQLite file (WAL)."""

    dialect = "sqlite"

    def __init__(
        self,
        path: Path,
        *,
        create: bool = True,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        write_attempts: int = DEFAULT_WRITE_ATTEMPTS,
    ) -> None:
        self.path = Path(path)
        self.create = bool(create)
        self.busy_timeout = float(busy_timeout)
        self.write_attempts = max(1, int(write_attempts))
        self._threads: _PerThread[sqlite3.Connection] = _PerThread(self._close_one)

    @property
    def where(self) -> str:
        return str(self.path)

    def _connect(self) -> sqlite3.Connection:
        # create=False opens with SQLite's mode=rw: a missing file is an error, never a new empty one.
        target = str(self.path) if self.create else self.path.absolute().as_uri() + "?mode=rw"
        try:
            conn = sqlite3.connect(
                target,
                timeout=self.busy_timeout,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,  # only its own thread uses it; close() may run elsewhere
                uri=not self.create,
            )
        except sqlite3.Error as error:
            if not self.create and not self.path.is_file():
                raise missing_store_error(self.path) from error
            raise translate_sqlite_error(error, self.path) from error
        conn.row_factory = sqlite_record
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as error:
            conn.close()
            raise translate_sqlite_error(error, self.path) from error
        return conn

    def _connection(self) -> sqlite3.Connection:
        return self._threads.get(self._connect)

    def close(self) -> None:
        """Close every connection opened in this process (those inherited through a fork belong to the parent)."""
        self._threads.close_all()

    @staticmethod
    def _close_one(conn: sqlite3.Connection) -> None:
        try:
            conn.close()
        except sqlite3.Error:
            pass

    def _retry_busy(self, error: sqlite3.Error, attempt: int, started: float) -> bool:
        """Retry a busy error (after a short pause) unless attempts or the busy timeout are used up.

        SQLite's busy handler already waits up to busy_timeout for a held lock; the retry covers the
        cases where SQLite reports busy without waiting (a stale read snapshot, WAL recovery).
        """
        if not _is_busy(error) or attempt + 1 >= self.write_attempts:
            return False
        if time.monotonic() - started >= self.busy_timeout:
            return False
        time.sleep(0.01 * (attempt + 1))
        return True

    def _retrying(self, attempt_once: Callable[[], T]) -> T:
        """Run ``attempt_once``; retry it when SQLite reports busy (see `_retry_busy`), and turn any
        other SQLite error into a StoreError that says what happened and what to do."""
        started = time.monotonic()
        for attempt in range(self.write_attempts):
            try:
                return attempt_once()
            except sqlite3.Error as error:
                if self._retry_busy(error, attempt, started):
                    continue
                raise translate_sqlite_error(
                    error, self.path, waited_seconds=round(time.monotonic() - started, 2)
                ) from error
        raise AssertionError("unreachable: the loop either returns or raises")

    def write(self, work: Callable[[Connection], T], *, lock: int | None = None) -> T:
        """Run ``work`` in one BEGIN IMMEDIATE transaction; retry a bounded number of times if busy.
        (``lock`` is for PostgreSQL: SQLite has one writer at a time anyway.)"""
        raw = self._connection()
        conn = Connection(raw, self.dialect)

        def once() -> T:
            raw.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                raw.execute("COMMIT")
                return result
            except BaseException:
                if raw.in_transaction:
                    try:
                        raw.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                raise

        return self._retrying(once)

    def read(self, work: Callable[[Connection], T], *, snapshot: bool = False) -> T:
        """Run a read; ``snapshot=True`` wraps several SELECTs in one transaction (a consistent view)."""
        raw = self._connection()
        conn = Connection(raw, self.dialect)

        def once() -> T:
            if not snapshot:
                return work(conn)
            raw.execute("BEGIN")
            try:
                return work(conn)
            finally:
                if raw.in_transaction:
                    raw.execute("COMMIT")

        return self._retrying(once)

    def prepare(self, *, check_integrity: bool = True) -> None:
        """Check the file is a sound SQLite database and switch it to WAL."""
        conn = self._connection()
        try:
            if check_integrity:
                problems = [row.quick_check for row in conn.execute("PRAGMA quick_check").fetchall()]
                if problems != ["ok"]:
                    raise sqlite3.DatabaseError("database disk image is malformed: " + "; ".join(problems[:3]))
            mode = conn.execute("PRAGMA journal_mode").fetchone().journal_mode
        except sqlite3.Error as error:
            raise translate_sqlite_error(error, self.path) from error
        if str(mode).lower() != "wal":
            # journal_mode cannot change inside a transaction, and needs a moment without other writers.
            self._retrying(lambda: conn.execute("PRAGMA journal_mode = WAL"))

    def repair_text(self) -> int:
        """Repair stored text that cannot be read back (see repair.py); the write lock only when needed."""
        from chainrule.progress.repair import find_invalid_text, repair_invalid_text

        raw = self._connection()  # the connection read() and write() run on in this thread: sqlite3's own
        if not self.read(lambda conn: find_invalid_text(raw), snapshot=True):
            return 0
        return self.write(lambda conn: repair_invalid_text(raw))


class PostgresDatabase:
    """The store's database in PostgreSQL (psycopg 3), reached by a ``postgresql://`` URL."""

    dialect = "postgresql"

    def __init__(self, url: str, *, write_attempts: int = DEFAULT_WRITE_ATTEMPTS, connect_timeout: int = 10,
                 pool_size: int = DEFAULT_POOL_SIZE, pool_wait: float = POOL_WAIT_SECONDS) -> None:
        if not is_database_url(url):
            raise StoreError(
                f"{redacted_url(url)!r} is not a PostgreSQL URL: write postgresql://USER@HOST/DATABASE "
                "(or postgresql:///DATABASE?host=/path/to/socket/folder).",
                kind=CANNOT_OPEN,
            )
        try:
            import psycopg
            import psycopg_pool
        except ImportError as error:
            raise StoreError(
                "A PostgreSQL database needs the psycopg and psycopg-pool packages, which are not installed: "
                "pip install 'chainrule[postgres]' (or leave out --database to keep the class in SQLite).",
                kind=CANNOT_OPEN,
            ) from error
        if pool_size < 1:
            raise ValueError(f"a PostgreSQL pool holds at least 1 connection, not {pool_size}")
        self._psycopg = psycopg
        self._pool_module = psycopg_pool
        self.url = url
        self.write_attempts = max(1, int(write_attempts))
        self.connect_timeout = int(connect_timeout)
        self.pool_size = int(pool_size)
        self.pool_wait = float(pool_wait)
        self._pool: Any = None
        self._pool_pid = 0
        self._pool_lock = threading.Lock()
        # Set when a connection of our own was refused: until one succeeds again, a request asks the server
        # directly (refused at once) instead of waiting pool_wait seconds for a pool that cannot connect.
        self._away = False

    @property
    def where(self) -> str:
        return redacted_url(self.url)

    def _connections(self) -> Any:
        """This process's pool, opened on first use (a pool inherited through a fork is left to its parent)."""
        pool = self._pool
        if pool is not None and self._pool_pid == os.getpid():
            return pool
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = self._pool_module.ConnectionPool(
                    self.url, min_size=0, max_size=self.pool_size, max_idle=POOL_IDLE_SECONDS,
                    timeout=self.pool_wait, reconnect_timeout=POOL_RECONNECT_SECONDS,
                    kwargs={"autocommit": True, "connect_timeout": self.connect_timeout,
                            "row_factory": postgres_records},
                    name="chainrule-store", open=True)
                self._pool_pid = os.getpid()
            return self._pool

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._pool_pid == os.getpid():
            pool.close()

    def _connect_error(self, error: Exception) -> StoreError:
        """A pool that could not hand out a connection in time: the server refused or is away (the
        pool's last connection error says which), or every pooled connection stayed busy."""
        refused = self._reachable()  # the pool does not say why it has no connection: one attempt of our own does
        if refused is not None:
            return refused
        return StoreError(
            f"The class database {self.where} is busy: all {self.pool_size} of this process's connections stayed "
            f"in use for {self.pool_wait:g} s, so nothing was read or saved. Try again in a moment; if it keeps "
            "happening, the database server is overloaded or cannot be reached (docs/classroom.md: PostgreSQL connections).",
            kind=LOCKED,
        )

    def _reachable(self) -> StoreError | None:
        """None if a connection of our own opens (the database is back, if it was away); else why not."""
        try:
            self._psycopg.connect(self.url, connect_timeout=self.connect_timeout).close()
        except self._psycopg.Error as refused:
            self._away = True
            return self._translate(refused)
        self._away = False
        return None

    def _translate(self, error: Exception, waited: float | None = None) -> StoreError:
        errors = self._psycopg.errors
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        where = f"The class database {self.where}"
        if isinstance(error, (errors.SerializationFailure, errors.DeadlockDetected, errors.LockNotAvailable)):
            after = f" (after {waited:g} s)" if waited is not None else ""
            return StoreError(
                f"{where} stayed busy with other writes{after}, so your change was NOT saved. Try again.",
                kind=LOCKED,
            )
        if isinstance(error, self._psycopg.OperationalError):
            return StoreError(
                f"{where} cannot be reached ({text}), so nothing was read or saved. Check that PostgreSQL "
                "is running, that the URL (host, port, database, user) is right and that this user may "
                "connect; then try again.",
                kind=CANNOT_OPEN,
            )
        return StoreError(
            f"{where} reported an unexpected error ({text}). Nothing was changed by this request; try again.",
            kind=IO_ERROR,
        )

    def _retryable(self, error: Exception) -> bool:
        errors = self._psycopg.errors
        if isinstance(error, (errors.SerializationFailure, errors.DeadlockDetected)):
            return True
        # A connection that broke (a server restart, a dropped network, a server ending it: 57P) is opened
        # again once.
        return isinstance(error, self._psycopg.OperationalError) and (
            getattr(error, "sqlstate", None) is None or str(getattr(error, "sqlstate", "")).startswith(("08", "57P"))
        )

    def _run(self, work: Callable[[Connection], T], lock: int | None, kind: str) -> T:
        """kind: "write" (a transaction, with the advisory lock ``lock`` if given), "snapshot" (a
        REPEATABLE READ transaction: several SELECTs see one state, as SQLite's BEGIN gives) or "read"."""
        started = time.monotonic()
        if self._away and (refused := self._reachable()) is not None:
            raise refused
        for attempt in range(self.write_attempts):
            try:
                with self._connections().connection() as raw:
                    conn = Connection(raw, self.dialect)
                    if kind == "read":
                        return work(conn)
                    with raw.transaction():
                        if kind == "snapshot":
                            raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                        elif lock is not None:
                            raw.execute("SELECT pg_advisory_xact_lock(%s, %s)", (ADVISORY_NAMESPACE, int(lock)))
                        return work(conn)
            except self._pool_module.PoolTimeout as error:
                raise self._connect_error(error) from error
            except self._psycopg.Error as error:
                # A broken connection is not given back to the pool (psycopg_pool drops it), so a retry gets another.
                if attempt + 1 < self.write_attempts and self._retryable(error):
                    if isinstance(error, self._psycopg.OperationalError):
                        # The server restarted or the network dropped: its other idle connections broke too. Check
                        # them all now (a round trip each) rather than meeting them one failed attempt at a time;
                        # and if the server is away, say so now rather than after the pool's wait.
                        self._connections().check()
                        if (refused := self._reachable()) is not None:
                            raise refused from error
                    time.sleep(0.02 * (attempt + 1))
                    continue
                raise self._translate(error, round(time.monotonic() - started, 2)) from error
        raise AssertionError("unreachable: the loop either returns or raises")

    def write(self, work: Callable[[Connection], T], *, lock: int | None = None) -> T:
        """Run ``work`` in one transaction; ``lock`` (a learner id) serializes writes that read first."""
        return self._run(work, lock, "write")

    def read(self, work: Callable[[Connection], T], *, snapshot: bool = False) -> T:
        return self._run(work, None, "snapshot" if snapshot else "read")

    def prepare(self, *, check_integrity: bool = True) -> None:
        """Reachable, or a clear StoreError at once: a connection of its own, since the pool would wait
        pool_wait seconds for a server that refuses, retrying in the background."""
        try:
            self._psycopg.connect(self.url, connect_timeout=self.connect_timeout).close()
        except self._psycopg.Error as error:
            raise self._translate(error) from error

    def repair_text(self) -> int:
        return 0  # PostgreSQL refuses text that is not valid UTF-8 on the way in: nothing to repair


Database = SqliteDatabase | PostgresDatabase
