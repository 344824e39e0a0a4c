"""Grade runs again, through the same path as "Run tests": only the new verdict counts.

    answers = await grade_again(request, runs)    # runs: [classes.imports.RunToGrade]

Each run goes through the class's graded runs (classes/graded_runs.py), as a click of "Run tests" does: a class
in PostgreSQL queues it for a worker (the answer is its job, which the page can follow at /api/jobs/{id});
one in SQLite grades it in this process, waiting for its turn like any run, and keeps the result as the
learner's run. This is the one step a class takes to grade code it did not grade itself (a learner's
imported file; later, "regrade these runs").
"""

from __future__ import annotations

import hashlib
from typing import Any

import anyio

from chainrule.web.app_state import app_state
from chainrule.web.roles import signed_in

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
    graded, learner_id = app_state(request).services.runs, signed_in(request).id
    answers = []
    for run in runs:
        where = {"exercise": run.exercise_id, "language": run.language}
        answer, waited = None, 0.0
        while answer is None and waited < BUSY_WAIT_SECONDS:
            answer = await _grade_once(graded, learner_id, run)
            if answer.get("verdict") == "busy":  # the grader is full, or the learner's open runs are at the bound
                answer = None
                await anyio.sleep(1)
                waited += 1
        answers.append(where | (answer or {"verdict": "busy"}))
    return answers


async def _grade_once(graded: Any, learner: int, run: Any) -> dict[str, Any]:
    from chainrule.classes.graded_runs import Submission

    answer = await graded.submit(Submission(learner, run.exercise_id, run.language, run.source, _key(run)))
    if answer.body.get("verdict") == "busy":
        return {"verdict": "busy"}
    return {key: answer.body[key] for key in ("job", "state", "status", "verdict") if key in answer.body}
