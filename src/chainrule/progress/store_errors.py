"""StoreError: the one exception the progress store raises, with a message a learner can act on.

Every SQLite failure is translated here into one of a few kinds (locked, corrupt, read-only,
cannot-open, io, newer-version, invalid-file, invalid-input). The message always says what happened, which
file, and what to do next; the original sqlite3 error stays attached as ``__cause__``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

LOCKED = "locked"
CORRUPT = "corrupt"
READ_ONLY = "read-only"
CANNOT_OPEN = "cannot-open"
IO_ERROR = "io"
NEWER_VERSION = "newer-version"
INVALID_FILE = "invalid-file"
INVALID_INPUT = "invalid-input"
NOT_FOUND = "not-found"  # open_store(create=False) found no database


class StoreError(Exception):
    """A problem with the progress store that the learner has to know about.

    Attributes: ``kind`` (one of the constants above), ``path`` (the file concerned, or None),
    and ``str(error)`` the full, human-readable message.
    """

    def __init__(self, message: str, *, kind: str, path: Path | str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.path = None if path is None else Path(path)

    @property
    def message(self) -> str:
        return str(self.args[0])


def _writable_hint(path: Path) -> str:
    """Say which of the file or its directory is not writable, if we can tell."""
    directory = path.parent
    if directory.exists() and not os.access(directory, os.W_OK):
        return f"the directory {directory} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return f"the file {path} is not writable"
    return "the file or its directory is read-only (permissions, or a read-only disk)"


def translate_sqlite_error(error: sqlite3.Error, path: Path, *, waited_seconds: float | None = None) -> StoreError:
    """Turn an sqlite3 error into a StoreError whose message says what to do.

    Classification uses the SQLite result code when Python exposes it (3.11+), else the message.
    """
    name = getattr(error, "sqlite_errorname", "") or ""
    text = str(error)
    lowered = text.lower()
    where = f"The progress database {path}"

    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in lowered or "busy" in lowered:
        waited = f" (waited {waited_seconds:g} s)" if waited_seconds is not None else ""
        return StoreError(
            f"{where} is locked by another program{waited}, so your change was NOT saved. "
            "Close other chainrule servers or tools using this data directory and try again, "
            "or start chainrule with --data-dir pointing somewhere else.",
            kind=LOCKED,
            path=path,
        )
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "not a database" in lowered or "malformed" in lowered:
        return StoreError(
            f"{where} is damaged ({text}); chainrule cannot read it and has not changed it. "
            f"Move it aside (for example rename it to {path.name}.broken, together with any "
            f"{path.name}-wal and {path.name}-shm files) and start again to begin a fresh store, "
            "then `chainrule progress import` a backup if you have one.",
            kind=CORRUPT,
            path=path,
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in lowered or "read-only" in lowered:
        return StoreError(
            f"{where} cannot be written: {_writable_hint(path)}, so your change was NOT saved ({text}). "
            "Make the file and its directory writable for your user, or start chainrule with "
            "--data-dir pointing to a writable directory.",
            kind=READ_ONLY,
            path=path,
        )
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in lowered:
        return StoreError(
            f"{where} cannot be opened ({text}): {_writable_hint(path)} or the path does not exist. "
            "Make the directory exist and be writable for your user, or start chainrule with "
            "--data-dir pointing to a writable directory.",
            kind=CANNOT_OPEN,
            path=path,
        )
    if name.startswith(("SQLITE_IOERR", "SQLITE_FULL")) or "disk" in lowered:
        return StoreError(
            f"{where} could not be written or read because of a disk problem ({text}), so your change "
            "may NOT be saved. Check free disk space and the disk itself, then try again.",
            kind=IO_ERROR,
            path=path,
        )
    return StoreError(
        f"{where} reported an unexpected error ({text}). Nothing was changed by this request; "
        "try again, and if it persists, export your progress with `chainrule progress export`.",
        kind=IO_ERROR,
        path=path,
    )
