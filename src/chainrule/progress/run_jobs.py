"""Graded runs as jobs: the rows a learner's page watches (table grading_jobs, migration 4).

    jobs = RunJobs(store)                       # the class store (SQLite or PostgreSQL)
    job, queued = jobs.submit(learner, exercise, language, source, key)   # queued False: over the bound
    jobs.status(learner, job_id)                # {"job", "state", "position", "result"?}
    run = jobs.start(job_id, worker)            # a worker takes it (None: nothing left to do)
    jobs.finish(run, result)                    # kept as the learner's submission, once

The queue that carries a job to a worker is procrastinate's (classes/queue.py); this module knows nothing
of it. What it guarantees, on either backend:
- a click counts once: the page sends a key per click, and a resent request finds the job it made;
- a run counts once: the result becomes a submission in the same transaction that marks the job graded,
  and only if it was not graded yet (a worker killed after grading, a job delivered twice);
- a run started twice and stopped twice (its workers died) ends, as does one not graded by its
  deadline, with a verdict that says so and counts nothing;
- one learner has at most ``max_open`` runs waiting or running.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from chainrule.progress.connection import ADVISORY_NAMESPACE, Connection

QUEUED, RUNNING, GRADED, ENDED = "queued", "running", "graded", "ended"
OPEN_STATES = (QUEUED, RUNNING)
MAX_OPEN_PER_LEARNER = 3
DEFAULT_DEADLINE_SECONDS = 600.0
MAX_STARTS = 2  # a run whose worker died is started once more, on another worker, and no more
MAX_KEY_CHARS = 100


@dataclass(frozen=True)
class Run:
    """One job as a worker sees it."""

    id: int
    learner_id: int
    exercise_id: str
    language: str
    source: str
    attempts: int


def poll_after(position: int) -> float:
    """Seconds the page waits before asking again: soon when the run is next or running, less often far
    back in a long queue (so that a long queue does not slow every page down with questions)."""
    return float(min(5, max(1, position // 10)))


def ended_result(exercise_id: str, language: str, verdict: str, message: str) -> dict:
    """A grading-result-shaped answer for a run that was not graded (the page shows it like any other)."""
    return {"version": 3, "status": "error", "verdict": verdict, "message": message, "tests": [],
            "exercise": exercise_id, "language": language}


def busy_result(exercise_id: str, language: str, max_open: int) -> dict:
    return ended_result(
        exercise_id, language, "busy",
        f"You already have {max_open} runs waiting for the grader; this one was not queued. "
        "Wait for one of them to finish, then run it again.",
    ) | {"saved": False, "store_error": None}


class RunJobs:
    def __init__(self, store: Any, *, deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
                 max_open: int = MAX_OPEN_PER_LEARNER) -> None:
        if deadline_seconds <= 0 or max_open < 1:
            raise ValueError("a job's deadline must be > 0 seconds and a learner may have at least 1 open run")
        self.store = store
        self.database = store.database
        self.deadline_seconds = float(deadline_seconds)
        self.max_open = int(max_open)

    def _now(self) -> float:
        return self.store.now().timestamp()

    # ---------------------------------------------------------------- the web process

    def submit(self, learner_id: int, exercise_id: str, language: str, source: str,
               key: str) -> tuple[int | None, bool]:
        """(job id, True) for a new or resent run; (None, False) when the learner has too many open."""
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_CHARS:
            raise ValueError(f"a run's key is 1 to {MAX_KEY_CHARS} characters")
        now = self._now()

        def work(conn: Connection) -> tuple[int | None, bool]:
            found = conn.execute("SELECT id FROM grading_jobs WHERE learner_id = ? AND request_key = ?",
                                 (learner_id, key)).fetchone()
            if found is not None:
                return int(found[0]), True
            open_runs = conn.execute(
                "SELECT COUNT(*) FROM grading_jobs WHERE learner_id = ? AND state IN (?, ?)",
                (learner_id, *OPEN_STATES)).fetchone()[0]
            if open_runs >= self.max_open:
                return None, False
            row = conn.execute(
                "INSERT INTO grading_jobs (learner_id, request_key, exercise_id, language, source, state, "
                "submitted_ts, deadline_ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (learner_id, key, exercise_id, language, source, QUEUED, now, now + self.deadline_seconds),
            ).fetchone()
            return int(row[0]), True

        # The learner's lock: two tabs submitting at once see each other's count.
        return self.database.write(work, lock=learner_id)

    def status(self, learner_id: int, job_id: int) -> dict | None:
        """What the page shows; None if this learner has no such job."""
        row = self.database.read(lambda conn: conn.execute(
            "SELECT id, state, result, deadline_ts, exercise_id, language FROM grading_jobs "
            "WHERE id = ? AND learner_id = ?", (job_id, learner_id)).fetchone())
        if row is None:
            return None
        if row[1] in OPEN_STATES and self._now() > row[3]:
            self._expire(int(row[0]))
            return self.status(learner_id, job_id)
        answer: dict[str, Any] = {"job": int(row[0]), "state": row[1], "exercise": row[4], "language": row[5]}
        if row[1] == QUEUED:
            answer["position"] = self.position(int(row[0]))
        if row[1] in OPEN_STATES:
            answer["poll_after"] = poll_after(answer.get("position", 0))
        if row[2] is not None:
            answer["result"] = json.loads(row[2]) | {"saved": row[1] == GRADED, "store_error": None}
        return answer

    def position(self, job_id: int) -> int:
        """1 for the next run a worker takes (first come, first served)."""
        return int(self.database.read(lambda conn: conn.execute(
            "SELECT COUNT(*) FROM grading_jobs WHERE state = ? AND id <= ?", (QUEUED, job_id)).fetchone()[0]))

    def open_jobs(self, learner_id: int) -> list[dict]:
        """The learner's runs still waiting or running (a reloaded page watches them again)."""
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT id FROM grading_jobs WHERE learner_id = ? AND state IN (?, ?) ORDER BY id",
            (learner_id, *OPEN_STATES)).fetchall())
        return [status for (job_id,) in rows if (status := self.status(learner_id, int(job_id))) is not None]

    def queue_length(self) -> int:
        return int(self.database.read(lambda conn: conn.execute(
            "SELECT COUNT(*) FROM grading_jobs WHERE state = ?", (QUEUED,)).fetchone()[0]))

    # ---------------------------------------------------------------- handing jobs to the queue

    def mark_sent(self, job_id: int, queue_job_id: int) -> None:
        self.database.write(lambda conn: conn.execute(
            "UPDATE grading_jobs SET queue_job_id = ? WHERE id = ?", (queue_job_id, job_id)))

    def unsent(self, older_than_seconds: float) -> list[int]:
        """Queued runs the queue never got (the web process stopped, or the database went away, in between)."""
        before = self._now() - older_than_seconds
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT id FROM grading_jobs WHERE state = ? AND queue_job_id IS NULL AND submitted_ts < ? ORDER BY id",
            (QUEUED, before)).fetchall())
        return [int(job_id) for (job_id,) in rows]

    def expire_overdue(self) -> int:
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT id FROM grading_jobs WHERE state IN (?, ?) AND deadline_ts < ?",
            (*OPEN_STATES, self._now())).fetchall())
        return sum(self._expire(int(job_id)) for (job_id,) in rows)

    # ---------------------------------------------------------------- a worker

    def start(self, job_id: int, worker: str) -> Run | None:
        """Take the job: the Run to grade, or None if it is graded, ended, or has now ended (past its
        deadline, or started MAX_STARTS times already)."""
        now = self._now()

        def work(conn: Connection) -> Run | str | None:
            row = conn.execute(
                "SELECT learner_id, exercise_id, language, source, state, attempts, deadline_ts "
                "FROM grading_jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None or row[4] not in OPEN_STATES:
                return None
            if now > row[6]:
                return "expired"
            if row[5] >= MAX_STARTS:
                return "stopped"
            conn.execute("UPDATE grading_jobs SET state = ?, attempts = attempts + 1, started_ts = ?, worker = ? "
                         "WHERE id = ?", (RUNNING, now, worker, job_id))
            return Run(job_id, int(row[0]), row[1], row[2], row[3], int(row[5]) + 1)

        taken = self.database.write(work)
        if taken == "expired":
            self._expire(job_id)
            return None
        if taken == "stopped":
            self.end(job_id, "crashed", f"The grader stopped {MAX_STARTS} times while running this code (a "
                      "worker machine failed), so it was not graded and does not count. Run it again.")
            return None
        return taken

    def finish(self, run: Run, result: dict) -> int | None:
        """Keep the result as the learner's submission and mark the job graded, in one transaction;
        None if the job was graded already (then nothing is written)."""
        result_json = json.dumps(result, sort_keys=True)
        now = self._now()

        def claim(conn: Connection, submission_id: int) -> bool:
            changed = conn.execute(
                "UPDATE grading_jobs SET state = ?, result = ?, finished_ts = ?, submission_id = ? "
                "WHERE id = ? AND state IN (?, ?)",
                (GRADED, result_json, now, submission_id, run.id, *OPEN_STATES))
            return changed.rowcount == 1

        learner = self.store.for_learner(run.learner_id)
        return learner.record_submission(run.exercise_id, run.language, run.source, result, claim=claim)

    def _expire(self, job_id: int) -> int:
        return self.end(job_id, "expired", "No grader took this run before its deadline (the graders are "
                         "stopped or the queue is very long), so it was not graded and does not count. "
                         "Run it again in a moment.")

    def end(self, job_id: int, verdict: str, message: str) -> int:
        def work(conn: Connection) -> int:
            row = conn.execute("SELECT exercise_id, language FROM grading_jobs WHERE id = ? AND state IN (?, ?)",
                               (job_id, *OPEN_STATES)).fetchone()
            if row is None:
                return 0
            result = json.dumps(ended_result(row[0], row[1], verdict, message), sort_keys=True)
            return conn.execute("UPDATE grading_jobs SET state = ?, result = ?, finished_ts = ? WHERE id = ?",
                                (ENDED, result, self._now(), job_id)).rowcount

        return self.database.write(work)


# ---------------------------------------------------------------- the queue's few statements of its own
# (classes/queue.py drives procrastinate; the SQL it needs besides procrastinate's lives here)


def queue_schema_ready(raw: Any) -> bool:
    """Whether procrastinate's tables exist (``raw``: an open psycopg connection)."""
    return raw.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()[0] is not None


def lock_session(raw: Any, key: int) -> None:
    raw.execute("SELECT pg_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, key))


def unlock_session(raw: Any, key: int) -> None:
    raw.execute("SELECT pg_advisory_unlock(%s, %s)", (ADVISORY_NAMESPACE, key))


async def try_lock_session_async(raw: Any, key: int) -> bool:
    cursor = await raw.execute("SELECT pg_try_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, key))
    return bool((await cursor.fetchone())[0])


async def unlock_session_async(raw: Any, key: int) -> None:
    await raw.execute("SELECT pg_advisory_unlock(%s, %s)", (ADVISORY_NAMESPACE, key))
