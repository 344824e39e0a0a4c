"""Class mode's graded runs as jobs (classes/grading.py's QueuedGrader): what the page watches.

    GET /api/jobs         the signed-in learner's runs still waiting or running (a reloaded page resumes them)
    GET /api/jobs/{id}    one run: {"job", "state": queued|running|graded|ended, "position"?, "result"?}

With the in-process grader (a class in SQLite) there are no jobs: the list is empty.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request

from chainrule.web.models import JobOut, JobsOut
from chainrule.web.class_gate import signed_in

router = APIRouter(prefix="/api/jobs")


def _grader(request: Request) -> Any:
    return request.app.state.services.grader


@router.get("", response_model=JobsOut, summary="The learner's runs waiting for, or being graded by, a worker")
def open_jobs(request: Request) -> dict[str, Any]:
    account = signed_in(request)
    grader = _grader(request)
    return {"queued": bool(grader.queued), "jobs": grader.open_jobs(account.id) if grader.queued else []}


@router.get("/{job_id}", response_model=JobOut, summary="Where one run is: queued (with its place), running, graded or ended")
def job_status(request: Request, job_id: Annotated[int, Path(ge=1, le=2**62)]) -> dict[str, Any]:
    account = signed_in(request)
    grader = _grader(request)
    status = grader.status(account.id, job_id) if grader.queued else None
    if status is None:
        raise HTTPException(status_code=404, detail=f"you have no graded run with id {job_id}")
    return status
