"""Similar code for the teacher's page (classes/similarity.py; static/js/teacher_similar.js): the pairs of
learners whose latest runs of one exercise are unusually similar, computed when the teacher asks for that
exercise. The teacher of the class only: a learner is refused (403).

    GET /api/class/similar?exercise=forward-any-order   {"pairs": [{"score", "a", "b"}], "similar_at", ...}
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from chainrule.classes.similarity import similar_pairs
from chainrule.web.app_state import app_state
from chainrule.web.class_gate import class_store
from chainrule.web.roles import Staff
from chainrule.web.routes_deadlines import ERRORS

router = APIRouter(prefix="/api/class", responses=ERRORS)


@router.get("/similar")
def similar(request: Request, account: Staff, exercise: Annotated[str, Query(max_length=200)]) -> dict[str, Any]:
    """The pairs of the class's learners whose latest runs of ``exercise`` are unusually similar."""
    return similar_pairs(class_store(request), app_state(request).accounts, account.class_id, exercise)
