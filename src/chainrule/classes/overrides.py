"""The teacher sets a learner's credit by hand, or excuses a lesson or an exercise, always with a reason, and
undoes either (classes/credit_marks.py: what a mark does to credit); and the audit log of every change to what
a learner is credited, as the teacher's page, `chainrule class audit` and its CSV show it.

    overrides = Overrides(store, accounts)
    overrides.override(class_id, learner_id, "backprop", 6, "the quiz page failed for her", by=actor)
    overrides.excuse(class_id, learner_id, "backprop", "ill for the week", exercise="neuron-grads", by=actor)
    overrides.undo(class_id, learner_id, "backprop", "the page works again", by=actor)
    overrides.audit(class_id, page=1)        # {"entries": [...], "page", "pages", "total"}, newest first

Each change goes to the audit log in the same transaction (progress/mark_store.py) and makes the LMS score
scan look at the learner again: a score that changed is sent once.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from chainrule.classes.accounts import Accounts
from chainrule.classes.credit_marks import EXCUSE, OVERRIDE, check_credit, check_reason
from chainrule.classes.deadlines import Deadlines, lesson_shapes
from chainrule.errors import InputError
from chainrule.number_text import count_text, format_number
from chainrule.progress.audit_store import COMMAND_LINE, Actor, AuditStore, actor_of
from chainrule.progress.mark_store import MarkStore
from chainrule.progress.store import ProgressStore

__all__ = ["AUDIT_PAGE", "AUDIT_HEADER", "Overrides", "actor_of", "audit_rows"]

AUDIT_PAGE = 50  # entries per page of the log
AUDIT_HEADER = ["when (UTC)", "who", "change", "learner", "lesson", "exercise", "before", "after", "reason"]


class Overrides:
    def __init__(self, store: ProgressStore, accounts: Accounts) -> None:
        self.deadlines = Deadlines(store, accounts)
        self.tables = MarkStore(store)
        self.log = AuditStore(store)

    def override(self, class_id: int, learner_id: int, lesson_id: str, credit: Any, reason: Any, *,
                 exercise: str | None = None, by: Actor = COMMAND_LINE) -> dict[str, Any]:
        shape = self._where(lesson_id, exercise)
        return self._set(class_id, learner_id, shape, exercise, OVERRIDE, check_credit(shape, exercise, credit),
                         reason, by)

    def excuse(self, class_id: int, learner_id: int, lesson_id: str, reason: Any, *, exercise: str | None = None,
               by: Actor = COMMAND_LINE) -> dict[str, Any]:
        return self._set(class_id, learner_id, self._where(lesson_id, exercise), exercise, EXCUSE, None, reason, by)

    def undo(self, class_id: int, learner_id: int, lesson_id: str, reason: Any, *, exercise: str | None = None,
             by: Actor = COMMAND_LINE) -> dict[str, Any]:
        """Back to the computed credit (nothing happens but a refusal if there is no mark)."""
        shape = self._where(lesson_id, exercise)
        self.deadlines.accounts.learner(class_id, learner_id)
        key = (int(learner_id), lesson_id, exercise or "")
        if key not in self.tables.marks(class_id):
            what = f"exercise {exercise!r} of {lesson_id!r}" if exercise else f"lesson {lesson_id!r}"
            raise InputError(f"the {what} has no override or excuse for this learner: there is nothing to undo",
                             field="lesson_id")
        return self._set(class_id, learner_id, shape, exercise, None, None, reason, by)

    def _where(self, lesson_id: str, exercise: str | None) -> dict[str, Any]:
        shape = self.deadlines._lesson(lesson_id)
        if exercise and exercise not in shape["exercises"]:
            raise InputError(f"lesson {lesson_id!r} has no exercise {exercise!r}: its exercises are "
                             f"{', '.join(shape['exercises'])}", field="exercise_id")
        return shape

    def _set(self, class_id: int, learner_id: int, shape: dict[str, Any], exercise: str | None, kind: str | None,
             credit: float | None, reason: Any, by: Actor) -> dict[str, Any]:
        reason = check_reason(reason)
        learner = self.deadlines.accounts.learner(class_id, learner_id)
        found = self.deadlines.tables.settings(class_id)
        key = (learner.id, shape["id"], exercise or "")
        marks = dict(found["marks"])
        if kind is None:
            marks.pop(key, None)
        else:
            marks[key] = {"kind": kind, "credit": credit, "reason": reason}

        def credit_text(with_marks: dict) -> str:
            entry = self.deadlines.credit(class_id, [learner.id], found=found | {"marks": with_marks})
            return str(entry[learner.id][shape["id"]]["score_text"])

        self.tables.set_mark(class_id, learner.id, shape["id"], exercise or "", kind, credit, reason, by,
                             credit_text(found["marks"]), credit_text(marks))
        return self.deadlines.credit(class_id, [learner.id])[learner.id][shape["id"]]

    def current(self, class_id: int) -> dict[str, Any]:
        """What the teacher's form offers and the marks in force: the learners, the lessons (with their
        exercises and how much credit a lesson may be given), and each mark with its learner's name."""
        names = {learner.id: learner.name for learner in self.deadlines.accounts.learners(class_id)}
        lessons = [{"lesson_id": shape["id"], "title": shape["title"], "exercises": shape["exercises"],
                    "most_text": f"0 to {len(shape['sections'])}"} for shape in lesson_shapes()]
        marks = [{"learner_id": learner, "name": names.get(learner, ""), "lesson_id": lesson,
                  "exercise_id": exercise or None, "kind": mark["kind"], "reason": mark["reason"],
                  "credit_text": "" if mark["credit"] is None else format_number(mark["credit"])}
                 for (learner, lesson, exercise), mark in sorted(self.tables.marks(class_id).items(),
                                                                  key=lambda item: (names.get(item[0][0], ""), item[0]))]
        return {"learners": [{"id": id_, "name": name} for id_, name in names.items()], "lessons": lessons,
                "marks": marks}

    # ---------------------------------------------------------------- the log

    def audit(self, class_id: int, page: int = 1, per_page: int = AUDIT_PAGE) -> dict[str, Any]:
        """One page of the class's audit log, newest first (page 1), and how many pages there are."""
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            raise InputError(f"a page of the log is a whole number from 1, not {page!r}", field="page")
        total, entries = self.log.entries(class_id, per_page, (page - 1) * per_page)
        pages = max(1, -(-total // per_page))
        said = count_text(total, "change")
        return {"entries": [_entry(row) for row in entries], "page": page, "per_page": per_page, "pages": pages,
                "total": total, "page_text": f"Page {page:,} of {pages:,} ({said}, newest first)"}

    def audit_all(self, class_id: int) -> list[dict[str, Any]]:
        """The whole log, oldest first (the CSV and the command line)."""
        total, entries = self.log.entries(class_id, 2**31 - 1)
        return [_entry(row) for row in reversed(entries)]


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    at = datetime.fromisoformat(row["at"]).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return row | {"before": json.loads(row["before"]), "after": json.loads(row["after"]), "at_text": at,
                  "before_text": _said(row["before"]), "after_text": _said(row["after"])}


def _said(value: str) -> str:
    """A before or after as one line of text: its fields as key: value (null as "none")."""
    found = json.loads(value)
    if not isinstance(found, dict):
        return "none" if found is None else str(found)

    def one(item: Any) -> str:
        if isinstance(item, dict):
            return "{" + ", ".join(f"{key}: {one(inner)}" for key, inner in item.items()) + "}"
        if isinstance(item, float):
            return format_number(item)
        return "none" if item is None else str(item)

    return "; ".join(f"{key}: {one(item)}" for key, item in found.items()) or "none"


def audit_rows(entries: list[dict[str, Any]]) -> list[list[Any]]:
    """The log as CSV rows under AUDIT_HEADER."""
    return [AUDIT_HEADER] + [[entry["at"], entry["actor_name"], entry["kind"], entry["learner_name"],
                              entry["lesson_id"], entry["exercise_id"], entry["before_text"], entry["after_text"],
                              entry["reason"]] for entry in entries]
