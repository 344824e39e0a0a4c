"""Graded runs as jobs: the rows a learner's page watches (table grading_jobs, migration 4).

    jobs = RunJobs(store)                       # the class store (SQLite or PostgreSQL)
    job, queued = jobs.submit(learner, exercise, language, source, key)   # queued False: over the bound
    jobs.status(learner, job_id)                # {"job", "state", "position"?, "result"? | "ended"?}
    run = jobs.start(queue_job, worker)         # a worker's queue job takes the next run in fair turns
    jobs.graded(run, result)                    # (the job's key, its work time, the claim that marks it graded):
                                                # classes/graded_runs.py's keep() keeps the result with them, once

The queue that carries a job to a worker is procrastinate's (classes/queue.py); this module knows nothing
of it but its job ids, and nothing of a result's shape (classes/graded_runs.py builds every answer). What it
guarantees, on either backend:
- a click counts once: the page sends a key per click, and a resent request finds the job it made;
- a run counts once: the result becomes a submission in the same transaction that marks the job graded,
  and only if it was not graded yet (a worker killed after grading, a job delivered twice);
- a run counts from when the server accepted it: its submission's time is the job's work_at (the click's
  time, or a regrade's run's original time), however long it waited for a worker;
- a run started twice and stopped twice (its workers died) ends, as does one not graded by its
  deadline, with a verdict that says so and counts nothing;
- one learner has at most ``max_open`` runs waiting or running;
- learners take turns (chainrule.turns.fair_order): a queue job takes the run of the learner served
  longest ago, not the oldest run, so one learner's runs never make a classmate's wait behind them all.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Hashable, NamedTuple

from chainrule.progress.connection import ADVISORY_NAMESPACE, Connection
from chainrule.progress.dialect import Record, postgres_records
from chainrule.progress.shapes import JobStatus
from chainrule.progress.store import ProgressStore, work_time
from chainrule.turns import MAX_OPEN_PER_LEARNER, fair_order

QUEUED, RUNNING, GRADED, ENDED = "queued", "running", "graded", "ended"
OPEN_STATES = (QUEUED, RUNNING)
# Why a run ended without a grade (classes/graded_runs.py says each to the learner).
EXPIRED, STOPPED, CANNOT_GRADE = "expired", "crashed", "cannot-grade"
DEFAULT_DEADLINE_SECONDS = 600.0
MAX_STARTS = 2  # a run whose worker died is started once more, on another worker, and no more
MAX_KEY_CHARS = 100
ORDER_FRESH_SECONDS = 1.0  # how old the queue's order may be when a page is told its place
PICK_LOCK = -4  # the advisory lock key of taking a run (migrations -1, accounts and the queue's schema -2, sweeps -3)


@dataclass(frozen=True)
class Run:
    """One job as a worker sees it."""

    id: int
    learner_id: int
    exercise_id: str
    language: str
    source: str
    attempts: int
    hidden_seed: int | None = None  # the seed of its hidden cases; None: the grader picks one


@dataclass(frozen=True)
class Elsewhere:
    """start(): the runs due were accepted with other lessons than the worker's (classes/class_lessons.py):
    the first of them, which stays queued for a worker with those lessons."""

    id: int
    lessons: str


POLL_AFTER_MOST = 4  # seconds; under the server's keep-alive (web/connections.py KEEP_ALIVE_TIMEOUT, 5 s), so
# that the page's next question finds its connection open instead of racing the server closing it


def poll_after(position: int) -> float:
    """Seconds the page waits before asking again: soon when the run is next or running, less often far
    back in a long queue (so that a long queue does not slow every page down with questions)."""
    return float(min(POLL_AFTER_MOST, max(1, position // 10)))


def _queued_in_turns(conn: Connection, lessons: str | None = None) -> list[int]:
    """The queued runs' ids in the order workers will take them (if no more came); with ``lessons``, only
    those a worker with these lessons grades (runs stamped with them, or queued before runs were stamped)."""
    only = "" if lessons is None else " AND q.lessons IN ('', ?)"
    rows = conn.execute(
        "SELECT q.id, q.learner_id, (SELECT MAX(s.started_ts) FROM grading_jobs s WHERE s.learner_id = q.learner_id) "
        f"FROM grading_jobs q WHERE q.state = ?{only} ORDER BY q.id",
        (QUEUED,) if lessons is None else (QUEUED, lessons)).fetchall()
    served: dict[Hashable, float] = {int(learner): float(last) for _, learner, last in rows if last is not None}
    return fair_order(((int(job), int(learner)) for job, learner, _ in rows), served)


class RunJobs:
    def __init__(self, store: ProgressStore, *, deadline_seconds: float = DEFAULT_DEADLINE_SECONDS,
                 max_open: int = MAX_OPEN_PER_LEARNER, lessons: str = "") -> None:
        """lessons: the hash of this process's lessons (lessons/fingerprint.py): a run submitted here is stamped
        with it, and a worker takes only runs stamped with its own (or with none)."""
        if deadline_seconds <= 0 or max_open < 1:
            raise ValueError("a job's deadline must be > 0 seconds and a learner may have at least 1 open run")
        self.lessons = lessons
        self.store = store
        self.database = store.database
        self.deadline_seconds = float(deadline_seconds)
        self.max_open = int(max_open)
        self._order: tuple[float, list[int]] = (float("-inf"), [])  # (when read, queued runs in fair turns)

    def _now(self) -> float:
        return self.store.now().timestamp()

    # ---------------------------------------------------------------- the web process

    def submit(self, learner_id: int, exercise_id: str, language: str, source: str,
               key: str, *, accepted: str | None = None, hidden_seed: int | None = None) -> tuple[int | None, bool]:
        """(job id, True) for a new or resent run; (None, False) when the learner has too many open.
        accepted: the run's work time (default now: the server accepting it), which its submission is kept
        with however long it waits for a worker (finish). hidden_seed: the seed of its hidden cases (a regrade
        keeps the first grading's); None lets the worker's grader pick one."""
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_CHARS:
            raise ValueError(f"a run's key is 1 to {MAX_KEY_CHARS} characters")
        moment = self.store.now()
        now = moment.timestamp()
        work_at = work_time(accepted) or work_time(moment)

        def work(conn: Connection) -> tuple[int | None, bool]:
            found = conn.execute("SELECT id FROM grading_jobs WHERE learner_id = ? AND request_key = ?",
                                 (learner_id, key)).fetchone()
            if found is not None:
                return int(found.id), True
            open_runs = conn.one(
                "SELECT COUNT(*) AS runs FROM grading_jobs WHERE learner_id = ? AND state IN (?, ?)",
                (learner_id, *OPEN_STATES)).runs
            if open_runs >= self.max_open:
                return None, False
            row = conn.one(
                "INSERT INTO grading_jobs (learner_id, request_key, exercise_id, language, source, state, "
                "submitted_ts, deadline_ts, work_at, lessons, hidden_seed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING id",
                (learner_id, key, exercise_id, language, source, QUEUED, now, now + self.deadline_seconds, work_at,
                 self.lessons, hidden_seed),
            )
            return int(row.id), True

        # The learner's lock: two tabs submitting at once see each other's count.
        return self.database.write(work, lock=learner_id)

    def status(self, learner_id: int, job_id: int) -> JobStatus | None:
        """Where the run is; None if this learner has no such job. "result": the graded run's result;
        "ended": {"verdict", "detail"?} of a run that ended without a grade."""
        row = self.database.read(lambda conn: conn.execute(
            "SELECT id, state, result, deadline_ts, exercise_id, language FROM grading_jobs "
            "WHERE id = ? AND learner_id = ?", (job_id, learner_id)).fetchone())
        if row is None:
            return None
        if row.state in OPEN_STATES and self._now() > row.deadline_ts:
            self.end(int(row.id), EXPIRED)
            return self.status(learner_id, job_id)
        answer: JobStatus = {"job": int(row.id), "state": row.state, "exercise": row.exercise_id,
                             "language": row.language}
        if row.state == QUEUED:
            answer["position"] = self.position(int(row.id))
        if row.state in OPEN_STATES:
            answer["poll_after"] = poll_after(answer.get("position", 0))
        if row.result is not None:
            if row.state == GRADED:
                answer["result"] = json.loads(row.result)
            else:
                answer["ended"] = json.loads(row.result)
        return answer

    def position(self, job_id: int) -> int:
        """1 for the next run a worker takes (learners in fair turns); 0 if it is not queued. Every page
        that waits asks about once a second: the order is read once per ORDER_FRESH_SECONDS for all of them."""
        read_at, order = self._order
        if time.monotonic() - read_at > ORDER_FRESH_SECONDS or job_id > max(order, default=0):
            order = self.database.read(_queued_in_turns)
            self._order = (time.monotonic(), order)
        return order.index(job_id) + 1 if job_id in order else 0

    def open_jobs(self, learner_id: int) -> list[JobStatus]:
        """The learner's runs still waiting or running (a reloaded page watches them again)."""
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT id FROM grading_jobs WHERE learner_id = ? AND state IN (?, ?) ORDER BY id",
            (learner_id, *OPEN_STATES)).fetchall())
        return [status for (job_id,) in rows if (status := self.status(learner_id, int(job_id))) is not None]

    def ended_since_graded(self, learner_id: int) -> list[JobStatus]:
        """Per exercise and language, the learner's latest run if it ended without a grade after their
        latest graded one (a page that loads shows it was not graded, not the older result as the last)."""
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT j.id FROM grading_jobs j WHERE j.learner_id = ? AND j.state = ? AND j.id = "
            "(SELECT MAX(k.id) FROM grading_jobs k WHERE k.learner_id = j.learner_id AND "
            "k.exercise_id = j.exercise_id AND k.language = j.language AND k.state IN (?, ?)) ORDER BY j.id",
            (learner_id, ENDED, GRADED, ENDED)).fetchall())
        return [status for (job_id,) in rows if (status := self.status(learner_id, int(job_id))) is not None]

    def forget_learner(self, learner_id: int) -> int:
        """An account removed: its runs are deleted (a worker still grading one keeps nothing); how many
        were still waiting or running."""
        def work(conn: Connection) -> int:
            waiting = conn.one("SELECT COUNT(*) AS runs FROM grading_jobs WHERE learner_id = ? AND state IN (?, ?)",
                               (learner_id, *OPEN_STATES)).runs
            conn.execute("DELETE FROM grading_jobs WHERE learner_id = ?", (learner_id,))
            return int(waiting)

        return self.database.write(work, lock=learner_id)

    # ---------------------------------------------------------------- handing jobs to the queue

    def mark_sent(self, job_id: int, queue_job_id: int) -> None:
        """The queue has a job for this run (if a worker has taken the run already, its job id stays)."""
        self.database.write(lambda conn: conn.execute(
            "UPDATE grading_jobs SET queue_job_id = ? WHERE id = ? AND state = ?", (queue_job_id, job_id, QUEUED)))

    def unsent(self, older_than_seconds: float) -> list[int]:
        """Queued runs the queue never got (the web process stopped, or the database went away, in between)."""
        before = self._now() - older_than_seconds
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT id FROM grading_jobs WHERE state = ? AND queue_job_id IS NULL AND submitted_ts < ? ORDER BY id",
            (QUEUED, before)).fetchall())
        return [int(job_id) for (job_id,) in rows]

    def without_turn(self, queue: str, older_than_seconds: float) -> list[int]:
        """Queued runs the queue got but no longer carries, to be sent again: their queue job failed (its
        worker could not reach the database: "too many clients", a failover) or is gone. A queue job is a
        turn, not a run (another run may have taken it), so only as many as the waiting queue jobs fall short
        of the queued runs; one sent too many finds no run and ends (PostgreSQL only: the queue's table)."""
        before = self._now() - older_than_seconds

        def work(conn: Connection) -> list[int]:
            queued = conn.one("SELECT COUNT(*) AS runs FROM grading_jobs WHERE state = ? "
                              "AND queue_job_id IS NOT NULL", (QUEUED,)).runs
            waiting = conn.one("SELECT COUNT(*) AS jobs FROM procrastinate_jobs WHERE queue_name = ? "
                               "AND status = 'todo'", (queue,)).jobs
            if queued <= waiting:
                return []
            rows = conn.execute(
                "SELECT g.id FROM grading_jobs g WHERE g.state = ? AND g.queue_job_id IS NOT NULL AND g.submitted_ts < ? "
                "AND NOT EXISTS (SELECT 1 FROM procrastinate_jobs p WHERE p.id = g.queue_job_id "
                "AND p.status IN ('todo', 'doing')) ORDER BY g.id LIMIT ?", (QUEUED, before, queued - waiting)).fetchall()
            return [int(job_id) for (job_id,) in rows]

        return self.database.read(work, snapshot=True)

    def expire_overdue(self) -> int:
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT id FROM grading_jobs WHERE state IN (?, ?) AND deadline_ts < ?",
            (*OPEN_STATES, self._now())).fetchall())
        return sum(self.end(int(job_id), EXPIRED) for (job_id,) in rows)

    # ---------------------------------------------------------------- a worker

    def start(self, queue_job_id: int, worker: str) -> Run | Elsewhere | None:
        """A queue job's run to grade: the run it was grading when its worker died (started once more,
        unless that was MAX_STARTS times already: then it ends), else the next run in fair turns; None
        when no run is left (each queue job takes one run, whichever is due, so an extra one finds none).
        Only runs stamped with this worker's lessons (or none) are taken: Elsewhere when only others wait."""

        def work(conn: Connection) -> Run | Elsewhere | None:
            # Read the clock under the lock: starts then follow the order runs were taken in, which the
            # fair turns read back (a time read before waiting for the lock put a later pick first).
            now = self._now()
            row = conn.execute("SELECT id FROM grading_jobs WHERE queue_job_id = ? AND state = ?",
                               (queue_job_id, RUNNING)).fetchone()
            if row is None:  # not a run handed back: the next one in fair turns
                conn.execute("UPDATE grading_jobs SET state = ?, result = ?, finished_ts = ? "
                             "WHERE state = ? AND deadline_ts < ?", (ENDED, _ended(EXPIRED), now, QUEUED, now))
                order = _queued_in_turns(conn, self.lessons)
                if not order:
                    other = conn.execute("SELECT id, lessons FROM grading_jobs WHERE state = ? AND lessons NOT IN "
                                         "('', ?) ORDER BY id LIMIT 1", (QUEUED, self.lessons)).fetchone()
                    return None if other is None else Elsewhere(int(other.id), other.lessons)
                job_id = int(order[0])
            else:
                job_id = int(row.id)
            found = conn.one("SELECT learner_id, exercise_id, language, source, attempts, deadline_ts, lessons, "
                             "hidden_seed FROM grading_jobs WHERE id = ?", (job_id,))
            if found.lessons not in ("", self.lessons):  # handed back from a worker with other lessons: it waits
                conn.execute("UPDATE grading_jobs SET state = ? WHERE id = ?", (QUEUED, job_id))
                return Elsewhere(job_id, found.lessons)
            verdict = EXPIRED if now > found.deadline_ts else STOPPED if found.attempts >= MAX_STARTS else None
            if verdict is not None:
                conn.execute("UPDATE grading_jobs SET state = ?, result = ?, finished_ts = ? WHERE id = ?",
                             (ENDED, _ended(verdict), now, job_id))
                return None
            conn.execute("UPDATE grading_jobs SET state = ?, attempts = attempts + 1, started_ts = ?, worker = ?, "
                         "queue_job_id = ? WHERE id = ?", (RUNNING, now, worker, queue_job_id, job_id))
            seed = None if found.hidden_seed is None else int(found.hidden_seed)
            return Run(job_id, int(found.learner_id), found.exercise_id, found.language, found.source,
                       int(found.attempts) + 1, seed)

        return self.database.write(work, lock=PICK_LOCK)

    def graded(self, run: Run, result: dict[str, Any]) -> tuple[str | None, str | None, Callable[[Connection, int], bool]]:
        """What keeping a run's result needs from its job: (the click's key, the run's work time, the claim
        that marks the job graded in the submission's transaction, refusing when it was graded already, so a
        result delivered twice is kept once). classes/graded_runs.py's keep() is the one place that keeps it."""
        result_json = json.dumps(result, sort_keys=True)
        now = self._now()

        def claim(conn: Connection, submission_id: int) -> bool:
            changed = conn.execute(
                "UPDATE grading_jobs SET state = ?, result = ?, finished_ts = ?, submission_id = ? "
                "WHERE id = ? AND state IN (?, ?)",
                (GRADED, result_json, now, submission_id, run.id, *OPEN_STATES))
            return changed.rowcount == 1

        found = self.database.read(lambda conn: conn.execute(
            "SELECT request_key, work_at, submitted_ts FROM grading_jobs WHERE id = ?", (run.id,)).fetchone())
        key, work_at, submitted = found if found else (None, None, None)
        if work_time(work_at) is None and isinstance(submitted, (int, float)):  # a job queued before work_at
            work_at = datetime.fromtimestamp(submitted, timezone.utc).isoformat()
        return key, work_at, claim

    def end(self, job_id: int, verdict: str, detail: str | None = None) -> int:
        """End a run that is still open without a grade; 1 if it was open."""
        return self.database.write(lambda conn: conn.execute(
            "UPDATE grading_jobs SET state = ?, result = ?, finished_ts = ? WHERE id = ? AND state IN (?, ?)",
            (ENDED, _ended(verdict, detail), self._now(), job_id, *OPEN_STATES)).rowcount)


def _ended(verdict: str, detail: str | None = None) -> str:
    return json.dumps({"verdict": verdict} | ({"detail": detail} if detail else {}), sort_keys=True)


# ---------------------------------------------------------------- the queue's few statements of its own
# (classes/queue.py drives procrastinate; the SQL it needs besides procrastinate's lives here)


def _named(raw: Any, sql: str, params: tuple[Any, ...] = ()) -> Record:
    """The one row of ``sql`` on psycopg's own connection ``raw`` (whose rows are plain tuples), read as the
    store's named record (``row.ready``)."""
    with raw.cursor(row_factory=postgres_records) as cursor:
        row: Record = cursor.execute(sql, params).fetchone()
    return row


def queue_schema_ready(raw: Any) -> bool:
    """Whether procrastinate's tables exist (``raw``: an open psycopg connection)."""
    return bool(_named(raw, "SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS ready").ready)


def lock_session(raw: Any, key: int) -> None:
    raw.execute("SELECT pg_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, key))


def unlock_session(raw: Any, key: int) -> None:
    raw.execute("SELECT pg_advisory_unlock(%s, %s)", (ADVISORY_NAMESPACE, key))


async def try_lock_session_async(raw: Any, key: int) -> bool:
    cursor = await raw.execute("SELECT pg_try_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, key))
    return bool((await cursor.fetchone())[0])


async def unlock_session_async(raw: Any, key: int) -> None:
    await raw.execute("SELECT pg_advisory_unlock(%s, %s)", (ADVISORY_NAMESPACE, key))


async def notify_async(raw: Any, channel: str, payload: str) -> None:
    await raw.execute("SELECT pg_notify(%s, %s)", (channel, payload))


async def listen_async(raw: Any, channel: str) -> None:
    from psycopg import sql

    await raw.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))


async def ping_async(raw: Any) -> None:
    """A round trip on a quiet connection: an error here says the connection is gone."""
    await raw.execute("SELECT 1")


class ConnectionLimits(NamedTuple):
    """What a PostgreSQL server allows, as connection_limits reads it."""

    max_connections: int
    superuser_reserved: int      # superuser_reserved_connections
    reserved: int                # reserved_connections (PostgreSQL 16 on; 0 before)
    is_superuser: bool           # whether this role is a superuser
    role_limit: int              # this role's CONNECTION LIMIT (-1: none)
    open_now: int                # client connections open now


def connection_limits(raw: Any) -> ConnectionLimits:
    """The connection limits of the server ``raw`` (psycopg's own connection) reaches."""
    row = _named(raw, "SELECT current_setting('max_connections')::int AS max_connections, "
                 "current_setting('superuser_reserved_connections')::int AS superuser_reserved, "
                 "COALESCE(current_setting('reserved_connections', true), '0')::int AS reserved, "
                 "r.rolsuper AS is_superuser, r.rolconnlimit AS role_limit, "
                 "(SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS open_now "
                 "FROM pg_roles r WHERE r.rolname = current_user")
    return ConnectionLimits(int(row.max_connections), int(row.superuser_reserved), int(row.reserved),
                            bool(row.is_superuser), int(row.role_limit), int(row.open_now))
