"""The teacher's hand on the gradebook (classes/overrides.py) and the audit log, for the teacher's page
(static/js/teacher_marks.js). The teacher of the class only: a learner is refused (403), a learner id of
another class is "not found"; a closed class takes its teacher's changes, an archived one none (the door's
rule, classes/people.refused_change).

    GET /api/class/marks/in-force   the learners, the lessons and their exercises, the marks in force
    PUT /api/class/marks        {"learner_id", "lesson_id", "exercise_id"?, "action": "override" | "excuse" |
                                 "undo", "credit"? (override), "reason"} -> the learner's credit in the lesson
    GET /api/class/audit?page=N  one page of the audit log, newest first
    GET /teacher/audit.csv       the whole log, oldest first
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.credit_marks import MAX_REASON
from chainrule.classes.overrides import Overrides, audit_rows
from chainrule.classes.report import csv_text
from chainrule.errors import InputError
from chainrule.progress.audit_store import actor_of
from chainrule.web.app_state import app_state
from chainrule.web.class_gate import class_store
from chainrule.web.forms import ROW_ID_MAX
from chainrule.web.roles import Staff, Teacher
from chainrule.web.routes_deadlines import ERRORS

router = APIRouter(responses=ERRORS)


class MarkIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    learner_id: int = Field(ge=1, le=ROW_ID_MAX)
    lesson_id: str = Field(max_length=200)
    exercise_id: str | None = Field(default=None, max_length=200, description="one exercise of the lesson")
    action: Literal["override", "excuse", "undo"]
    credit: float | None = Field(default=None, description="override: 0 to the lesson's sections; an exercise 0 or 1")
    reason: str = Field(max_length=MAX_REASON * 2, description=f"why (required, at most {MAX_REASON} characters)")


def _overrides(request: Request) -> Overrides:
    state = app_state(request)
    return Overrides(class_store(request), state.accounts)


@router.get("/api/class/marks/in-force")
def marks(request: Request, account: Staff) -> dict[str, Any]:
    """The learners and lessons the form offers, and the overrides and excuses in force."""
    return _overrides(request).current(account.class_id)


@router.put("/api/class/marks")
def mark(request: Request, account: Teacher, body: MarkIn) -> dict[str, Any]:
    """Override or excuse one learner's credit of a lesson or an exercise, or undo it; audited."""
    overrides, by, exercise = _overrides(request), actor_of(account), body.exercise_id or None
    if body.action == "override":
        if body.credit is None:
            raise InputError("an override needs the credit to give", field="credit")
        return overrides.override(account.class_id, body.learner_id, body.lesson_id, body.credit, body.reason,
                                  exercise=exercise, by=by)
    if body.action == "excuse":
        return overrides.excuse(account.class_id, body.learner_id, body.lesson_id, body.reason, exercise=exercise, by=by)
    return overrides.undo(account.class_id, body.learner_id, body.lesson_id, body.reason, exercise=exercise, by=by)


@router.get("/api/class/audit")
def audit(request: Request, account: Staff, page: int = Query(default=1, ge=1, le=2**31 - 1)) -> dict[str, Any]:
    """One page of the class's audit log, newest first: who changed what a learner is credited, when, the
    credit or setting before and after, and why."""
    return _overrides(request).audit(account.class_id, page)


@router.get("/teacher/audit.csv")
def audit_csv(request: Request, account: Staff) -> Response:
    rows = audit_rows(_overrides(request).audit_all(account.class_id))
    return Response(csv_text(rows), media_type="text/csv; charset=utf-8",
                    headers={"content-disposition": 'attachment; filename="audit-log.csv"'})
