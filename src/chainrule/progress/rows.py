"""What a stored row must hold for a reader to use it: every reader of the store goes through here.

    rows = sound_rows("submissions", ("exercise_id", "status", "result", "at"), conn.execute(...).fetchall())

A row may hold anything: an older import, a file edited by hand, a value written straight into the
database (SQLite keeps whatever type it is given). A row any of whose values is not what its column
means (a result that is no JSON object, a time that is not an ISO 8601 time, a flag that is not 0 or
1, a name that is no text) is reported on the "chainrule.progress" logger and skipped, so that no row
can break a page, the teacher's view or a command. Values that are read come back decoded: a JSON
column as its object, a flag as a bool.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Callable, Iterable

from chainrule.progress.dialect import Record
from chainrule.progress.validation import log, stored_json

__all__ = ["COLUMNS", "sound_rows", "sound_time"]

# A stored value (anything SQLite keeps) -> (usable, decoded value: a column's own type, str, bool, dict, ...).
Reader = Callable[[object], tuple[bool, Any]]


def _text(value: object) -> tuple[bool, str | None]:
    if not isinstance(value, str):
        return False, None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False, None
    return True, value


def _name(value: object) -> tuple[bool, str | None]:
    ok, text = _text(value)
    return (ok and bool(text)), text


def _flag(value: object) -> tuple[bool, bool]:
    return (value in (0, 1) and not isinstance(value, float)), bool(value)


def _number(value: object) -> tuple[bool, float | None]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False, None
    try:
        number = float(value)
    except OverflowError:
        return False, None
    return math.isfinite(number), number


def _rating(value: object) -> tuple[bool, object]:
    return (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 4), value


def sound_time(value: object) -> bool:
    """An ISO 8601 time with a time zone (what every `at` column holds)."""
    if not isinstance(value, str):
        return False
    try:
        return datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


def _time(value: object) -> tuple[bool, object]:
    return sound_time(value), value


def _json(kind: type, what: str) -> Reader:
    def read(value: object) -> tuple[bool, Any]:
        decoded = stored_json(value, what) if isinstance(value, str) else None
        return isinstance(decoded, kind), decoded

    return read


def _name_list(value: object) -> tuple[bool, Any]:
    ok, decoded = _json(list, "the ideas an explanation ticked")(value)
    return (ok and all(_name(item)[0] for item in decoded)), decoded


def _count(value: object) -> tuple[bool, object]:
    return (isinstance(value, int) and not isinstance(value, bool) and value >= 0), value


# Every column a reader selects, by table: what its values must be.
COLUMNS: dict[str, dict[str, Reader]] = {
    "predictions": {"lesson_id": _name, "key": _name, "value": _number, "correct": _flag, "at": _time},
    "code": {"exercise_id": _name, "language": _name, "source": _text, "at": _time},
    "submissions": {"exercise_id": _name, "language": _name, "source": _text, "result": _json(dict, "a run's result"),
                    "status": _text, "at": _time, "origin": _text},
    "quiz_answers": {"lesson_id": _name, "question_id": _name, "answer": _text, "correct": _flag, "at": _time,
                     "origin": _text},
    "explanations": {"lesson_id": _name, "text": _text, "ticked": _name_list, "at": _time},
    "review_logs": {"lesson_id": _name, "question_id": _name, "kind": _name, "answer": _text, "correct": _flag,
                    "rating": _rating, "undone": _flag, "at": _time, "numbers": _json(dict, "a review's numbers")},
    "help_used": {"lesson_id": _name, "exercise_id": _name, "kind": _name, "number": _count, "at": _time},
    "accounts": {"name": _name},
    "comments": {"body": _text, "at": _time},
}


def sound_rows(table: str, columns: Iterable[str], rows: Iterable[Record], *, keep: int = 0) -> list[Record]:
    """The rows whose every value is what its column means, decoded (JSON parsed, flags as bools).

    ``columns`` names the checked columns in order; the first ``keep`` values of a row, and any after the
    checked ones, are passed through unchecked (a learner id, a count). Every other row is reported and
    skipped. A row read from the database stays a record of its columns (``row.at``)."""
    readers = [(column, COLUMNS[table][column]) for column in columns]
    end = keep + len(readers)
    kept: list[Record] = []
    for row in rows:
        checked = row[keep:end]
        decoded: list[Any] = []
        for (name, reader), value in zip(readers, checked):
            ok, usable = reader(value)
            if not ok:
                log.warning("skipped a stored row of %s: its %s is not usable (a %s)", table, name, type(value).__name__)
                break
            decoded.append(usable)
        else:
            values = (*row[:keep], *decoded, *row[end:])
            kept.append(row._make(values))
    return kept
