"""A class's roster: the people a teacher lists from a CSV, before they join (issue 43, item 6).

    roster = Roster(accounts)
    outcome = roster.import_csv(class_id, data)   # bytes of the file; every row, or none (an InputError)
    roster.entries(class_id)                      # who is listed, their section, and who has joined

What an imported person is: a roster entry, a seat reserved for one e-mail or school id. Nothing is made for
them until they join with the class's invite and give that e-mail or id (the join form asks for it once the
class has a roster): they then take the entry (in the same transaction as their account), with its section,
and are let in at once even if the class asks for approval (a teacher listed them). A key can be taken once.
The name on the roster is the teacher's record; the learner still chooses the name the class sees.

The file (one rule, said in every refusal): UTF-8 text (a byte-order mark allowed, as spreadsheets write
"CSV UTF-8"), comma-separated, its first row a header naming the columns in any order, case and spaces
ignored: "name", "section", and one of "e-mail" (or "email") and "school id" (or "school_id"). At most
MAX_ROSTER_ROWS rows and MAX_ROSTER_BYTES bytes. Every row: a name of 1 to 60 characters, an e-mail
(something@somewhere, at most 254 characters; kept in lower case) or a school id (1 to 60 letters, digits,
".", "-" or "_"), a section of at most MAX_SECTION characters (empty: none). No cell may start with a
character a spreadsheet runs as a formula (report.py's FORMULA_START), and no key may appear twice. One bad
row refuses the whole file: the error lists every bad row by its line in the file and says what is allowed.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Any

from chainrule.classes.accounts import Accounts, clean_name, joining_key, storable_text
from chainrule.errors import InputError
from chainrule.number_text import count_text
from chainrule.progress.roster_store import RosterEntry, RosterStore

MAX_ROSTER_ROWS = 2_000  # people in one file: a whole school year's classes
MAX_ROSTER_BYTES = 256 * 1024  # a 2,000-row roster is about 100 KB
MAX_SECTION = 40
MAX_EMAIL = 254
MAX_PROBLEMS_SAID = 20  # bad rows named in one error; the rest are counted
EMAIL, SCHOOL_ID = "e-mail", "school id"
HEADER_NAMES = {"name": "name", "section": "section", "e-mail": EMAIL, "email": EMAIL, "school id": SCHOOL_ID,
                "school_id": SCHOOL_ID}
# A spreadsheet runs a cell that starts with one of these as a formula (OWASP's CSV injection): the roster
# takes none, and the gradebook (classes/report.py's csv_text) writes such text with a leading apostrophe.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
FILE_RULE = ("a roster is a UTF-8 CSV whose first row names the columns name, section and one of e-mail or "
             "school id")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_SCHOOL_ID = re.compile(r"[A-Za-z0-9._-]{1,60}")


@dataclass(frozen=True)
class Imported:
    added: int
    updated: int

    def text(self) -> str:
        return (f"{count_text(self.added, 'person', 'people')} added to the roster, "
                f"{count_text(self.updated, 'person', 'people')} already on it updated")


def check_section(value: Any, field: str = "section") -> str:
    """A section's name: at most MAX_SECTION printable characters ('' : no section), no formula start."""
    text = storable_text(value, field).strip()
    if not text:
        return ""
    if text.startswith(FORMULA_START):
        raise InputError(f"a section may not start with {text[0]!r} (a spreadsheet would run it as a formula)",
                         field=field)
    if len(text) > MAX_SECTION:
        raise InputError(f"a section is at most {MAX_SECTION} characters, got {len(text)}", field=field)
    return clean_name(text, "section", field)


def _key(kind: str, cell: str) -> str:
    if kind == EMAIL:
        if len(cell) > MAX_EMAIL or not _EMAIL.fullmatch(cell):
            raise InputError(f"the e-mail {cell!r} is not one: give name@place, at most {MAX_EMAIL} characters")
        return joining_key(cell)
    if not _SCHOOL_ID.fullmatch(cell):
        raise InputError(f"the school id {cell!r} is not one: give 1 to 60 letters, digits, '.', '-' or '_'")
    return cell


def _text(data: bytes) -> str:
    if len(data) > MAX_ROSTER_BYTES:
        raise InputError(f"this file is {len(data):,} bytes: a roster is at most {MAX_ROSTER_BYTES:,} bytes "
                         f"({count_text(MAX_ROSTER_ROWS, 'row')}); split it. Nothing was imported.", field="csv")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"this file is not UTF-8 text (byte {data[error.start]:#04x} at position {error.start:,} "
                         "is not UTF-8): save it from the spreadsheet as \"CSV UTF-8\". Nothing was imported.",
                         field="csv") from None


def _columns(header: list[str], line: int) -> dict[str, int]:
    named = [HEADER_NAMES.get(" ".join(cell.strip().lower().split())) for cell in header]
    problems = [f"column {number} is {cell.strip()!r}" for number, (cell, name) in enumerate(zip(header, named), 1)
                if name is None and cell.strip()]
    known = [name for name in named if name is not None]
    keys = [name for name in known if name in (EMAIL, SCHOOL_ID)]
    if problems or "name" not in known or len(keys) != 1 or len(set(known)) != len(known):
        said = "; ".join(problems) or f"it names {', '.join(known) or 'nothing'}"
        raise InputError(f"line {line}, the header: {said}. {FILE_RULE[0].upper()}{FILE_RULE[1:]} (a section may "
                         "be left empty, and the column too). Nothing was imported.", field="csv")
    return {name: index for index, name in enumerate(named) if name is not None}


def _row(cells: list[str], columns: dict[str, int]) -> RosterEntry:
    def cell(name: str) -> str:
        index = columns.get(name)
        return cells[index].strip() if index is not None and index < len(cells) else ""

    for value in cells:
        if value.startswith(FORMULA_START) or value.strip().startswith(FORMULA_START):
            raise InputError(f"the cell {value.strip()[:30]!r} starts with {value.strip()[:1]!r}, which a "
                             "spreadsheet runs as a formula: no cell may start with =, +, -, @, a tab or a return")
    if len(cells) > len(columns) and any(extra.strip() for extra in cells[len(columns):]):
        raise InputError(f"it has {len(cells)} cells, the header {len(columns)}")
    kind = EMAIL if EMAIL in columns else SCHOOL_ID
    if not cell(kind):
        raise InputError(f"it has no {kind}")
    return RosterEntry(clean_name(cell("name"), "name"), kind, _key(kind, cell(kind)), check_section(cell("section")))


def parse_roster(data: bytes) -> list[RosterEntry]:
    """Every entry of a roster file, or one InputError listing every bad row (by its line) and the rule."""
    reader = csv.reader(io.StringIO(_text(data), newline=""))
    rows: list[tuple[int, list[str]]] = []
    try:
        while True:
            line = reader.line_num + 1
            try:
                cells = next(reader)
            except StopIteration:
                break
            if any(cell.strip() for cell in cells):
                rows.append((line, cells))
    except csv.Error as error:
        raise InputError(f"line {reader.line_num}: this is not a CSV that can be read ({error}). {FILE_RULE}. "
                         "Nothing was imported.", field="csv") from None
    if not rows:
        raise InputError(f"this file is empty: {FILE_RULE}, then one row per person.", field="csv")
    if len(rows) - 1 > MAX_ROSTER_ROWS:
        raise InputError(f"this file has {count_text(len(rows) - 1, 'row')}: a roster is at most "
                         f"{MAX_ROSTER_ROWS:,}; split it. Nothing was imported.", field="csv")
    header_line, header = rows[0]  # the header: its line number and its cells
    columns = _columns(header, header_line)
    entries: list[RosterEntry] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for line, cells in rows[1:]:
        try:
            entry = _row(cells, columns)
        except InputError as error:
            problems.append(f"line {line}: {error}")
            continue
        if entry.key in first_line:
            problems.append(f"line {line}: the {entry.key_kind} {entry.key!r} is on line {first_line[entry.key]} "
                            "too: each person once")
            continue
        first_line[entry.key] = line
        entries.append(entry)
    if problems:
        said = "; ".join(problems[:MAX_PROBLEMS_SAID])
        more = f"; and {count_text(len(problems) - MAX_PROBLEMS_SAID, 'more bad row')}" \
            if len(problems) > MAX_PROBLEMS_SAID else ""
        raise InputError(f"{count_text(len(problems), 'row')} cannot be imported, so nothing was: {said}{more}. "
                         f"{FILE_RULE[0].upper()}{FILE_RULE[1:]}.", field="csv",
                         problems=[{"field": "csv", "message": problem, "column": None, "length": None}
                                   for problem in problems[:MAX_PROBLEMS_SAID]])
    if not entries:
        raise InputError(f"this file has a header but no one under it: {FILE_RULE}, then one row per person.",
                         field="csv")
    return entries


class Roster:
    """A class's roster, for its teachers (imports) and its teaching assistants (reading it)."""

    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts
        self.tables = RosterStore(accounts.store)

    def import_csv(self, class_id: int, data: bytes) -> Imported:
        """Every row of the file, in one transaction, or nothing (an InputError naming each bad row)."""
        entries = parse_roster(data)
        added, updated = self.tables.import_entries(class_id, entries, self.accounts.store.now().isoformat())
        return Imported(added, updated)

    def entries(self, class_id: int) -> list[dict[str, Any]]:
        return [{"id": int(row.id), "name": row.name, "key_kind": row.key_kind, "key": row.person_key,
                 "section": row.section, "joined_as": row.account_name,
                 "learner_id": None if row.account_id is None else int(row.account_id)}
                for row in self.tables.entries(class_id)]

    def has_entries(self, class_id: int) -> bool:
        return self.tables.has_entries(class_id)
