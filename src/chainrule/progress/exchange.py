"""Export and import of the whole progress store as one JSON document.

Format ``chainrule.progress`` version 2 (see docs/progress.md for an example)::

    {"format": "chainrule.progress", "version": 2, "exported_at": ISO 8601,
     "predictions":  [{"lesson_id", "key", "value": number, "correct": bool, "at"}],
     "code":         [{"exercise_id", "language", "source", "at"}],
     "submissions":  [{"exercise_id", "language", "source", "result": object, "at"}],
     "quiz_answers": [{"lesson_id", "question_id", "answer", "correct": bool, "at"}],
     "explanations": [{"lesson_id", "text", "ticked": [str], "at"}],
     "cards":        [{"lesson_id", "question_id", "card": fsrs card dict}],
     "review_logs":  [{"lesson_id", "question_id", "kind": "quiz"|"review", "answer", "correct": bool,
                       "rating": 1-4, "log": fsrs review-log dict, "previous_card": card dict|null,
                       "card_after": card dict, "undone": bool, "at"}],
     "help_used":    [{"lesson_id", "exercise_id", "kind": "hint"|"solution", "number": int, "at"}]}

Every record must have exactly these keys; a version-1 file (from before help_used) has no help_used
section. Export leaves out (and reports) a stored row that import would refuse, so every export imports
back. Import validates the whole document first (a bad file changes nothing), then compares it with the
stored rows in one read, in linear time, and writes it in short batches: keyed records (a prediction, the
latest code, an explanation, a card) replace the stored one with the same key; history records
(submissions, quiz answers, review logs, help used) are appended, except those already stored (a record
the file holds k times and the store m times is added k - m times; two records are the same when they mean
the same: 0.0 and 0, one moment written with two offsets), so importing the same file twice adds nothing
the second time, and a write that failed part way is completed by importing the file again. `read_progress_file` reads a file's bytes with limits on depth and count.
"""

from __future__ import annotations

import gc
import json
import math
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Callable, Protocol, cast

from fsrs import Card, ReviewLog
from fsrs.review_log import ReviewLogDict

from chainrule.progress.connection import Connection, Database
from chainrule.progress.dialect import Record
from chainrule.progress.json_shape import shape_problem
from chainrule.progress.quota import refuse_over_quota, row_cost
from chainrule.progress.store_errors import INVALID_FILE, StoreError
from chainrule.progress.validation import card_problem, depth_problem, finite_json, log, stored_json

FORMAT_NAME = "chainrule.progress"
EXPORT_VERSION = 2
SECTION_SINCE = {"help_used": 2}  # a section added in a later version: absent from older files (read as [])
MAX_ERRORS_SHOWN = 5

Checker = Callable[[Any], str | None]  # returns a description of the problem, or None if fine


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _not_unicode(value: str) -> str | None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "the text contains an invalid character (a lone UTF-16 surrogate)"
    return None


def _text(value: object) -> str | None:
    return _not_unicode(value) if isinstance(value, str) else f"expected a string, got {_kind(value)}"


def _name(value: object) -> str | None:
    if not isinstance(value, str):
        return f"expected a string, got {_kind(value)}"
    return _not_unicode(value) if value else "expected a non-empty string"


def _number(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"expected a number, got {_kind(value)}"
    try:
        finite = math.isfinite(float(value))
    except OverflowError:  # an integer too large for a float
        finite = False
    return None if finite else "expected a finite number"


def _boolean(value: object) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {_kind(value)}"


def _time(value: object) -> str | None:
    if not isinstance(value, str):
        return f"expected an ISO 8601 time string, got {_kind(value)}"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return f"expected an ISO 8601 time like 2026-01-31T12:00:00+00:00, got {value!r}"
    return None if moment.tzinfo is not None else f"the time {value!r} has no time zone (add +00:00)"


def _object(value: object) -> str | None:
    if not isinstance(value, dict):
        return f"expected an object, got {_kind(value)}"
    # Bounded in depth first (a lesson page reads it back), then every string inside, at any depth.
    return depth_problem(value) or _not_unicode(json.dumps(value, ensure_ascii=False))


def _text_list(value: object) -> str | None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        return "expected a list of strings"
    return next((problem for problem in map(_not_unicode, value) if problem), None)


def _rating(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4:
        return f"expected a rating 1 (Again) to 4 (Easy), got {value!r}"
    return None


def _review_kind(value: object) -> str | None:
    return None if value in ("quiz", "review") else f"expected \"quiz\" or \"review\", got {value!r}"


def _help_kind(value: object) -> str | None:
    return None if value in ("hint", "solution") else f"expected 'hint' or 'solution', got {value!r}"[:120]


def _count(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2 ** 31:
        return f"expected a whole number from 0, got {_kind(value)}"
    return None


def _card_or_null(value: object) -> str | None:
    return None if value is None else card_problem(value)


def _review_log(value: object) -> str | None:
    if not isinstance(value, dict):
        return f"expected an FSRS review log object, got {_kind(value)}"
    required = {"card_id", "rating", "review_datetime", "review_duration"}
    if set(value) != required:
        return f"an FSRS review log needs exactly the keys {sorted(required)}"
    problem = _rating(value["rating"]) or _time(value["review_datetime"])
    if problem:
        return problem
    try:
        ReviewLog.from_dict(cast(ReviewLogDict, value))  # its keys are checked above; from_dict checks the rest
    except Exception as error:
        return f"not a valid FSRS review log ({error})"
    return None


# section -> (field -> checker, the fields forming its key or None for history sections)
SECTIONS: dict[str, tuple[dict[str, Checker], tuple[str, ...] | None]] = {
    "predictions": (
        {"lesson_id": _name, "key": _name, "value": _number, "correct": _boolean, "at": _time},
        ("lesson_id", "key"),
    ),
    "code": (
        {"exercise_id": _name, "language": _name, "source": _text, "at": _time},
        ("exercise_id", "language"),
    ),
    "submissions": (
        {"exercise_id": _name, "language": _name, "source": _text, "result": _object, "at": _time},
        None,
    ),
    "quiz_answers": (
        {"lesson_id": _name, "question_id": _name, "answer": _text, "correct": _boolean, "at": _time},
        None,
    ),
    "explanations": (
        {"lesson_id": _name, "text": _text, "ticked": _text_list, "at": _time},
        ("lesson_id",),
    ),
    "cards": (
        {"lesson_id": _name, "question_id": _name, "card": card_problem},
        ("lesson_id", "question_id"),
    ),
    "review_logs": (
        {
            "lesson_id": _name, "question_id": _name, "kind": _review_kind, "answer": _text,
            "correct": _boolean, "rating": _rating, "log": _review_log, "previous_card": _card_or_null,
            "card_after": card_problem, "undone": _boolean, "at": _time,
        },
        None,
    ),
    "help_used": (
        {"lesson_id": _name, "exercise_id": _name, "kind": _help_kind, "number": _count, "at": _time},
        None,
    ),
}
TOP_LEVEL_KEYS = {"format", "version", "exported_at", *SECTIONS}
# Every time an imported record states, per section: each field checked as a time, and the times inside its
# FSRS objects. classes/imports.py holds every one to the account's life (the one rule for imported times);
# derived from SECTIONS, so that a section's new time field is held too.
_NESTED_TIMES = {"cards": ("card.last_review",), "review_logs": ("log.review_datetime",)}
TIME_FIELDS: dict[str, tuple[str, ...]] = {
    section: tuple(name for name, check in fields.items() if check is _time) + _NESTED_TIMES.get(section, ())
    for section, (fields, _) in SECTIONS.items()}


def stated_times(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, time) of every time a validated document states (TIME_FIELDS; a null time states nothing)."""
    found = [("exported_at", document["exported_at"])] if "exported_at" in document else []
    for section, names in TIME_FIELDS.items():
        for index, record in enumerate(document.get(section, [])):
            for name in names:
                value: Any = record
                for part in name.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                if value is not None:
                    found.append((f"{section}[{index}].{name}", value))
    return found


MAX_FILE_DEPTH = 4 + 20  # the document, a section, a record, a field, then a value nested as the store allows
MAX_FILE_OBJECTS = 500_000  # JSON objects in one file: a 20,000-run export holds about 140,000


def _file_problem(message: str) -> StoreError:
    return StoreError(f"The progress file is not valid: {message}. Nothing was imported; use a file made by "
                      "`chainrule progress export`.", kind=INVALID_FILE)


def read_progress_file(data: bytes) -> Any:
    """The JSON document in ``data``, read with limits (StoreError kind "invalid-file" naming what was wrong):
    UTF-8, a shape within json_shape's limits (checked on the bytes, before anything is built), JSON, finite
    numbers, at most MAX_FILE_OBJECTS objects (counted while reading: the parse stops
    at the first one past it) and MAX_FILE_DEPTH levels deep (a document nested far deeper stops the parse
    at once, before it is built). Each object read returns to Python, so a server thread that reads a
    large file lets the event loop run in between."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _file_problem(f"it is not UTF-8 text (byte {error.start})") from None
    problem = shape_problem(data, max_depth=MAX_FILE_DEPTH)  # before anything is built (progress/json_shape.py)
    if problem:
        raise _file_problem(f"it is {problem}")
    objects = 0

    def counted(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal objects
        objects += 1
        if objects > MAX_FILE_OBJECTS:
            raise OverflowError
        return dict(pairs)

    collecting = gc.isenabled()
    gc.disable()  # a full collection over the objects being built would hold the interpreter (and the loop)
    try:
        document = finite_json(text, object_pairs_hook=counted)
    except RecursionError:
        raise _file_problem(f"it is nested more than {MAX_FILE_DEPTH} levels deep") from None
    except OverflowError:
        raise _file_problem(f"it holds more than {MAX_FILE_OBJECTS:,} JSON objects") from None
    except ValueError as error:
        raise _file_problem(f"it is not JSON ({error})") from None
    finally:
        if collecting:
            gc.enable()
    problem = depth_problem(document, MAX_FILE_DEPTH)
    if problem:
        raise _file_problem(f"it is {problem}")
    return document


def validate_export(data: Any) -> None:
    """Check a whole export document; raise StoreError(kind="invalid-file") listing what is wrong."""
    if not isinstance(data, dict):
        raise _file_problem(f"it must be a JSON object, got {_kind(data)}")
    errors = _header_problems(data)
    version = data.get("version")
    for section, (fields, key_fields) in SECTIONS.items():
        if section in data:
            errors += _section_problems(section, data[section], fields, key_fields)
        elif not (isinstance(version, int) and version < SECTION_SINCE.get(section, 1)):  # not older than it
            errors.append(f"{section}: missing (use [] if there is nothing)")
    if errors:
        shown = "; ".join(errors[:MAX_ERRORS_SHOWN])
        more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more problems)" if len(errors) > MAX_ERRORS_SHOWN else ""
        raise StoreError(
            f"The progress file is not valid: {shown}{more}. Nothing was imported and nothing stored was "
            "changed; use a file made by `chainrule progress export` (format described in docs/progress.md).",
            kind=INVALID_FILE,
        )


def _header_problems(data: dict[str, Any]) -> list[str]:
    """What is wrong with the document's own keys: its format, version and time, and keys no section has."""
    errors: list[str] = []
    if data.get("format") != FORMAT_NAME:
        errors.append(f"format: expected {FORMAT_NAME!r}, got {data.get('format')!r}")
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        errors.append(f"version: expected an integer, got {_kind(version)}")
    elif version > EXPORT_VERSION:
        errors.append(
            f"version: the file has version {version}, this chainrule reads up to {EXPORT_VERSION} "
            "(upgrade chainrule to import it)"
        )
    elif version < 1:
        errors.append(f"version: expected 1 to {EXPORT_VERSION}, got {version}")
    if "exported_at" in data and _time(data["exported_at"]):
        errors.append(f"exported_at: {_time(data['exported_at'])}")
    for key in sorted(set(data) - TOP_LEVEL_KEYS):
        errors.append(f"{key}: unknown section (allowed: {', '.join(sorted(TOP_LEVEL_KEYS))})")
    return errors


def _section_problems(section: str, records: Any, fields: dict[str, Checker],
                      key_fields: tuple[str, ...] | None) -> list[str]:
    """What is wrong with one section: its records, and a key given twice."""
    if not isinstance(records, list):
        return [f"{section}: expected a list, got {_kind(records)}"]
    errors: list[str] = []
    seen: set[tuple[Any, ...]] = set()
    for index, record in enumerate(records):
        where = f"{section}[{index}]"
        if not isinstance(record, dict):
            errors.append(f"{where}: expected an object, got {_kind(record)}")
            continue
        errors += _record_problems(where, record, fields)
        if key_fields and all(isinstance(record.get(name), str) for name in key_fields):
            key = tuple(record[name] for name in key_fields)
            if key in seen:
                errors.append(f"{where}: a second record for {'/'.join(key)} (each may appear once)")
            seen.add(key)
    return errors


def _record_problems(where: str, record: dict[str, Any], fields: dict[str, Checker]) -> list[str]:
    """What is wrong with one record: keys missing, keys unknown, and each field's own check."""
    errors = [f"{where}: missing key {name!r}" for name in sorted(set(fields) - set(record))]
    errors += [f"{where}: unknown key {name!r} (allowed: {', '.join(fields)})" for name in sorted(set(record) - set(fields))]
    for name, check in fields.items():
        problem = check(record[name]) if name in record else None
        if problem:
            errors.append(f"{where}.{name}: {problem}")
    return errors


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def _importable(document: dict[str, Any]) -> dict[str, Any]:
    """The document without the stored rows that import would refuse (an older import's, or edited by
    hand), each reported on the "chainrule.progress" logger: every export can be imported back."""
    for section, (fields, _) in SECTIONS.items():
        kept = []
        for index, record in enumerate(document[section]):
            problem = next((f"{name}: {found}" for name, check in fields.items() if (found := check(record[name]))),
                           None)
            if problem is None:
                kept.append(record)
            else:
                log.warning("left out of the export: a stored row (%s[%d].%s)", section, index, problem)
        document[section] = kept
    return document


def export_rows(conn: Connection, now: datetime, learner_id: int = 0) -> dict[str, Any]:
    """Read one learner's rows of every table into the export document (inside one read transaction)."""

    def rows(sql: str) -> list[Record]:
        table, _, order = sql.partition(" ORDER BY ")
        return conn.execute(f"{table} WHERE learner_id = ? ORDER BY {order}", (learner_id,)).fetchall()

    def loads(text: str | None, where: str) -> Any:
        return None if text is None else stored_json(text, where)

    return _importable({
        "format": FORMAT_NAME,
        "version": EXPORT_VERSION,
        "exported_at": now.isoformat(),
        "predictions": [
            {"lesson_id": a, "key": b, "value": c, "correct": bool(d), "at": e}
            for a, b, c, d, e in rows("SELECT lesson_id, key, value, correct, at FROM predictions ORDER BY lesson_id, key")
        ],
        "code": [
            {"exercise_id": a, "language": b, "source": c, "at": d}
            for a, b, c, d in rows("SELECT exercise_id, language, source, at FROM code ORDER BY exercise_id, language")
        ],
        "submissions": [
            {"exercise_id": a, "language": b, "source": c, "result": loads(d, "a submission's result"), "at": e}
            for a, b, c, d, e in rows("SELECT exercise_id, language, source, result, at FROM submissions ORDER BY id")
        ],
        "quiz_answers": [
            {"lesson_id": a, "question_id": b, "answer": c, "correct": bool(d), "at": e}
            for a, b, c, d, e in rows("SELECT lesson_id, question_id, answer, correct, at FROM quiz_answers ORDER BY id")
        ],
        "explanations": [
            {"lesson_id": a, "text": b, "ticked": loads(c, "an explanation"), "at": d}
            for a, b, c, d in rows("SELECT lesson_id, text, ticked, at FROM explanations ORDER BY lesson_id")
        ],
        "cards": [
            {"lesson_id": a, "question_id": b, "card": loads(c, "a review card")}
            for a, b, c in rows("SELECT lesson_id, question_id, card FROM cards ORDER BY lesson_id, question_id")
        ],
        "review_logs": [
            {
                "lesson_id": a, "question_id": b, "kind": c, "answer": d, "correct": bool(e), "rating": f,
                "log": loads(g, "a review log"), "previous_card": loads(h, "a review log"),
                "card_after": loads(i, "a review log"), "undone": bool(j), "at": k,
            }
            for a, b, c, d, e, f, g, h, i, j, k in rows(
                "SELECT lesson_id, question_id, kind, answer, correct, rating, log, previous_card, card_after, "
                "undone, at FROM review_logs ORDER BY id"
            )
        ],
        "help_used": [
            {"lesson_id": a, "exercise_id": b, "kind": c, "number": d, "at": e}
            for a, b, c, d, e in rows("SELECT lesson_id, exercise_id, kind, number, at FROM help_used ORDER BY id")
        ],
    })


# How many rows one write transaction of an import holds: each batch holds the database's write lock
# about as long as a learner's ordinary save, so that classmates' saves go on between batches.
BATCH_ROWS = 200
BATCH_CHARS = 512 * 1024


def _same_number(value: object) -> Any:
    """0.0 and 0 mean the same number (JavaScript's JSON.stringify writes 0.0 as 0): one form of each."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    if isinstance(value, dict):
        return {key: _same_number(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_same_number(item) for item in value]
    return value


def _meaning(value: object) -> str:
    """What a JSON value means, as text: two values that mean the same give the same text."""
    return json.dumps(_same_number(value), sort_keys=True)


def _moment(at: str) -> str:
    """One time, however its offset is written (…+00:00, …+02:00 two hours later, …Z)."""
    return datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone(timezone.utc).isoformat()


# History sections: the columns stored for a record (in order), from the record.
HISTORY: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], tuple[Any, ...]]]] = {
    "submissions": (("exercise_id", "language", "source", "result", "status", "at"),
                    lambda r: (r["exercise_id"], r["language"], r["source"], _dumps(r["result"]),
                               str(r["result"].get("status", "")), r["at"])),
    "quiz_answers": (("lesson_id", "question_id", "answer", "correct", "at"),
                     lambda r: (r["lesson_id"], r["question_id"], r["answer"], int(r["correct"]), r["at"])),
    "review_logs": (("lesson_id", "question_id", "kind", "answer", "correct", "rating", "log", "previous_card",
                     "card_after", "undone", "at"),
                    lambda r: (r["lesson_id"], r["question_id"], r["kind"], r["answer"], int(r["correct"]), r["rating"],
                               _dumps(r["log"]), None if r["previous_card"] is None else _dumps(r["previous_card"]),
                               _dumps(r["card_after"]), int(r["undone"]), r["at"])),
    "help_used": (("lesson_id", "exercise_id", "kind", "number", "at"),
                  lambda r: (r["lesson_id"], r["exercise_id"], r["kind"], r["number"], r["at"])),
}
_JSON_COLUMNS = {"result", "log", "previous_card", "card_after"}


def _identity(columns: tuple[str, ...], values: tuple[Any, ...] | Record) -> tuple[Any, ...] | None:
    """What a stored or imported history row means: JSON compared by meaning, times by the moment, flags
    as flags. None for a stored row that cannot be read (it is never a duplicate of anything)."""
    out = []
    for column, value in zip(columns, values):
        try:
            if column in _JSON_COLUMNS:
                value = None if value is None else _meaning(json.loads(value))
            elif column == "at":
                value = _moment(value)
            elif column in ("correct", "undone"):
                value = bool(value)
        except (TypeError, ValueError, AttributeError, RecursionError):
            return None
        out.append(value)
    return tuple(out)


def _size(values: tuple[Any, ...]) -> int:
    return sum(len(value) for value in values if isinstance(value, str))


def new_rows(conn: Connection, data: dict[str, Any], learner_id: int) -> dict[str, list[tuple[Any, ...]]]:
    """The history rows of ``data`` to add, per section (read once, compared in linear time): a record the
    file holds k times and the store m times (by what it means) is added k - m times, never below 0."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for section, (columns, values_of) in HISTORY.items():
        stored = Counter(
            _identity(columns, row) for row in conn.execute(
                f"SELECT {', '.join(columns)} FROM {section} WHERE learner_id = ?", (learner_id,)))
        rows[section] = []
        for record in data.get(section, []):  # help_used is absent from a version-1 file
            values = values_of(record)
            identity = _identity(columns, values)
            if stored[identity] > 0:
                stored[identity] -= 1
            else:
                rows[section].append(values)
    return rows


def _keyed(data: dict[str, Any]) -> list[tuple[str, str, tuple[Any, ...]]]:
    """(section, SQL, parameters) for each keyed record: it replaces the stored one, if different."""
    out: list[tuple[str, str, tuple[Any, ...]]] = []
    for r in data["predictions"]:
        out.append(("predictions",
                    "INSERT INTO predictions (learner_id, lesson_id, key, value, correct, at) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (learner_id, lesson_id, key) DO UPDATE SET value = excluded.value, "
                    "correct = excluded.correct, at = excluded.at WHERE predictions.value <> excluded.value "
                    "OR predictions.correct <> excluded.correct OR predictions.at <> excluded.at",
                    (r["lesson_id"], r["key"], float(r["value"]), int(r["correct"]), r["at"])))
    for r in data["code"]:
        out.append(("code",
                    "INSERT INTO code (learner_id, exercise_id, language, source, at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (learner_id, exercise_id, language) DO UPDATE SET source = excluded.source, "
                    "at = excluded.at WHERE code.source <> excluded.source OR code.at <> excluded.at",
                    (r["exercise_id"], r["language"], r["source"], r["at"])))
    for r in data["explanations"]:
        out.append(("explanations",
                    "INSERT INTO explanations (learner_id, lesson_id, text, ticked, at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (learner_id, lesson_id) DO UPDATE SET text = excluded.text, ticked = excluded.ticked, "
                    "at = excluded.at WHERE explanations.text <> excluded.text OR explanations.ticked <> excluded.ticked "
                    "OR explanations.at <> excluded.at",
                    (r["lesson_id"], r["text"], json.dumps(r["ticked"]), r["at"])))
    for r in data["cards"]:
        out.append(("cards",
                    "INSERT INTO cards (learner_id, lesson_id, question_id, card, due_ts) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (learner_id, lesson_id, question_id) DO UPDATE SET card = excluded.card, "
                    "due_ts = excluded.due_ts WHERE cards.card <> excluded.card",
                    (r["lesson_id"], r["question_id"], _dumps(r["card"]), Card.from_dict(r["card"]).due.timestamp())))
    return out


class LearnersStore(Protocol):
    """What import_rows needs of a ProgressStore (progress/store.py, which imports this module)."""

    @property
    def learner_id(self) -> int: ...

    @property
    def database(self) -> Database: ...


def import_rows(store: LearnersStore, data: dict[str, Any], *, origin: str = "", quota: int | None = None) -> dict[str, Any]:
    """Write a validated document as ``store``'s learner's, in batches.

    Compared first (one read of the learner's rows, linear time), then written in short transactions of at
    most BATCH_ROWS rows, so that no write holds the database longer than a normal save. origin: what
    history rows are marked with ('imported' for a learner's own file in a class: they count for nothing
    there). quota: the most characters the learner may keep (StoreError kind OVER_QUOTA, nothing written).
    Returns, per section, how many records were added or changed, and under "new_runs" the submissions
    added (exercise, language, source, at), oldest first.
    """
    learner_id = store.learner_id
    added: dict[str, Any] = {section: 0 for section in SECTIONS}
    rows = store.database.read(lambda conn: new_rows(conn, data, learner_id), snapshot=True)
    keyed = _keyed(data)
    if quota is not None:  # the one quota over every table a learner writes (progress/quota.py)
        adding = sum(row_cost(*values) for values in (*(v for r in rows.values() for v in r), *(k[2] for k in keyed)))
        refuse_over_quota(store.database, learner_id, adding, quota, "This file")

    batch: list[tuple[str, str, tuple[Any, ...], bool]] = []  # (section, SQL, parameters, counts as added whatever its rowcount)

    def flush() -> None:
        def work(conn: Connection) -> None:
            for section, sql, params, always in batch:
                changed = conn.execute(sql, (learner_id, *params)).rowcount
                added[section] += 1 if always else changed

        if batch:
            store.database.write(work, lock=learner_id)
            batch.clear()

    chars = 0
    statements = [(section, sql, params, False) for section, sql, params in keyed]
    for section, (columns, _) in HISTORY.items():
        marked = (*columns, "origin") if section in ("submissions", "quiz_answers") else columns
        sql = (f"INSERT INTO {section} (learner_id, {', '.join(marked)}) "
               f"VALUES (?, {', '.join('?' for _ in marked)})")
        statements += [(section, sql, (*values, origin) if marked != columns else values, True)
                       for values in rows[section]]
    for statement in statements:
        batch.append(statement)
        chars += _size(statement[2])
        if len(batch) >= BATCH_ROWS or chars >= BATCH_CHARS:
            flush()
            chars = 0
    flush()
    added["new_runs"] = [(values[0], values[1], values[2], values[5]) for values in rows["submissions"]]
    return added
