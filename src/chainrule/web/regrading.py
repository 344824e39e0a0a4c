"""Grade runs again, through the same path as "Run tests": only the new verdict counts.

    answers = await grade_again(request, runs)    # runs: [classes.imports.RunToGrade]

A class in PostgreSQL queues each run for a worker (the answer is its job, which the page can follow at
/api/jobs/{id}); one in SQLite grades it in this process, waiting for a slot in the grading gate like any
run, and keeps the result as the learner's run. This is the one step a class takes to grade code it did
not grade itself (a learner's imported file; later, "regrade these runs").
"""

from __future__ import annotations

import hashlib
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool

__all__ = ["grade_again"]

BUSY_WAIT_SECONDS = 120.0  # how long a run waits for the grader (or the learner's bound of open runs) to take it


def _key(run: Any) -> str:
    """The same run asked again (a resent import) finds its job instead of queuing a second."""
    digest = hashlib.sha256(f"{run.exercise_id}\0{run.language}\0{run.source}".encode("utf-8", "replace"))
    return "again-" + digest.hexdigest()[:40]


async def grade_again(request: Any, runs: list[Any]) -> list[dict[str, Any]]:
    """One answer per run: {"exercise", "language"} with "job" and "state" (queued), or "status" and
    "verdict" (graded now), or "verdict": "busy" (not graded: the grader stayed full). The runs are the
    signed-in learner's (the request's account, web/class_gate.py)."""
    services, gate = request.app.state.services, request.app.state.grading_gate
    answers = []
    for run in runs:
        where = {"exercise": run.exercise_id, "language": run.language}
        answer, waited = None, 0.0
        while answer is None and waited < BUSY_WAIT_SECONDS:
            answer = await _grade_once(request, services, gate, run)
            if answer.get("verdict") == "busy":  # the grader is full, or the learner's open runs are at the bound
                answer = None
                await anyio.sleep(1)
                waited += 1
        answers.append(where | (answer or {"verdict": "busy"}))
    return answers


async def _grade_once(request: Any, services: Any, gate: Any, run: Any) -> dict[str, Any]:
    ticket = await run_in_threadpool(services.submit_run, request, run.exercise_id, run.language, run.source,
                                     _key(run))
    if ticket is not None:
        return {key: ticket[key] for key in ("job", "state", "status", "verdict") if key in ticket}
    result = await gate.run(services.grade, run.exercise_id, run.language, run.source)
    if result is None or result.get("verdict") == "busy":
        return {"verdict": "busy"}
    await run_in_threadpool(services.store(request).record_submission, run.exercise_id, run.language, run.source, result)
    return {"status": result.get("status"), "verdict": result.get("verdict")}
