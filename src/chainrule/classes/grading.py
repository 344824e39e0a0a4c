"""The one seam between a submitted run and its result in class mode.

    answer = grader.submit(learner_id, exercise_id, language, source, key)

InProcessGrader (a class in SQLite, as `chainrule lesson` does): grades now, in this process's sandbox
pool, and answers with the grading result (the route keeps it as a submission).
QueuedGrader (a class in PostgreSQL): never runs learner code here. It keeps the run as a job
(progress/run_jobs.py), hands it to the queue (classes/queue.py), and answers with a ticket
``{"job", "state": "queued", "position"}`` that the page watches (``status``); a worker
(`chainrule worker`) grades it and keeps the result. ``key`` names one click of "Run tests", so a
request sent again after a lost answer finds its job instead of making a second.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

log = logging.getLogger("chainrule.serve")


class Grader(Protocol):
    queued: bool

    def grade(self, exercise_id: str, language: str, source: str) -> dict: ...


class InProcessGrader:
    """Grades in the web process, through chainrule.grading (its own pool bounds how many at once)."""

    queued = False

    def grade(self, exercise_id: str, language: str, source: str) -> dict:
        from chainrule.grading import grade

        return grade(exercise_id, language, source)


def queue_unreachable(where: str, error: Exception) -> Exception:
    from chainrule.progress.errors import CANNOT_OPEN, StoreError

    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return StoreError(f"The job queue in the class database {where} cannot be used ({text}). Check that "
                      "PostgreSQL is running and that the URL is right; then try again.", kind=CANNOT_OPEN)


class QueuedGrader:
    """Runs become jobs in the class database; workers on any host grade them."""

    queued = True

    def __init__(self, store: Any, url: str, *, deadline_seconds: float | None = None,
                 max_open: int | None = None) -> None:
        from chainrule.progress.run_jobs import RunJobs
        from chainrule.classes.queue import Sender, apply_schema

        options = {name: value for name, value in
                   (("deadline_seconds", deadline_seconds), ("max_open", max_open)) if value is not None}
        self.jobs = RunJobs(store, **options)
        try:
            apply_schema(url)
            self.sender = Sender(url)
        except Exception as error:  # psycopg's and procrastinate's errors: say what and where, no traceback
            raise queue_unreachable(store.where, error) from error

    def grade(self, exercise_id: str, language: str, source: str) -> dict:
        raise RuntimeError("a queued grader never grades in the web process: use submit()")

    def submit(self, learner_id: int, exercise_id: str, language: str, source: str, key: str) -> dict:
        from chainrule.progress.run_jobs import busy_result

        job_id, queued = self.jobs.submit(learner_id, exercise_id, language, source, key)
        if not queued:
            return busy_result(exercise_id, language, self.jobs.max_open)
        self.send(job_id)
        return self.jobs.status(learner_id, job_id) or {}

    def send(self, job_id: int) -> None:
        """Hand the run to the queue. If the queue cannot be reached now, the run stays queued in the
        class database and a worker's sweeper sends it later: nothing is lost."""
        try:
            queue_job_id = self.sender.send(job_id)
            if queue_job_id is not None:
                self.jobs.mark_sent(job_id, queue_job_id)
        except Exception as error:  # the queue's own errors, the store's: the sweeper sends it later
            log.warning("run %s is kept but not yet on the queue (%s); a worker will send it", job_id, error)

    def status(self, learner_id: int, job_id: int) -> dict | None:
        return self.jobs.status(learner_id, job_id)

    def open_jobs(self, learner_id: int) -> list[dict]:
        return self.jobs.open_jobs(learner_id)

    def close(self) -> None:
        self.sender.close()
