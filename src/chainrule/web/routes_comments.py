"""Comments on a learner's run (classes/comments.py holds the rules).

    GET  /api/class/learners/{id}/runs     a learner's latest runs with their comments (a teacher of the class)
    POST /api/class/runs/{id}/comments     {"line": 3 or null, "body": "Markdown"}: a teacher's comment, or the
                                           run's learner's answer
    GET  /api/class/runs/{id}/earlier-comments?before=c   the run's comments before comment c (a view shows the latest)
    GET  /api/class/comments?exercise=x    the signed-in learner's own commented runs (of one exercise)
    GET  /api/class/answers                the latest answers of the class's learners (a teacher of the class)

Every change carries the CSRF header (web/class_gate.py, which also refuses a closed class's learners and an
archived class's everyone); every refusal is a ClassError or InputError answered by web/error_answers.py. A run
that is neither the learner's own nor of the teacher's class is "not found", as a run that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.comments import MAX_COMMENT, Comments
from chainrule.web.app_state import app_state
from chainrule.web.forms import RowId
from chainrule.web.models import error_answer
from chainrule.web.roles import Learner, Staff
from chainrule.web.routes_people import PEOPLE_ERRORS

COMMENT_ERRORS = PEOPLE_ERRORS | {
    404: error_answer("No such run of yours or of your class."),
    413: error_answer("The learner's storage is full (progress/quota.py)."),
    422: error_answer("The comment is not valid (empty, too long, a line the run lacks)."),
    429: error_answer("Too many comments from this learner lately; see Retry-After."),
}
Id = RowId

router = APIRouter(prefix="/api/class", responses=COMMENT_ERRORS)


class CommentIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    line: int | None = Field(default=None, description="the run's line (1 is the first); null: the whole file")
    body: str = Field(default="", max_length=4 * MAX_COMMENT, description="Markdown, shown as text: no HTML")


def _comments(request: Request) -> Comments:
    return Comments(app_state(request).accounts)


@router.get("/learners/{learner_id}/runs")
def learner_runs(request: Request, account: Staff, learner_id: Id) -> dict[str, Any]:
    return _comments(request).runs_of(account, learner_id)


@router.get("/answers")
def latest_answers(request: Request, account: Staff) -> dict[str, Any]:
    """The latest answers of the class's learners to comments (a teacher of the class)."""
    return {"answers": _comments(request).latest_answers(account)}


@router.post("/runs/{run_id}/comments")
def add_comment(request: Request, account: Learner, run_id: Id, body: CommentIn) -> dict[str, Any]:
    """A teacher's comment on a run of their class, or the run's learner's answer."""
    return _comments(request).add(account, run_id, body.line, body.body)


@router.get("/runs/{run_id}/earlier-comments")
def earlier_comments(request: Request, account: Learner, run_id: Id,
                     before: Annotated[int, Query(ge=1, le=2**31 - 1)]) -> dict[str, Any]:
    """The run's comments just before comment ``before`` (each view shows only the latest: classes/comments.py)."""
    return _comments(request).earlier(account, run_id, before)


@router.get("/comments")
def own_comments(request: Request, account: Learner,
                 exercise: Annotated[str | None, Query(max_length=200)] = None) -> dict[str, Any]:
    return {"runs": _comments(request).threads(account, exercise)}
