"""Graded runs that wait for a worker (classes/graded_runs.py's QueuedRuns): what the page watches.

    GET /api/jobs         {"queued", "jobs": the runs still waiting or running, "ungraded": runs that ended
                          without a grade after the last graded one} (a reloaded page resumes and says them)
    GET /api/jobs/{id}    one run: {"job", "state": queued|running|graded|ended, "position"?, "result"?}

Every face serves these: where runs are graded in process (`chainrule lesson`, a class in SQLite) there are
no jobs, and "queued" is false. The page learns here, from the server, whether runs are queued.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request

from chainrule.web.app_state import app_state
from chainrule.web.drawn_graphs import with_drawn_graphs
from chainrule.web.models import JobOut, JobsOut, error_answer
from chainrule.web.roles import LEARNER, learner

router = APIRouter(prefix="/api/jobs", dependencies=[LEARNER], responses={
    401: error_answer("No session (a token in personal mode, signing in in class mode)."),
    403: error_answer("Wrong token, foreign Host, or foreign Origin."),
    404: error_answer("No such run of yours."),
    422: error_answer("A run's id is a whole number from 1."),
    503: error_answer("The class database cannot be used (the StoreError text)."),
})


def _learner(request: Request) -> int | None:
    """The signed-in learner's id in class mode; None in personal mode."""
    account = learner(request)
    return None if account is None else account.id


@router.get("", response_model=JobsOut, summary="Whether runs wait for workers; yours still waiting, and ungraded")
def open_jobs(request: Request) -> dict[str, Any]:
    runs, who = app_state(request).services.runs, _learner(request)
    return {"queued": bool(runs.queued), "jobs": runs.open_runs(who), "ungraded": runs.ungraded_runs(who)}


@router.get("/{job_id}", response_model=JobOut, summary="Where one run is: queued (with its place), running, graded or ended")
def job_status(request: Request, job_id: Annotated[int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
    status = app_state(request).services.runs.status(_learner(request), job_id)
    if status is None:
        raise HTTPException(status_code=404, detail=f"you have no graded run with id {job_id}")
    return status | {"result": with_drawn_graphs(status["result"])} if status.get("result") else status
