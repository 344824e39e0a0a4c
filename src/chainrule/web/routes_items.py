"""Item analysis for the teacher's page (classes/item_analysis.py; static/js/teacher_items.js): what the class
knows per quiz question and exercise, computed when the teacher asks. The teacher of the class only: a learner
is refused (403).

    GET /api/class/items                                                  {"items": [...], "charts": {...}, ...}
    GET /api/class/items/learners?kind=exercise&lesson=backprop&item=neuron-grads   {"learners": [...]}
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from chainrule.classes.item_analysis import item_analysis, item_learners
from chainrule.web.class_gate import class_store
from chainrule.web.roles import Staff
from chainrule.web.routes_deadlines import ERRORS
from chainrule.web.section_filter import SectionFilter, section_learners

router = APIRouter(prefix="/api/class", responses=ERRORS)
Name = Annotated[str, Query(max_length=200)]


@router.get("/items")
def items(request: Request, account: Staff, section: SectionFilter = None) -> dict[str, Any]:
    """Every item of the class's lessons: who tried it, first tries right, difficulty, discrimination, hard values
    (one section's learners only, with ``section``)."""
    return item_analysis(class_store(request), account.class_id, section_learners(request, account, section))


@router.get("/items/learners")
def learners(request: Request, account: Staff, kind: Name, lesson: Name, item: Name) -> dict[str, Any]:
    """The learners behind one item: each one's first try, and for an exercise that run."""
    return item_learners(class_store(request), account.class_id, kind, lesson, item)
