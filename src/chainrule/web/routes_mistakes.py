"""The class's common mistakes for the teacher's page (classes/misconceptions.py; static/js/teacher_mistakes.js):
per exercise, the mistakes the grader named in the class's runs that did not pass, counted and per day, each with
its runs and its hint. Computed when the teacher asks. The teacher of the class only: a learner is refused (403).

    GET /api/class/mistakes   {"exercises": [{"exercise_id", "mistakes": [{"mistake", "runs", "hint", ...}]}], ...}
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from chainrule.classes.misconceptions import common_mistakes
from chainrule.web.app_state import app_state
from chainrule.web.class_gate import class_store
from chainrule.web.roles import Staff
from chainrule.web.routes_deadlines import ERRORS

router = APIRouter(prefix="/api/class", responses=ERRORS)


@router.get("/mistakes")
def mistakes(request: Request, account: Staff) -> dict[str, Any]:
    """The class's common mistakes per exercise: runs and learners, per day, the runs behind each, its hint."""
    return common_mistakes(class_store(request), app_state(request).accounts, account.class_id)
