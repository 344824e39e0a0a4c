"""The teacher's due dates, extensions and late policy, and each learner's credit as of their own due dates
(classes/deadlines.py), for the teacher's page (static/js/teacher_deadlines.js). The teacher of the class
only (but /mine, each person's own); a learner id of another class is "not found", as one that does not exist.

    GET  /api/class/deadlines              settings and credit per learner and lesson
    GET  /api/class/deadlines/mine         the signed-in learner's own dates and credit (a teacher: the class's)
    PUT  /api/class/deadlines/policy       {"time_zone", "late"}
    PUT  /api/class/deadlines/due          {"lesson_id", "exercise_id"?, "due"} (null: removed)
    PUT  /api/class/deadlines/extensions   {"learner_id", "lesson_id", "due"} (null: removed)
    POST /api/class/deadlines/extensions.csv   {"csv": "learner,lesson,due\\n..."} (many at once)
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.accounts import TEACHER, Account
from chainrule.classes.deadlines import Deadlines
from chainrule.progress.audit_store import actor_of
from chainrule.web.class_gate import signed_in
from chainrule.web.models import ErrorBody
from chainrule.web.forms import ROW_ID_MAX

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "The body is not JSON."},
    401: {"model": ErrorBody, "description": "Not signed in."},
    403: {"model": ErrorBody, "description": "Not the teacher of this class, or a missing or wrong CSRF token."},
    404: {"model": ErrorBody, "description": "No such learner (or regrade) in your class."},
    409: {"model": ErrorBody, "description": "A regrade not in a state to apply or revert."},
    413: {"model": ErrorBody, "description": "Request body over the size limit."},
    422: {"model": ErrorBody, "description": "A date, lesson, exercise, time zone or policy that is not one."},
    503: {"model": ErrorBody, "description": "The class database cannot be reached (nothing of its address)."},
}
api = APIRouter(prefix="/api/class/deadlines", responses=ERRORS)
MAX_CSV_CHARACTERS = 200_000  # under the server's 256 KB body limit: 10,000 rows of extensions


def teacher(request: Request) -> Account:
    """The signed-in teacher: a learner may neither see nor change due dates or regrades (403)."""
    account = signed_in(request)
    if account.role != TEACHER:
        raise HTTPException(status_code=403, detail="only the class's teacher can see or change this.")
    return account


class PolicyIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    time_zone: str | None = Field(default=None, max_length=64, description="an IANA time zone, like Europe/Berlin")
    late: str | None = Field(default=None, max_length=32, description='"no-credit" or a percentage per day, "10%"')


class DueIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    lesson_id: str = Field(max_length=200)
    exercise_id: str | None = Field(default=None, max_length=200, description="one exercise's own date")
    due: str | None = Field(max_length=40, description="YYYY-MM-DD HH:MM in the class's time zone; null removes it")


class ExtensionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    learner_id: int = Field(ge=1, le=ROW_ID_MAX)
    lesson_id: str = Field(max_length=200)
    due: str | None = Field(max_length=40, description="a date, +N days after the lesson's, or null: removed")


class ExtensionsCsvIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    csv: str = Field(max_length=MAX_CSV_CHARACTERS, description="rows of learner,lesson,due")


def _deadlines(request: Request) -> Deadlines:
    return Deadlines(request.app.state.services.class_store, request.app.state.accounts)


def _view(request: Request, class_id: int) -> dict[str, Any]:
    deadlines = _deadlines(request)
    names = {learner.id: learner.name for learner in request.app.state.accounts.learners(class_id)}
    credit = deadlines.credit(class_id)
    return deadlines.settings(class_id) | {"learners": [
        {"id": learner, "name": names.get(learner, ""), "lessons": list(per_lesson.values())}
        for learner, per_lesson in credit.items()]}


@api.get("")
def deadlines(request: Request) -> dict[str, Any]:
    """The class's time zone, late policy, due dates, extensions, and each learner's credit per lesson."""
    return _view(request, teacher(request).class_id)


@api.get("/mine")
def mine(request: Request) -> dict[str, Any]:
    """The signed-in learner's own due dates (extensions included), whether each has passed, and their credit
    so far, for the path and lesson pages; a teacher gets the class's dates."""
    store = request.app.state.services.class_store
    return _deadlines(request).mine(signed_in(request), store.now())


@api.put("/policy")
def set_policy(request: Request, body: PolicyIn) -> dict[str, Any]:
    account = teacher(request)
    class_id = account.class_id
    _deadlines(request).set_policy(class_id, time_zone_name=body.time_zone, late=body.late, by=actor_of(account))
    return _view(request, class_id)


@api.put("/due")
def set_due(request: Request, body: DueIn) -> dict[str, Any]:
    account = teacher(request)
    class_id = account.class_id
    _deadlines(request).set_due(class_id, body.lesson_id, body.due, exercise=body.exercise_id, by=actor_of(account))
    return _view(request, class_id)


@api.put("/extensions")
def extend(request: Request, body: ExtensionIn) -> dict[str, Any]:
    account = teacher(request)
    class_id = account.class_id
    _deadlines(request).extend(class_id, body.learner_id, body.lesson_id, body.due, by=actor_of(account))
    return _view(request, class_id)


@api.post("/extensions.csv")
def extend_from_csv(request: Request, body: ExtensionsCsvIn) -> dict[str, Any]:
    account = teacher(request)
    class_id = account.class_id
    count = _deadlines(request).extend_from_csv(class_id, body.csv, by=actor_of(account))
    return _view(request, class_id) | {"set": count}
