"""The teacher's regrades (classes/regrade.py) for the teacher's page (static/js/teacher_regrade.js): start one
(its runs are graded in the background through the app's one grading seam), follow its before/after table,
apply or revert it. The teacher of the class only; another class's regrade is "not found".

    GET  /api/class/regrades                  the exercises and the class's regrades
    POST /api/class/regrades/new              {"exercise_id", "pick": "latest" | "best"} -> its table
    GET  /api/class/regrades/{id}             its before/after table ("state": grading, graded, ...)
    POST /api/class/regrades/{id}/apply       the new verdicts count
    POST /api/class/regrades/{id}/revert      as before applying
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from chainrule.classes.regrade import Regrades
from chainrule.progress.audit_store import actor_of
from chainrule.web.app_state import app_state
from chainrule.web.class_gate import class_store
from chainrule.web.compute_rate import COMPUTE, TOO_FAST
from chainrule.web.forms import RowId
from chainrule.web.roles import Staff, Teacher
from chainrule.web.routes_deadlines import ERRORS

log = logging.getLogger("chainrule.serve")
router = APIRouter(prefix="/api/class/regrades", responses=ERRORS)
RegradeId = RowId


class RegradeIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    exercise_id: str = Field(max_length=200)
    pick: Literal["latest", "best"] = Field(default="latest", description="each learner's latest or best run")


def _regrades(request: Request) -> Regrades:
    state = app_state(request)
    return Regrades(class_store(request), state.accounts, state.services.runs)


def _grade_in_background(request: Request, regrades: Regrades, class_id: int, regrade_id: int) -> None:
    """Grade the regrade's runs after the answer (kept referenced until done; a failure is logged, and
    starting the same regrade again grades what is left)."""
    tasks = app_state(request).regrade_tasks

    async def grade() -> None:
        try:
            await regrades.grade(class_id, regrade_id)
        except Exception:
            log.exception("regrade %s stopped before every run was graded", regrade_id)

    task = asyncio.get_running_loop().create_task(grade())
    tasks.add(task)
    task.add_done_callback(tasks.discard)


@router.get("")
def regrades(request: Request, account: Staff) -> dict[str, Any]:
    from chainrule import lessons

    class_id = account.class_id
    exercises = [{"exercise_id": exercise, "lesson_id": entry["id"], "title": entry["title"]}
                 for entry in lessons.get_path()["lessons"] if entry.get("written")
                 for exercise in lessons.exercise_ids(entry["id"])]
    return {"exercises": exercises, "regrades": _regrades(request).list(class_id)}


@router.post("/new", dependencies=[COMPUTE], responses=TOO_FAST)
async def start(request: Request, account: Teacher, body: RegradeIn) -> dict[str, Any]:
    """Start a regrade (or find the same one not reverted) and grade its runs in the background."""
    import anyio

    class_id = account.class_id
    regrades = _regrades(request)
    regrade_id = await anyio.to_thread.run_sync(regrades.start, class_id, body.exercise_id, body.pick)
    table = await anyio.to_thread.run_sync(regrades.table, class_id, regrade_id)
    if table["waiting"]:
        _grade_in_background(request, regrades, class_id, regrade_id)
    return table


@router.get("/{regrade_id:int}")
def table(request: Request, account: Staff, regrade_id: RegradeId) -> dict[str, Any]:
    return _regrades(request).table(account.class_id, regrade_id)


@router.post("/{regrade_id:int}/apply")
def apply(request: Request, account: Teacher, regrade_id: RegradeId) -> dict[str, Any]:
    return _regrades(request).apply(account.class_id, regrade_id, by=actor_of(account))


@router.post("/{regrade_id:int}/revert")
def revert(request: Request, account: Teacher, regrade_id: RegradeId) -> dict[str, Any]:
    return _regrades(request).revert(account.class_id, regrade_id, by=actor_of(account))
