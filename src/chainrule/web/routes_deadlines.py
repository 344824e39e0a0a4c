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

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.deadlines import Deadlines
from chainrule.progress.audit_store import actor_of
from chainrule.web.app_state import app_state
from chainrule.web.class_gate import class_store
from chainrule.web.forms import ROW_ID_MAX
from chainrule.web.models import error_answer
from chainrule.web.roles import Learner, Staff, Teacher

ERRORS: dict[int | str, dict[str, Any]] = {
    400: error_answer("The body is not JSON."),
    401: error_answer("Not signed in."),
    403: error_answer("Not the teacher of this class, or a missing or wrong CSRF token."),
    404: error_answer("No such learner (or regrade) in your class."),
    409: error_answer("A regrade not in a state to apply or revert."),
    413: error_answer("Request body over the size limit."),
    422: error_answer("A date, lesson, exercise, time zone or policy that is not one."),
    503: error_answer("The class database cannot be reached (nothing of its address)."),
}
router = APIRouter(prefix="/api/class/deadlines", responses=ERRORS)
MAX_CSV_CHARACTERS = 200_000  # under the server's 256 KB body limit: 10,000 rows of extensions


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
    state = app_state(request)
    return Deadlines(class_store(request), state.accounts)


def _view(request: Request, class_id: int) -> dict[str, Any]:
    deadlines = _deadlines(request)
    names = {learner.id: learner.name for learner in app_state(request).accounts.learners(class_id)}
    credit = deadlines.credit(class_id)
    return deadlines.settings(class_id) | {"learners": [
        {"id": learner, "name": names.get(learner, ""), "lessons": list(per_lesson.values())}
        for learner, per_lesson in credit.items()]}


@router.get("")
def deadlines(request: Request, account: Staff) -> dict[str, Any]:
    """The class's time zone, late policy, due dates, extensions, and each learner's credit per lesson."""
    return _view(request, account.class_id)


@router.get("/mine")
def mine(request: Request, account: Learner) -> dict[str, Any]:
    """The signed-in learner's own due dates (extensions included), whether each has passed, and their credit
    so far, for the path and lesson pages; a teacher gets the class's dates."""
    store = class_store(request)
    return _deadlines(request).mine(account, store.now())


@router.put("/policy")
def set_policy(request: Request, account: Teacher, body: PolicyIn) -> dict[str, Any]:
    class_id = account.class_id
    _deadlines(request).set_policy(class_id, time_zone_name=body.time_zone, late=body.late, by=actor_of(account))
    return _view(request, class_id)


@router.put("/due")
def set_due(request: Request, account: Teacher, body: DueIn) -> dict[str, Any]:
    class_id = account.class_id
    _deadlines(request).set_due(class_id, body.lesson_id, body.due, exercise=body.exercise_id, by=actor_of(account))
    return _view(request, class_id)


@router.put("/extensions")
def extend(request: Request, account: Teacher, body: ExtensionIn) -> dict[str, Any]:
    class_id = account.class_id
    _deadlines(request).extend(class_id, body.learner_id, body.lesson_id, body.due, by=actor_of(account))
    return _view(request, class_id)


@router.post("/extensions.csv")
def extend_from_csv(request: Request, account: Teacher, body: ExtensionsCsvIn) -> dict[str, Any]:
    class_id = account.class_id
    count = _deadlines(request).extend_from_csv(class_id, body.csv, by=actor_of(account))
    return _view(request, class_id) | {"set": count}
