"""The queue that carries graded runs to workers: procrastinate, in the class's PostgreSQL database.

Why procrastinate (docs/classroom.md): it needs nothing but PostgreSQL, speaks psycopg 3 (our driver),
wakes workers with LISTEN/NOTIFY, keeps a worker heartbeat from which a dead worker's jobs are found,
and has a lock per job so that one run never grades twice at once.

The web process only defers (Sender); `chainrule worker` runs procrastinate's worker with the one task
below, plus a sweeper that hands the jobs of dead workers back to the queue and sends the runs the queue
never got. A queue job is a turn, not a run: when it starts, it takes the run whose learner's turn it is
(progress/run_jobs.py: learners in fair turns), so the order procrastinate keeps (first come) does not
decide who is graded first. What a run is, and that it counts once, is progress/run_jobs.py's business.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Callable

from chainrule.progress.run_jobs import (
    listen_async,
    lock_session,
    notify_async,
    ping_async,
    queue_schema_ready,
    try_lock_session_async,
    unlock_session,
    unlock_session_async,
)

QUEUE = "grading"
TASK = "chainrule.grade_run"
# PostgreSQL connections the queue opens at most, for the connection budget (commands/connection_budget.py):
SENDER_CONNECTIONS = 2  # a Sender's pool (a web process's sends, a worker's sweeps)
WORKER_QUEUE_CONNECTIONS = 3 + 1  # a worker process's procrastinate pool (fetch, finish, heartbeat) + its listener
SCHEMA_LOCK = -2  # advisory lock keys (migrations use -1, learners >= 0): applying procrastinate's schema,
SWEEP_LOCK = -3  # and handing back stalled runs

log = logging.getLogger("chainrule.worker")


def _lock_of(job_id: int) -> str:
    return f"chainrule-run-{job_id}"


def apply_schema(url: str) -> bool:
    """Apply procrastinate's own schema (its SchemaManager, what `procrastinate schema --apply` runs) if the
    database has none yet; True if it was applied now. Several processes starting at once: one applies."""
    import psycopg
    from procrastinate import App, SyncPsycopgConnector

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as raw:
        if queue_schema_ready(raw):
            return False
        lock_session(raw, SCHEMA_LOCK)
        try:
            if queue_schema_ready(raw):
                return False
            app = App(connector=SyncPsycopgConnector(conninfo=url, min_size=1, max_size=1))
            with app.open():
                app.schema_manager.apply_schema()
            return True
        finally:
            unlock_session(raw, SCHEMA_LOCK)


class Sender:
    """Hands a run to the queue from synchronous code (the web process, the sweeper)."""

    def __init__(self, url: str) -> None:
        from procrastinate import App, SyncPsycopgConnector

        # A small pool that checks its connections: after a database restart the next send reconnects.
        self.app = App(connector=SyncPsycopgConnector(conninfo=url, min_size=0, max_size=SENDER_CONNECTIONS,
                                                    timeout=5, max_idle=30))
        self.app.open()

    def send(self, job_id: int, *, after: float | None = None) -> int | None:
        """procrastinate's job id, or None if the run is already waiting in the queue. after: seconds before a
        worker may take it (a turn handed on by a worker that may not grade the run)."""
        from procrastinate import exceptions

        # The queueing lock keeps a run sent twice (by the web process and by a sweeper) from making two jobs.
        deferrer = self.app.configure_task(TASK, queue=QUEUE, queueing_lock=_lock_of(job_id),
                                           schedule_in={"seconds": after} if after else None)
        try:
            return deferrer.defer(run_id=job_id)
        except exceptions.AlreadyEnqueued:
            return None

    def close(self) -> None:
        self.app.close()


def worker_app(url: str, grade_turn: Callable[[int], None]) -> Any:
    """procrastinate's App for a worker process, with the one task: a turn of grading, which takes the run
    that is due (``grade_turn(queue job id)``; the job's ``run_id`` is only the run that was sent)."""
    from procrastinate import App

    app = App(connector=_listening_connector(url))

    @app.task(name=TASK, queue=QUEUE, pass_context=True)
    def grade(context: Any, run_id: int) -> None:
        grade_turn(int(context.job.id))

    return app


LISTEN_CHECK_SECONDS = 10.0  # a quiet listening connection is checked this often (a dead one is opened again)


def _listening_connector(url: str) -> Any:
    """procrastinate's connector for a worker, with a listener that outlives the database: procrastinate's own
    stays silent for good once PostgreSQL restarts under it (the worker then only polls, once a --heartbeat).
    This one opens its connection again, LISTENs again and wakes the worker once, for the runs sent meanwhile."""
    import asyncio

    import psycopg
    from procrastinate import PsycopgConnector

    class ListeningConnector(PsycopgConnector):
        async def listen_notify(self, on_notification: Any, channels: Any) -> None:
            wake = json.dumps({"type": "job_inserted", "job_id": 0})
            first = True
            while True:
                try:
                    async with await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=10) as raw:
                        for channel in channels:
                            await listen_async(raw, channel)
                        if not first:
                            log.warning("listening for new runs again")
                            for channel in channels:
                                await on_notification(channel=channel, payload=wake)
                        first = False
                        while True:
                            async for notice in raw.notifies(timeout=LISTEN_CHECK_SECONDS):
                                await on_notification(channel=notice.channel, payload=notice.payload)
                            await ping_async(raw)
                except psycopg.Error as error:
                    first = False
                    log.warning("the connection that listens for new runs broke (%s); opening it again in 1 s",
                                str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__)
                    await asyncio.sleep(1)

    return ListeningConnector(conninfo=url, min_size=1, max_size=WORKER_QUEUE_CONNECTIONS - 1)


async def requeue_stalled(app: Any, stalled_after: float) -> int:
    """Hand back to the queue the runs of workers whose heartbeat stopped (killed, or their host lost).

    One worker at a time does this (an advisory lock), so a run handed back and taken again at once is
    never seen as stalled by a second worker reading the old state."""
    async with app.connector.pool.connection() as raw:
        if not await try_lock_session_async(raw, SWEEP_LOCK):
            return 0
        try:
            stalled = await app.job_manager.get_stalled_jobs(queue=QUEUE, seconds_since_heartbeat=stalled_after)
            for job in stalled:
                log.warning("queue job %s: its worker has not sent a heartbeat for %g s (--stalled-after); "
                            "handing its run back to the queue", job.id, stalled_after)
                await app.job_manager.retry_job(job)
                await wake_workers(raw, job.id)
            return len(stalled)
        finally:
            await unlock_session_async(raw, SWEEP_LOCK)


async def wake_workers(raw: Any, queue_job_id: int) -> None:
    """Tell idle workers that a job is waiting, as procrastinate does for a new one (a job handed back is
    not new, and without this it would wait for a worker's next poll, up to one --heartbeat more)."""
    from procrastinate.manager import get_channel_for_queues

    payload = json.dumps({"type": "job_inserted", "job_id": queue_job_id})
    for channel in get_channel_for_queues([QUEUE]):
        await notify_async(raw, channel, payload)
