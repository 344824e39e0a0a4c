"""The people of a class on its teacher's page, and anyone's own password (classes/people.py holds the rules).

    GET  /api/class/people                     the class's state, its invite and seats, learners and teachers
    POST /api/class/invite                     a new invite (the previous one stops working)
    PUT  /api/class/state                      {"state": "open" | "closed" | "archived"}
    PUT  /api/class/learners/{id}/name         {"name": ...}: rename a learner
    GET  /api/class/learners/{id}/export       the learner's progress file (before removing them, say)
    POST /api/class/teachers                   {"name": ...}: a further teacher, with their one-time link
    DELETE /api/class/teachers/{id}            remove another teacher (not oneself, not the last one)
    POST /api/class/account/password           {"current", "new"}: one's own; every other session ends

Every change carries the CSRF header (web/class_gate.py, which also refuses changes in a closed or archived
class); every refusal is a ClassError or InputError answered by web/error_answers.py. Only a teacher of the class
may use the class's routes: another class's learner id is "not found", as an id that does not exist.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.accounts import ASSISTANT, MAX_NAME, MAX_PASSWORD, TEACHER, TEACHER_LINK_LIFETIME, Accounts
from chainrule.classes.class_sections import Sections
from chainrule.classes.people import STATE_SAYS, People
from chainrule.classes.sessions import cookie_header, csrf_token, session_cookie
from chainrule.number_text import count_text
from chainrule.web.app_state import app_state
from chainrule.web.class_gate import class_store
from chainrule.web.forms import RowId
from chainrule.web.models import error_answer
from chainrule.web.progress_files import chunks, file_slot, spooled_export
from chainrule.web.roles import Learner, Staff, Teacher

PEOPLE_ERRORS: dict[int | str, dict[str, Any]] = {
    400: error_answer("The body is not JSON."),
    401: error_answer("Not signed in."),
    403: error_answer("Not a teacher of this class, a closed or archived class, or a "
                      "missing or wrong CSRF token."),
    404: error_answer("No such learner (or teacher) in your class."),
    409: error_answer("The name is taken (or looks like one that is)."),
    422: error_answer("The request is not valid."),
    429: error_answer("Too many wrong passwords: wait (Retry-After)."),
}
LearnerId = RowId
TeacherId = RowId

router = APIRouter(prefix="/api/class", responses=PEOPLE_ERRORS)


class NameIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # A missing name is the rule's refusal (a 422 after the caller is known to be a teacher of the class).
    name: str = Field(default="", max_length=4 * MAX_NAME, description="1 to 60 printable characters")


class StateIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    state: str = Field(max_length=20, description="open, closed or archived")


class PasswordIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    current: str = Field(max_length=MAX_PASSWORD, description="the password the account has now")
    new: str = Field(max_length=4 * MAX_PASSWORD, description="10 to 200 characters")


def _people(request: Request) -> People:
    return People(app_state(request).accounts)


def _accounts(request: Request) -> Accounts:
    return app_state(request).accounts


async def _run(function: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(functools.partial(function, *args))


def _link(request: Request, path: str) -> str:
    return f"{str(request.base_url).rstrip('/')}{path}"


@router.get("/people")
def people(request: Request, teacher: Staff) -> dict[str, Any]:
    """What the teacher's page shows of the class's people: its state, the current invite (while open),
    the seats, the learners (waiting ones too, with their sections), the teachers and teaching assistants, and
    whether the caller may change any of it (a teaching assistant reads only)."""
    people_, accounts = _people(request), _accounts(request)
    state = people_.state(teacher.class_id)
    invite = people_.current_invite(teacher)
    admission = accounts.admission(teacher.class_id)
    seats_text = (f"{admission.taken} of {admission.seats} seats taken" if admission.seats is not None
                  else f"{count_text(admission.taken, 'learner')}; no seat limit")
    return {
        "class": teacher.class_name, "state": state, "state_text": STATE_SAYS[state],
        "invite": None if invite is None else _link(request, f"/join/{invite}"),
        "seats": admission.seats, "approval": admission.approval, "taken": admission.taken, "seats_text": seats_text,
        "learners": [{"id": learner.id, "name": learner.name, "approved": learner.approved, "section": learner.section}
                     for learner in accounts.learners(teacher.class_id)],
        "teachers": people_.teachers(teacher), "assistants": people_.teachers(teacher, ASSISTANT),
        "sections": Sections(accounts).names(teacher.class_id), "you_change": teacher.role == TEACHER,
    }


@router.post("/invite")
def rotate_invite(request: Request, teacher: Teacher) -> dict[str, Any]:
    """A new invite link; the previous one stops working at once."""
    token = _people(request).rotate_invite(teacher)
    return {"invite": _link(request, f"/join/{token}")}


@router.put("/state")
def set_state(request: Request, teacher: Teacher, body: StateIn) -> dict[str, Any]:
    """Open, close (no one joins; learners read only) or archive (read-only for teachers too) the class."""
    state = _people(request).set_state(teacher, body.state)
    return {"state": state, "state_text": STATE_SAYS[state]}


@router.put("/learners/{learner_id}/name")
def rename(request: Request, teacher: Teacher, learner_id: LearnerId, body: NameIn) -> dict[str, Any]:
    learner = _people(request).rename(teacher, learner_id, body.name)
    return {"id": learner.id, "name": learner.name}


@router.get("/learners/{learner_id}/export", response_class=StreamingResponse,
         responses={200: {"content": {"application/json": {}},
                          "description": "The learner's progress as `chainrule progress export` writes it"}})
async def export_learner(request: Request, teacher: Staff, learner_id: LearnerId) -> StreamingResponse:
    """A learner's progress file, for their teacher (to keep before removing them)."""
    learner = await _run(_accounts(request).learner_in_class, teacher, learner_id)
    store = class_store(request).for_learner(learner.id)
    async with file_slot(request):
        spool = await _run(spooled_export, store)
    filename = f"chainrule-progress-learner-{learner.id}.json"
    return StreamingResponse(chunks(spool), media_type="application/json",
                             headers={"content-disposition": f'attachment; filename="{filename}"'})


@router.post("/teachers")
def add_teacher(request: Request, teacher: Teacher, body: NameIn) -> dict[str, Any]:
    """A further teacher of this class: give them the one-time link, with which they set their password."""
    made, token = _people(request).add_teacher(teacher, body.name)
    return {"id": made.id, "name": made.name, "link": _link(request, f"/set-password/{token}"),
            "valid_for": count_text(TEACHER_LINK_LIFETIME.days, "day")}


@router.delete("/teachers/{teacher_id}")
def remove_teacher(request: Request, teacher: Teacher, teacher_id: TeacherId) -> dict[str, Any]:
    """Remove another teacher of this class (403 for yourself or the class's last teacher): their account and
    sessions end; comments they wrote stay, from "a removed account"."""
    return _people(request).remove_teacher(teacher, teacher_id)


@router.post("/account/password")
async def change_password(request: Request, signed_in: Learner, body: PasswordIn) -> JSONResponse:
    """The signed-in account's new password: every session of it ends, but this browser gets a new one."""
    account = await _people(request).change_password(signed_in, body.current, body.new)
    app = app_state(request)
    cookie = session_cookie(app.secret, account.id, account.session_epoch, int(app.clock().timestamp()))
    response = JSONResponse({"changed": True, "detail": "Your password is changed; every other browser and device "
                                                        "signed in as you is signed out."})
    response.headers.append("set-cookie", cookie_header(app.cookie_names.session, cookie, secure=app.secure))
    response.headers.append("set-cookie", cookie_header(app.cookie_names.csrf, csrf_token(app.secret, cookie),
                                                        secure=app.secure, http_only=False, same_site="Strict"))
    return response
