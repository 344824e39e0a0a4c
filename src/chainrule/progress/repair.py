"""Repair on open: text in the store that cannot be read back as Unicode is made valid again.

The store's writers refuse (or clean) such text, but a store written before they did, or edited by
hand, can hold lone UTF-16 surrogates: written as bytes (ED A0 80 for U+D800, which is not UTF-8) they
make sqlite3 raise on every read of their row, and a JSON column holding a
"\\ud800" escape turns into a lone surrogate when loaded, which then breaks every answer and export
that includes it. Each such value is replaced by its valid form (bad characters become U+FFFD); the
rest of the row, and every other row, stays as it was.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

from chainrule.text_safety import valid_data, valid_text

# The columns that hold JSON documents (their strings come back from json.loads).
JSON_COLUMNS = frozenset({
    ("submissions", "result"), ("explanations", "ticked"), ("cards", "card"),
    ("review_logs", "log"), ("review_logs", "previous_card"), ("review_logs", "card_after"),
})

Fix = tuple[str, str, int, str]  # (table, column, rowid, the valid text to store)

_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")  # U+D800-U+DFFF as UTF-8-style bytes
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # starts with a literal: a fast scan


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _has_lone_escape(raw: bytes) -> bool:
    """Whether JSON text holds a \\uD800-\\uDFFF escape that is not half of a high-low pair."""
    pending_high = -1  # where the last unpaired high surrogate escape ended
    for match in _SURROGATE_ESCAPE.finditer(raw):
        high = match.group()[3:4] in b"89abAB"
        if high:
            if pending_high >= 0:
                return True
            pending_high = match.end()
        elif pending_high == match.start():
            pending_high = -1
        else:
            return True
    return pending_high >= 0


def _valid_utf8(raw: bytes) -> str | None:
    """The valid text for stored bytes that are not UTF-8, or None if they are."""
    try:
        raw.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    try:
        return valid_text(raw.decode("utf-8", "surrogatepass"))  # one U+FFFD per encoded surrogate
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace")


def _valid_json(text: str) -> str | None:
    """The JSON re-written without lone surrogates, or None if it has none (or is not JSON)."""
    try:
        value: Any = json.loads(text)
    except ValueError:
        return None
    cleaned = valid_data(value)
    return None if cleaned is value else json.dumps(cleaned, sort_keys=True)


def _text_columns(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    tables = [row.name for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    return [(table, column.name) for table in tables
            for column in conn.execute(f"PRAGMA table_info({_quoted(table)})")
            if str(column.type).upper() == "TEXT"]


def find_invalid_text(conn: sqlite3.Connection) -> list[Fix]:
    """Every stored text value that holds a lone surrogate (encoded as bytes, or as a JSON escape),
    with its repaired form. This runs on every open, so candidates are picked by a bytes regex (no
    decoding); only candidates are decoded or parsed."""
    fixes: list[Fix] = []
    for table, column in _text_columns(conn):
        name = _quoted(column)
        is_json = (table, column) in JSON_COLUMNS
        rows = conn.execute(f"SELECT rowid, CAST({name} AS BLOB) FROM {_quoted(table)} WHERE typeof({name}) = 'text'")
        for rowid, raw in rows:
            encoded = _ENCODED_SURROGATE.search(raw) is not None
            escaped = is_json and _has_lone_escape(raw)
            if not (encoded or escaped):
                continue
            fixed = _valid_utf8(raw)
            text = raw.decode("utf-8") if fixed is None else fixed
            if escaped:
                fixed = _valid_json(text) or fixed
            if fixed is not None:
                fixes.append((table, column, rowid, fixed))
    return fixes


def repair_invalid_text(conn: sqlite3.Connection) -> int:
    """Repair every value find_invalid_text finds (call inside a write transaction); returns how many."""
    fixes = find_invalid_text(conn)
    for table, column, rowid, fixed in fixes:
        conn.execute(f"UPDATE {_quoted(table)} SET {_quoted(column)} = ? WHERE rowid = ?", (fixed, rowid))
    return len(fixes)
