"""Due dates in the class's time zone, learners' extensions, the late policy, and credit as of each learner's
own due date: the one place the gradebook, the CSV, the teacher's page, the CLI and the LMS score ask.

    deadlines = Deadlines(store, accounts)
    deadlines.set_policy(class_id, time_zone="Europe/Berlin", late="10")     # 10 % less a day late ("no-credit")
    deadlines.set_due(class_id, "backprop", "2026-12-04 23:59")             # the lesson's work
    deadlines.set_due(class_id, "backprop", "2026-12-03", exercise="neuron-grads")   # 23:59 that day
    deadlines.extend(class_id, learner_id, "backprop", "+2")                # 2 days after the lesson's date
    deadlines.extend_from_csv(class_id, text)                               # learner,lesson,due on each line
    deadlines.credit(class_id)        # {learner: {lesson: {"credit", "due", "late_sections", ...}}}

Credit is computed from the dates and the work's own times, never stored: moving a date, an extension or
the policy recomputes every number (and a penalty goes when the date moves past the work). A lesson earns
one point per section finished, by the one rule of "finished" (progress/finished.py): a section finished
with the work done by each piece's due date earns 1; one finished only with work done later earns, under
"no-credit", nothing, under a percentage per day, 1 less that percentage for each day (24 hours, begun)
past the due date of its latest piece, never below 0. Late work is kept and shown as late all the same.

A piece of work is due at its exercise's date if the exercise has one, else at its lesson's; a learner's
extension of a lesson moves every date of that lesson's work to the extension when it is later. Work
without a date is never late.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from chainrule import lessons
from chainrule.classes.accounts import Accounts
from chainrule.classes.credit_marks import marked_credit
from chainrule.errors import InputError
from chainrule.number_text import count_text, format_number
from chainrule.progress.audit_store import COMMAND_LINE, Actor
from chainrule.progress.deadline_store import DeadlineStore
from chainrule.progress.finished import Work, lesson_state
from chainrule.progress.shapes import DeadlineSettings
from chainrule.progress.store import ProgressStore
from chainrule.progress.validation import EARLIEST, LATEST

__all__ = ["Deadlines", "LatePolicy", "NO_CREDIT", "PER_DAY", "parse_late_policy"]

NO_CREDIT = "no-credit"
PER_DAY = "per-day"
DAY = timedelta(days=1)
MAX_EXTENSION_ROWS = 10_000  # a CSV of extensions longer than this is refused whole
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}))?$")
_RELATIVE = re.compile(r"^\+(\d{1,3})(?:\s*d(?:ays?)?)?$")
DATE_FORMS = ("YYYY-MM-DD HH:MM, YYYY-MM-DD (23:59 that day), or, for an extension, +N (N days after the "
              "lesson's due date)")


@dataclass(frozen=True)
class LatePolicy:
    """What late work earns: nothing ("no-credit"), or ``percent`` less per day late ("per-day")."""

    kind: str = NO_CREDIT
    percent: int = 0

    def hundredths(self, days_late: int) -> int:
        """The share of a point (in hundredths) a section earns ``days_late`` days after its due date."""
        if days_late <= 0:
            return 100
        if self.kind == NO_CREDIT:
            return 0
        return max(0, 100 - self.percent * days_late)

    def text(self) -> str:
        if self.kind == NO_CREDIT:
            return "late work earns no credit"
        return f"late work loses {format_number(self.percent)} % of its credit per day late"


def parse_late_policy(text: str) -> LatePolicy:
    """ "no-credit", or a whole percentage per day from 1 to 100 ("10" or "10%")."""
    given = str(text).strip().lower()
    if given in (NO_CREDIT, "none", "no credit"):
        return LatePolicy(NO_CREDIT, 0)
    match = re.fullmatch(r"(\d{1,3})\s*%?(?:\s*(?:per|a|/)\s*day)?", given)
    if match is None or not 1 <= int(match.group(1)) <= 100:
        raise InputError(f"the late policy {text!r} is not one: give \"no-credit\" (late work earns nothing) or a "
                         "whole percentage from 1 to 100 taken off per day late, like \"10\" or \"10%\"",
                         field="late")
    return LatePolicy(PER_DAY, int(match.group(1)))


def time_zone(name: str) -> ZoneInfo:
    try:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*", name):
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InputError(f"{name!r} is not a time zone: give an IANA name such as \"Europe/Berlin\", "
                         "\"America/New_York\" or \"UTC\"", field="time_zone") from None


def parse_due(text: str, *, field: str = "due") -> str:
    """A due date as stored: 'YYYY-MM-DDTHH:MM', the class's wall-clock time (a day alone: 23:59), in the years
    every stored time keeps to (progress/validation.py's EARLIEST and LATEST: 1970 to 2999)."""
    match = _DATE.match(str(text).strip())
    if match is not None:
        day, clock = match.group(1), match.group(2) or "23:59"
        try:
            moment = datetime.fromisoformat(f"{day}T{clock}")
        except ValueError:
            moment = None
        if moment is not None:
            return _stored(moment, text, field)
    raise InputError(f"{text!r} is not a date: give {DATE_FORMS}", field=field)


def _stored(moment: datetime | None, text: str, field: str) -> str:
    """``moment`` as stored, or an InputError when it is outside the years of stored times (None: past 9999)."""
    if moment is None or not EARLIEST.replace(tzinfo=None) <= moment < LATEST.replace(tzinfo=None):
        raise InputError(f"{text!r} is outside the years {EARLIEST.year} to {LATEST.year - 1}: give a date in "
                         "them", field=field)
    return moment.strftime("%Y-%m-%dT%H:%M")


def due_text(due: str | None, zone: str) -> str:
    """How a page and the CSV write a due date: '2026-12-04 23:59 (Europe/Berlin)', '–' if none."""
    return "\u2013" if due is None else f"{due.replace('T', ' ')} ({zone})"


def due_instant(due: str, zone: ZoneInfo) -> str:
    """The moment a due date (the class's wall-clock time) stands for, in ISO 8601 UTC ('2026-12-04T22:59:00Z'):
    what a learner's page writes in the learner's own time zone."""
    return datetime.fromisoformat(due).replace(tzinfo=zone).astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _lessons() -> list[dict[str, Any]]:
    return [lessons.lesson_shape(entry["id"]) | {"title": entry["title"]}
            for entry in lessons.get_path()["lessons"] if entry.get("written")]


def lesson_shapes() -> list[dict[str, Any]]:
    """The written lessons' shapes with their titles, in the path's order (classes/overrides.py's form)."""
    return _lessons()


def _moment(at: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def days_late(done: datetime, due: datetime | None) -> int:
    """Whole days begun after the due date (0: on time, or no due date)."""
    if due is None or done <= due:
        return 0
    return math.ceil((done - due) / DAY)


class Deadlines:
    def __init__(self, store: ProgressStore, accounts: Accounts) -> None:
        self.tables = DeadlineStore(store)
        self.accounts = accounts

    # ---------------------------------------------------------------- the teacher sets

    def set_policy(self, class_id: int, *, time_zone_name: str | None = None, late: str | None = None,
                   by: Actor = COMMAND_LINE) -> dict:
        current = self.tables.settings(class_id)
        zone = current["time_zone"] if time_zone_name is None else str(time_zone_name).strip()
        time_zone(zone)
        policy = (LatePolicy(current["late_policy"], current["late_percent"]) if late is None
                  else parse_late_policy(late))
        self.tables.save_policy(class_id, zone, policy.kind, policy.percent, by)
        return self.settings(class_id)

    def set_due(self, class_id: int, lesson_id: str, due: str | None, *, exercise: str | None = None,
                by: Actor = COMMAND_LINE) -> dict:
        """Set a lesson's (or one of its exercises') due date; None or "none" removes it."""
        shape = self._lesson(lesson_id)
        if exercise and exercise not in shape["exercises"]:
            raise InputError(f"lesson {lesson_id!r} has no exercise {exercise!r}: its exercises are "
                             f"{', '.join(shape['exercises']) or 'none'}", field="exercise")
        stored = None if due is None or str(due).strip().lower() in ("", "none") else parse_due(due)
        self.tables.save_due(class_id, lesson_id, exercise or "", stored, by)
        return self.settings(class_id)

    def extend(self, class_id: int, learner_id: int, lesson_id: str, due: str | None, *,
               by: Actor = COMMAND_LINE) -> dict:
        """One learner's own due date for a lesson's work; None or "none" removes the extension."""
        self.accounts.learner(class_id, learner_id)
        settings = self.tables.settings(class_id)
        self.tables.save_extensions(class_id, [(learner_id, lesson_id, self._extension(settings, lesson_id, due))], by)
        return self.settings(class_id)

    def extend_from_csv(self, class_id: int, text: str, *, by: Actor = COMMAND_LINE) -> int:
        """Extensions for many learners at once: a CSV with the columns learner, lesson, due (a header row of
        those names is optional). Every row is checked first; one bad row refuses the file, naming the row."""
        by_name = {learner.name: learner.id for learner in self.accounts.learners(class_id)}
        settings = self.tables.settings(class_id)
        try:  # newline="": a lone carriage return ends a row, as in the files spreadsheets write
            rows = list(csv.reader(io.StringIO(text, newline="")))
        except csv.Error as error:  # a cell longer than the csv module reads (its limit, said once), say
            raise InputError(f"this is not a CSV that can be read ({error}; a cell holds at most "
                             f"{count_text(csv.field_size_limit(), 'character')}): give one row per learner and lesson: "
                             "learner,lesson,due", field="csv") from error
        if rows and [cell.strip().lower() for cell in rows[0][:3]] == ["learner", "lesson", "due"]:
            rows = rows[1:]
        rows = [row for row in rows if any(cell.strip() for cell in row)]
        if len(rows) > MAX_EXTENSION_ROWS:
            raise InputError(f"this CSV has {count_text(len(rows), 'row')}: send at most {MAX_EXTENSION_ROWS:,} at a time",
                             field="csv")
        if not rows:
            raise InputError("this CSV has no extensions: give one row per learner and lesson: learner,lesson,due",
                             field="csv")
        extensions = []
        for number, row in enumerate(rows, start=1):
            where = f"row {number}"
            if len(row) != 3:
                raise InputError(f"{where} has {len(row)} cells: each row is learner,lesson,due", field="csv")
            name, lesson_id, due = (cell.strip() for cell in row)
            if name not in by_name:
                raise InputError(f"{where}: there is no learner named {name!r} in this class", field="csv")
            try:
                extensions.append((by_name[name], lesson_id, self._extension(settings, lesson_id, due)))
            except InputError as error:
                raise InputError(f"{where}: {error}", field="csv") from None
        self.tables.save_extensions(class_id, extensions, by)
        return len(extensions)

    def _extension(self, settings: DeadlineSettings, lesson_id: str, due: str | None) -> str | None:
        self._lesson(lesson_id)
        if due is None or str(due).strip().lower() in ("", "none"):
            return None
        relative = _RELATIVE.match(str(due).strip())
        if relative is None:
            return parse_due(due)
        base = settings["due"].get((lesson_id, ""))
        if base is None:
            raise InputError(f"lesson {lesson_id!r} has no due date yet, so +{count_text(int(relative.group(1)), 'day')} has nothing "
                             "to count from: set the lesson's date first, or give the extension as a date",
                             field="due")
        try:
            moment: datetime | None = datetime.fromisoformat(base) + int(relative.group(1)) * DAY
        except OverflowError:  # past the year 9999
            moment = None
        return _stored(moment, f"{due} (after {base.replace('T', ' ')})", "due")

    @staticmethod
    def _lesson(lesson_id: str) -> dict[str, Any]:
        for shape in _lessons():
            if shape["id"] == lesson_id:
                return shape
        raise InputError(f"there is no lesson {lesson_id!r} on the path: the lessons are "
                         f"{', '.join(shape['id'] for shape in _lessons())}", field="lesson")

    # ---------------------------------------------------------------- what they read

    def settings(self, class_id: int) -> dict[str, Any]:
        """The class's time zone, late policy, due dates and extensions, as a page and the CLI show them."""
        found = self.tables.settings(class_id)
        zone = found["time_zone"]
        policy = LatePolicy(found["late_policy"], found["late_percent"])
        names = {learner.id: learner.name for learner in self.accounts.learners(class_id)}
        due = []
        for shape in _lessons():
            for exercise in ["", *shape["exercises"]]:
                at = found["due"].get((shape["id"], exercise))
                if exercise == "" or at is not None:
                    due.append({"lesson_id": shape["id"], "title": shape["title"], "exercise_id": exercise or None,
                                "due": at, "due_text": due_text(at, zone)})
        extensions = [{"learner_id": learner, "name": names.get(learner, f"(learner {learner})"), "lesson_id": lesson,
                       "due": at, "due_text": due_text(at, zone)}
                      for (learner, lesson), at in sorted(found["extensions"].items(),
                                                          key=lambda item: (names.get(item[0][0], ""), item[0][1]))]
        return {"time_zone": zone, "late_policy": policy.kind, "late_percent": policy.percent,
                "late_policy_text": policy.text(), "due": due, "extensions": extensions}

    def credit(self, class_id: int, learner_ids: Iterable[int] | None = None, *,
               found: DeadlineSettings | None = None) -> dict[int, dict[str, dict]]:
        """{learner: {lesson: credit}} for the class's learners (or the given ones of them): each lesson's
        "credit" (points, one per section, after the late policy) and its text, "sections", "on_time" and
        "late_sections" (finished by the due dates, or only later), "late_work" (pieces done after their
        due date) and "late_items" (which: exercises passed, questions answered, the explanation), "completed" (every section finished, late or not), the learner's "due" and "extended"; the
        teacher's overrides and excuses applied (classes/credit_marks.py: "counted", "mark", "exercise_marks").
        found: the class's settings when the caller has read them already."""
        found = self.tables.settings(class_id) if found is None else found
        zone_name = found["time_zone"]
        zone = time_zone(zone_name)
        policy = LatePolicy(found["late_policy"], found["late_percent"])
        ids = None if learner_ids is None else [int(learner) for learner in learner_ids]
        if ids is not None:
            if not ids:
                return {}
            wanted = ids
        times: dict[int, list[tuple]] = defaultdict(list)
        for work in self.tables.work_times(class_id, ids):
            moment = _moment(work.at)
            if moment is not None:
                times[work.learner].append((work.kind, work.lesson, work.item, moment))
        if learner_ids is None:
            wanted = [learner.id for learner in self.accounts.learners(class_id)]
        shapes = _lessons()

        def instant(due: str | None) -> datetime | None:
            return None if due is None else datetime.fromisoformat(due).replace(tzinfo=zone)

        result: dict[int, dict[str, dict]] = {}
        for learner in wanted:
            result[learner] = {}
            for shape in shapes:
                lesson = shape["id"]
                extension = found["extensions"].get((learner, lesson))

                def due_of(exercise: str = "", lesson: str = lesson, extension: str | None = extension) -> str | None:
                    return _due_of(found, lesson, exercise, extension)

                def compute(shape: dict, times: list[tuple], due_of: Any = due_of) -> dict[str, Any]:
                    return _lesson_credit(shape, times, due_of, instant, policy)

                result[learner][lesson] = marked_credit(shape, times.get(learner, []), found.get("marks", {}), learner,
                                                        compute) | {
                    "due": due_of(), "due_text": due_text(due_of(), zone_name), "extended": extension is not None}
        return result

    def mine(self, account: Any, now: datetime) -> dict[str, Any]:
        """What a learner's own pages show: each lesson with a due date (the learner's own, extension
        included; "extended" when the extension is the date), whether it has passed, the dates of exercises
        that have their own, and the credit so far; the class's late policy. A teacher sees the class's dates."""
        found = self.tables.settings(account.class_id)
        zone_name = found["time_zone"]
        zone = time_zone(zone_name)
        learner = account.role == "learner"
        credit = self.credit(account.class_id, [account.id], found=found).get(account.id, {}) if learner else {}

        def dated(due: str, extension: str | None) -> dict[str, Any]:
            return {"due": due, "due_text": due_text(due, zone_name), "due_at": due_instant(due, zone),
                    "extended": due == extension,
                    "past_due": now > datetime.fromisoformat(due).replace(tzinfo=zone)}

        shown = []
        for shape in _lessons():
            lesson = shape["id"]
            extension = found["extensions"].get((account.id, lesson)) if learner else None
            exercises = [{"exercise_id": exercise} | dated(due, extension) for exercise in shape["exercises"]
                         if (lesson, exercise) in found["due"]
                         and (due := _due_of(found, lesson, exercise, extension)) is not None]
            due = _due_of(found, lesson, "", extension)
            if due is None and not exercises:
                continue
            entry = {"lesson_id": lesson, "title": shape["title"], "exercises": exercises} | (
                dated(due, extension) if due else {"due": None, "due_text": None, "due_at": None, "extended": False,
                                                  "past_due": False})
            if lesson in credit:
                entry |= {key: credit[lesson][key] for key in ("score_text", "completed", "late_sections", "late_work")}
            shown.append(entry)
        policy = LatePolicy(found["late_policy"], found["late_percent"])
        return {"time_zone": zone_name, "late_policy_text": policy.text(), "lessons": shown}

    def credit_of(self, learner_ids: Iterable[int]) -> dict[int, dict[str, dict]]:
        """credit() of learners of any classes (the LMS score scan's learners)."""
        by_class: dict[int, list[int]] = defaultdict(list)
        for learner_id in learner_ids:
            account = self.accounts.account(learner_id)
            if account is not None and account.role == "learner":
                by_class[account.class_id].append(account.id)
        found: dict[int, dict[str, dict]] = {}
        for class_id, ids in by_class.items():
            found |= self.credit(class_id, ids)
        return found

    def gradebook_columns(self, class_id: int) -> tuple[list[str], dict[int, list[Any]]]:
        """The gradebook's credit columns (per lesson: the learner's due date, credit ("excused" if the teacher
        excused it), late work; then the credit of the whole path, and what it is out of: the sections of the
        lessons not excused) and each learner's cells."""
        shapes = _lessons()
        header = []
        for shape in shapes:
            header += [f"{shape['id']}: due", f"{shape['id']}: credit (of {len(shape['sections'])})",
                       f"{shape['id']}: late work"]
        header += [f"credit (of {sum(len(shape['sections']) for shape in shapes)})", "credit out of (excused left out)"]
        cells = {}
        for learner, per_lesson in self.credit(class_id).items():
            row: list[Any] = []
            for shape in shapes:
                entry = per_lesson[shape["id"]]
                row += [entry["due_text"] if entry["due"] else "", entry["credit_text"], entry["late_work"]]
            row += [format_number(sum(entry["credit"] for entry in per_lesson.values())),
                    format_number(sum(entry["counted"] for entry in per_lesson.values()))]
            cells[learner] = row
        return header, cells


def _due_of(found: DeadlineSettings, lesson: str, exercise: str, extension: str | None) -> str | None:
    """A piece's due date: its exercise's own, else its lesson's; a later extension of the lesson moves it."""
    base = found["due"].get((lesson, exercise)) or found["due"].get((lesson, ""))
    if extension is not None and (base is None or extension > base):
        return extension
    return base


def _lesson_credit(shape: dict[str, Any], times: list[tuple], due_of: Any, instant: Any,
                   policy: LatePolicy) -> dict[str, Any]:
    """One learner's credit in one lesson: the rule of "finished" asked once per number of days late found
    among the pieces, each section credited at the fewest days late it is finished with."""
    lesson = shape["id"]
    pieces = []  # (days late, kind, item)
    for kind, in_lesson, item, moment in times:
        if kind in ("pass", "tried"):
            if item not in shape["exercises"]:
                continue
            due = instant(due_of(item))
        elif in_lesson != lesson:
            continue
        else:
            due = instant(due_of())
        pieces.append((days_late(moment, due), kind, item))

    def work_within(days: int) -> Work:
        work = Work()
        for late, kind, item in pieces:
            if late > days:
                continue
            if kind == "prediction":
                work.predictions[lesson].add(item)
            elif kind == "pass":
                work.passed.add(item)
            elif kind == "tried":
                work.tried.add(item)
            elif kind == "answer":
                work.answered[lesson].add(item)
            else:
                work.explained.add(lesson)
        return work

    first_at: dict[str, int] = {}
    completed = False
    for days in sorted({0, *(late for late, _, _ in pieces)}):
        state = lesson_state(shape, work_within(days))
        for section in state["sections"]:
            first_at.setdefault(section, days)
        completed = state["lesson"]
    hundredths = sum(policy.hundredths(days) for days in first_at.values())
    credit = hundredths / 100
    late_work = sum(late > 0 for late, kind, _ in pieces if kind != "tried")
    late = {(kind, item) for days, kind, item in pieces if days > 0}
    return {"lesson_id": lesson, "credit": credit, "credit_text": format_number(credit),
            "score_text": f"{format_number(credit)} of {format_number(len(shape['sections']))}",
            "sections": len(shape["sections"]), "on_time": sum(days == 0 for days in first_at.values()),
            "late_sections": sum(days > 0 for days in first_at.values()), "late_work": late_work,
            "completed": completed,
            # What the teacher's grid marks as late: each square's piece, done after its due date.
            "late_items": {"exercises": sorted(item for kind, item in late if kind == "pass"),
                           "questions": sorted(item for kind, item in late if kind == "answer"),
                           "explanation": ("explanation", "") in late}}
