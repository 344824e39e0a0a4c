"""The class's roster, sections, teaching assistants and changes to several learners at once, on its teacher's page
(classes/roster.py, classes/class_sections.py and classes/people.py hold the rules).

    GET    /api/class/roster                   the roster (who is listed, their section, who joined) and sections
    POST   /api/class/roster.csv               the CSV file itself as the body: every row, or none (422 naming each)
    PUT    /api/class/learners/{id}/section    {"section": ...} ('' : none)
    POST   /api/class/bulk-approve             {"ids": [...]}: let each in (one wrong id: no one)
    POST   /api/class/bulk-remove              {"ids": [...]}: remove each, with their runs waiting for the grader
    POST   /api/class/assistants               {"name": ...}: a teaching assistant, with their one-time link
    DELETE /api/class/assistants/{id}          remove a teaching assistant

Reading is for the class's staff (a teacher or a teaching assistant); every change is a teacher's (web/roles.py).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.accounts import ASSISTANT, MAX_NAME, TEACHER_LINK_LIFETIME, in_thread
from chainrule.classes.class_sections import Sections
from chainrule.classes.people import People
from chainrule.classes.roster import FILE_RULE, MAX_ROSTER_BYTES, MAX_ROSTER_ROWS, MAX_SECTION, Roster
from chainrule.errors import InputError
from chainrule.number_text import count_text
from chainrule.web.app_state import app_state
from chainrule.web.forms import ROW_ID_MAX, RowId
from chainrule.web.models import error_answer
from chainrule.web.roles import Staff, Teacher
from chainrule.web.routes_people import PEOPLE_ERRORS

ROSTER_PATH = "/api/class/roster.csv"
# The body limit of the import's path (web/security.py's layer): a body far over the roster's own limit is
# stopped before it is read; one a little over is read, and classes/roster.py says the rule.
ROSTER_BODY_LIMIT = 2 * MAX_ROSTER_BYTES
MAX_BULK = 500  # learners chosen at once on the page

# The people routes' answers (routes_people.py), with a file's own.
ROSTER_ERRORS: dict[int | str, dict[str, Any]] = {key: value for key, value in PEOPLE_ERRORS.items() if key != 429} | {
    413: error_answer("The file is far over the roster's size limit."),
    422: error_answer("The file or request is not valid: every bad row is named."),
}

router = APIRouter(prefix="/api/class", responses=ROSTER_ERRORS)


class SectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # Missing or '': no section (a 422 for a wrong one comes after the caller is known to be the class's teacher).
    section: str = Field(default="", max_length=4 * MAX_SECTION,
                         description=f"at most {MAX_SECTION} characters; '' : none")


class IdsIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    ids: list[int] = Field(min_length=1, max_length=MAX_BULK, description="the learners' ids")


class AssistantIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(default="", max_length=4 * MAX_NAME, description="1 to 60 printable characters")


def _accounts(request: Request) -> Any:
    return app_state(request).accounts


@router.get("/roster")
def roster(request: Request, account: Staff) -> dict[str, Any]:
    """Who the class's roster lists (and who of them joined, as whom), the class's sections, and the file's rule."""
    accounts = _accounts(request)
    return {"entries": Roster(accounts).entries(account.class_id),
            "sections": Sections(accounts).names(account.class_id),
            "rule": f"{FILE_RULE[0].upper()}{FILE_RULE[1:]}; at most {MAX_ROSTER_ROWS:,} rows and "
                    f"{MAX_ROSTER_BYTES // 1024} KB."}


@router.post("/roster.csv", openapi_extra={"requestBody": {"content": {"text/csv": {"schema": {"type": "string"}}},
                                                       "required": True}})
async def import_roster(request: Request, account: Teacher) -> dict[str, Any]:
    """A roster CSV (the file's bytes as the body): every row is added, or none is, with an error that names
    each bad row by its line."""
    data = await request.body()
    outcome = await in_thread(Roster(_accounts(request)).import_csv, account.class_id, data)
    return {"added": outcome.added, "updated": outcome.updated, "text": outcome.text()}


@router.put("/learners/{learner_id}/section")
def set_section(request: Request, account: Teacher, learner_id: RowId, body: SectionIn) -> dict[str, Any]:
    learner = Sections(_accounts(request)).set_section(account, learner_id, body.section)
    return {"id": learner.id, "name": learner.name, "section": learner.section}


def _ids(body: IdsIn) -> list[int]:
    wrong = [value for value in body.ids if not 1 <= value <= ROW_ID_MAX]
    if wrong:
        raise InputError(f"{wrong[0]} is not a learner's id: ids are whole numbers from 1 to {ROW_ID_MAX:,}",
                         field="ids")
    return body.ids


@router.post("/bulk-approve")
def approve_many(request: Request, account: Teacher, body: IdsIn) -> dict[str, Any]:
    """Let each chosen learner in (all of them are checked first: one not of your class, and no one is)."""
    approved = People(_accounts(request)).approve_many(account, _ids(body))
    return {"approved": [{"id": learner.id, "name": learner.name} for learner in approved],
            "text": f"{count_text(len(approved), 'learner')} let in"}


@router.post("/bulk-remove")
def remove_many(request: Request, account: Teacher, body: IdsIn) -> dict[str, Any]:
    """Remove each chosen learner, their work and their runs waiting for the grader (all checked first)."""
    removed = People(_accounts(request)).remove_many(account, _ids(body))
    runs = app_state(request).services.runs
    taken_back = sum(runs.forget_learner(learner.id) for learner in removed)
    return {"removed": [{"id": learner.id, "name": learner.name} for learner in removed],
            "runs_taken_back": taken_back,
            "text": f"{count_text(len(removed), 'learner')} removed" + (
                f", and {count_text(taken_back, 'run')} waiting for the grader" if taken_back else "")}


@router.post("/assistants")
def add_assistant(request: Request, account: Teacher, body: AssistantIn) -> dict[str, Any]:
    """A teaching assistant of this class: give them the one-time link, with which they set their password."""
    made, token = People(_accounts(request)).add_teacher(account, body.name, ASSISTANT)
    return {"id": made.id, "name": made.name, "link": f"{str(request.base_url).rstrip('/')}/set-password/{token}",
            "valid_for": count_text(TEACHER_LINK_LIFETIME.days, "day")}


@router.delete("/assistants/{assistant_id}")
def remove_assistant(request: Request, account: Teacher, assistant_id: RowId) -> dict[str, Any]:
    return People(_accounts(request)).remove_assistant(account, assistant_id)
