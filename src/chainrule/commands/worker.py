"""`chainrule worker`: grade a class's runs, on any host that reaches its PostgreSQL database.

    chainrule worker [--database URL] [--concurrency N] [--lessons DIR]

Takes the runs `chainrule serve` queued (classes/queue.py), learners in fair turns, grades each in the
same layered sandbox as `chainrule lesson`, and keeps the result as the learner's submission
(progress/run_jobs.py). N processes (default: one per core of this host), each grading one run at a time;
a process that dies is started again. Start and stop workers at any time: a run whose worker died goes
back to the queue once that worker has been silent for --stalled-after, and is graded by another. A worker
grades only the runs accepted with its own lessons (--lessons DIR, the same folder as `chainrule serve`'s;
classes/class_lessons.py) and leaves the others, saying so, for a worker that has them. See
docs/classroom.md. The database's address (and its password) never goes on a command line: the worker
processes get it in their environment.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Callable, cast

from chainrule import quiet_start
from chainrule.turns import GRADING_NICE

if TYPE_CHECKING:
    import asyncio

    from procrastinate import App, PsycopgConnector

    from chainrule.classes.queue import Sender
    from chainrule.progress.run_jobs import RunJobs
    from chainrule.progress.store import ProgressStore

DEFAULT_HEARTBEAT = 5.0
DEFAULT_NICE = GRADING_NICE
DEFAULT_STALLED_AFTER = 30.0
PREFETCH = 1  # runs a worker process holds besides the one it grades
FINISH_PATIENCE_SECONDS = 60.0
YOUNG_SECONDS = 10.0  # a process that dies younger than this is started again after a growing pause
MAX_RESTART_PAUSE = 30.0  # how long a graded result waits for an unreachable database
SUPERVISED = "CHAINRULE_WORKER_SUPERVISED"  # set for the processes a supervisor starts


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "worker", help="grade a class's queued runs (run it on any host that reaches the class's PostgreSQL)",
        description="Grade the runs `chainrule serve --database URL` queued, in this host's sandbox.",
    )
    parser.add_argument("--concurrency", type=int, default=None, metavar="N",
                        help="how many runs at once, each in its own process (default: one per core)")
    parser.add_argument("--name", default=None, help="this worker's name in logs (default: HOST:PID)")
    parser.add_argument("--heartbeat", type=float, default=DEFAULT_HEARTBEAT, metavar="SECONDS",
                        help=f"how often a worker says it is alive (default {DEFAULT_HEARTBEAT:g})")
    parser.add_argument("--stalled-after", type=float, default=DEFAULT_STALLED_AFTER, metavar="SECONDS",
                        help="a worker silent this long is taken for dead and its run is graded again "
                        f"(default {DEFAULT_STALLED_AFTER:g}; keep it several heartbeats long)")
    parser.add_argument("--nice", type=int, default=DEFAULT_NICE, metavar="N",
                        help=f"run at this lower CPU priority (default {DEFAULT_NICE}), so that on a host that also "
                        "serves the pages they stay fast while a long queue is graded; 0 keeps the priority")
    parser.add_argument("--allow-weak-sandbox", action="store_true",
                        help="grade even if this host's sandbox is not strong (learners' code then runs on a host "
                        "that holds the class database's address)")
    parser.add_argument("--database", default=None, metavar="URL",
                        help="the class's postgresql:// URL (default: $CHAINRULE_DATABASE)")
    parser.add_argument("--lessons", action="append", default=[], metavar="DIR",
                        help="the class's own lessons: the same folder `chainrule serve --lessons DIR` was given "
                        "(repeatable, in the same order); runs accepted with other lessons are left for another worker")
    parser.set_defaults(func=run)


def lower_priority(nice: int) -> None:
    """Run at this nice, and so do the processes it starts (worker processes; a run's cgroup takes its weight
    from it, grading/sandbox/cgroups.py). Linux schedules each session as a group (autogroup) and a nice counts
    only inside its group: a worker that leads its own session (a service, or started with setsid) gives its
    group the nice too, or it would compete as an equal of the web server's session whatever its nice."""
    os.nice(nice)
    if os.getsid(0) == os.getpid():  # a session shared with a shell would lower the shell's processes too
        try:
            with open("/proc/self/autogroup", "w") as group:
                group.write(str(nice))
        except OSError:
            pass  # no autogroups (or not Linux): the process's nice is the whole story


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def run(args: argparse.Namespace) -> int:
    from chainrule.classes import ENV_DATABASE
    from chainrule.commands.class_ import secret_on_command_line
    from chainrule.progress.connection import is_database_url

    refusal = secret_on_command_line(args.database)
    if refusal:
        print(f"chainrule worker: {refusal}", file=sys.stderr)
        return 2
    url = args.database or os.environ.get(ENV_DATABASE) or ""
    if not is_database_url(url):
        print("chainrule worker: give the class's PostgreSQL database with --database postgresql://... (or "
              f"${ENV_DATABASE}). A class in SQLite is graded by `chainrule serve` itself.", file=sys.stderr)
        return 2
    concurrency = args.concurrency if args.concurrency is not None else _cores()
    if not 1 <= concurrency <= 256:
        print(f"chainrule worker: --concurrency must be between 1 and 256, not {concurrency}", file=sys.stderr)
        return 2
    if not 0 < args.heartbeat < args.stalled_after:
        print("chainrule worker: --heartbeat must be > 0 and shorter than --stalled-after", file=sys.stderr)
        return 2
    if not 0 <= args.nice <= 19:
        print(f"chainrule worker: --nice must be between 0 and 19, not {args.nice}", file=sys.stderr)
        return 2
    from chainrule.classes.class_lessons import LessonsRefused, load_lessons
    from chainrule.commands.sandbox_policy import weak_sandbox_refusal

    refusal = weak_sandbox_refusal("worker", "grade here", "learners' code runs on this host, which holds the class "
                                   "database's address", "Fix the sandbox (docs/grading.md)",
                                   allowed=args.allow_weak_sandbox)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    try:
        lessons = load_lessons(args.lessons)  # the runs name the lessons' exercises
    except LessonsRefused as error:
        print(f"chainrule worker: {error}", file=sys.stderr)
        return 2
    if args.nice:
        lower_priority(args.nice)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if not os.environ.get(SUPERVISED):  # a supervisor checked for all its processes
        refusal = _over_budget(url, concurrency)
        if refusal:
            print(f"chainrule worker: {refusal}", file=sys.stderr)
            return 2
    if concurrency > 1:
        return _supervise(args, url, concurrency)
    import asyncio  # here, not at the top: `chainrule worker --help` and `chainrule --help` need no event loop

    from chainrule.progress import StoreError

    name = args.name or f"{socket.gethostname()}:{os.getpid()}"
    try:
        return asyncio.run(_work(url, name, args.heartbeat, args.stalled_after, Lessons(lessons, args.lessons)))
    except KeyboardInterrupt:
        return 0
    except StoreError as error:
        print(f"chainrule worker: {error}", file=sys.stderr)
        return 1


def _over_budget(url: str, processes: int) -> str | None:
    """Why ``processes`` worker processes would not find the connections they need (connection_budget.py)."""
    from chainrule.commands.connection_budget import server_limit, worker_budget

    try:
        limit = server_limit(url)
    except Exception:  # unreachable now: the worker says so, and waits for it, as it starts
        return None
    return worker_budget(limit, processes)


def _supervise(args: argparse.Namespace, url: str, count: int) -> int:
    """Run ``count`` worker processes; start again any that dies (after a pause that grows while they keep
    dying young, e.g. the database is away); stop them all on a signal."""
    from chainrule.progress import StoreError

    try:
        _prepare(url).close()  # a database that cannot be reached is said once, here, not by every process
    except StoreError as error:
        print(f"chainrule worker: {error}", file=sys.stderr)
        return 1
    from chainrule.classes import ENV_DATABASE

    quiet_start.started()  # the supervisor's start is over (quiet_start.py)
    # The URL (and any password in it) goes to the processes in their environment, which only this user
    # can read (/proc/PID/environ), never on their command lines, which every local user can (`ps`).
    command = [sys.executable, "-m", "chainrule", "worker", "--concurrency", "1", "--nice", "0",
               *(["--allow-weak-sandbox"] if args.allow_weak_sandbox else []),
               *(part for folder in args.lessons for part in ("--lessons", folder)),
               "--heartbeat", str(args.heartbeat), "--stalled-after", str(args.stalled_after)]
    environment = dict(os.environ, **{ENV_DATABASE: url, SUPERVISED: "1"})
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    children = [(subprocess.Popen(command, env=environment), time.monotonic()) for _ in range(count)]
    pause = 1.0
    print(f"chainrule worker: {count} processes grading (one run each at a time).", flush=True)
    while not stopping:
        time.sleep(0.5)
        for index, (child, started) in enumerate(children):
            if child.poll() is None or stopping:
                continue
            young = time.monotonic() - started < YOUNG_SECONDS
            pause = min(MAX_RESTART_PAUSE, pause * 2) if young else 1.0
            print(f"chainrule worker: process {child.pid} stopped (exit {child.returncode}); starting another"
                  + (f" in {pause:g} s." if young else "."), file=sys.stderr, flush=True)
            if young:
                time.sleep(pause)
            children[index] = (subprocess.Popen(command, env=environment), time.monotonic())
    for child, _ in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child, _ in children:
        child.wait()
    return 0


def _prepare(url: str) -> ProgressStore:
    """The class store, with procrastinate's schema applied; StoreError if the database cannot be used."""
    from chainrule.classes import open_class_store
    from chainrule.classes.graded_runs import queue_unreachable
    from chainrule.classes.queue import apply_schema
    from chainrule.commands.connection_budget import WORKER_STORE_CONNECTIONS

    store = open_class_store(database=url, pool_size=WORKER_STORE_CONNECTIONS)
    try:
        apply_schema(url)
    except Exception as error:
        store.close()
        raise queue_unreachable(store.where, error) from error
    return store


class Lessons:
    """This worker's lessons (their hash and the --lessons folders), and the other lessons it has said it
    leaves runs of (each said once)."""

    def __init__(self, lessons_hash: str, folders: list[str]) -> None:
        self.hash, self.folders = lessons_hash, list(folders)
        self.said: set[str] = set()

    def say_served(self, store: ProgressStore) -> None:
        """At start: what the class's server serves, when it is not what this worker has."""
        from chainrule.classes.class_lessons import served_elsewhere

        said = served_elsewhere(store, self.hash, self.folders)
        if said:
            print(f"chainrule worker: {said}", file=sys.stderr, flush=True)

    def leave(self, other: str) -> None:
        from chainrule.classes.class_lessons import mismatch

        if other not in self.said:
            self.said.add(other)
            print(f"chainrule worker: {mismatch(other, self.hash, self.folders)}", file=sys.stderr, flush=True)


async def _work(url: str, name: str, heartbeat: float, stalled_after: float, lessons: Lessons) -> int:
    import asyncio

    from chainrule.classes.queue import QUEUE, Sender, worker_app
    from chainrule.grading import configure_concurrency
    from chainrule.progress.connection import redacted_url
    from chainrule.progress.run_jobs import RunJobs

    store = _prepare(url)
    jobs = RunJobs(store, lessons=lessons.hash)
    lessons.say_served(store)
    # This process grades one run at a time, with the next one already taken and waiting at the gate: the
    # queue's bookkeeping (keeping a result, taking the next run) overlaps a grading instead of adding to it.
    configure_concurrency(slots=1, queue=PREFETCH)
    sender = Sender(url)

    def hand_on(job_id: int, other: str) -> None:
        """A run this worker may not grade: said once, and its turn sent again a heartbeat later, for any worker."""
        lessons.leave(other)
        queue_job_id = sender.send(job_id, after=heartbeat)
        if queue_job_id is not None:
            jobs.mark_sent(job_id, queue_job_id)

    app = worker_app(url, lambda queue_job_id: _grade_turn(jobs, queue_job_id, name, hand_on))
    stop = asyncio.Event()
    sweeping = asyncio.create_task(_sweep(app, jobs, sender, heartbeat, stalled_after, stop))
    # Only a signal ends this process. procrastinate also stops its worker when a side task fails (its
    # LISTEN connection, when the database goes away) and then returns as after a signal: so the signals
    # are ours, and any other end of its worker means "start again".
    signalled = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, signalled.set)
    quiet_start.started()  # the start is over: the garbage collector back on for the grading (quiet_start.py)
    print(f"chainrule worker {name} is grading the runs queued in {redacted_url(url)}.", flush=True)
    try:
        while not signalled.is_set():
            try:
                async with app.open_async():
                    working = asyncio.create_task(app.run_worker_async(
                        queues=[QUEUE], concurrency=1 + PREFETCH, name=name, delete_jobs="successful",
                        update_heartbeat_interval=heartbeat, stalled_worker_timeout=stalled_after,
                        fetch_job_polling_interval=heartbeat, install_signal_handlers=False))
                    waiting = asyncio.ensure_future(signalled.wait())
                    await asyncio.wait({working, waiting}, return_when=asyncio.FIRST_COMPLETED)
                    waiting.cancel()
                    if signalled.is_set() and not working.done():
                        working.cancel()  # procrastinate stops gracefully: the runs in hand are finished
                    try:
                        await working
                    except asyncio.CancelledError:
                        pass
                if not signalled.is_set():
                    logging.getLogger("chainrule.worker").warning("worker %s stopped by itself; starting again in 1 s",
                                                                  name)
            except Exception as error:  # the database went away: wait, then take runs again
                logging.getLogger("chainrule.worker").warning("worker %s: %s; starting again in 1 s", name, error)
            if not signalled.is_set():
                await asyncio.sleep(1)
        return 0  # stopped by a signal
    finally:
        stop.set()
        await sweeping
        sender.close()
        store.close()


async def _sweep(app: App, jobs: RunJobs, sender: Sender, heartbeat: float, stalled_after: float,
                 stop: asyncio.Event) -> None:
    """Every heartbeat: runs of dead workers back to the queue, runs the queue never got or lost (their
    queue job failed or is gone) sent to it, runs past their deadline ended. A failure (the database away)
    waits for the next round."""
    import asyncio

    from chainrule.classes.queue import QUEUE, requeue_stalled

    log = logging.getLogger("chainrule.worker")
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=heartbeat)
            return
        except asyncio.TimeoutError:
            pass
        try:
            connector = cast("PsycopgConnector", app.connector)  # `chainrule worker` builds it (classes/queue.py)
            if connector._async_pool is not None:  # the worker's pool is open (not between restarts)
                await requeue_stalled(app, stalled_after)
            unsent = await asyncio.to_thread(jobs.unsent, 2 * heartbeat)
            lost = await asyncio.to_thread(jobs.without_turn, QUEUE, 2 * heartbeat)
            if lost:
                log.warning("%d queued run(s) lost their queue job (it failed or is gone); sending them again",
                            len(lost))
            for job_id in unsent + lost:
                queue_job_id = await asyncio.to_thread(sender.send, job_id)
                if queue_job_id is not None:
                    await asyncio.to_thread(jobs.mark_sent, job_id, queue_job_id)
            await asyncio.to_thread(jobs.expire_overdue)
        except Exception as error:
            log.warning("sweeping the queue failed (%s); trying again in %g s", error, heartbeat)


def _grade_turn(jobs: RunJobs, queue_job_id: int, name: str, hand_on: Callable[[int, str], None]) -> None:
    """procrastinate's task: take the run that is due (learners in fair turns, or the run this queue job
    held when its worker died), grade it and keep its result (runs in a thread of the worker). Only runs
    accepted with this worker's lessons are due here; when only others wait, ``hand_on`` passes the turn on."""
    from chainrule.classes.graded_runs import keep_graded_job
    from chainrule.grading import grade, judged_the_code
    from chainrule.progress import StoreError
    from chainrule.progress.run_jobs import CANNOT_GRADE, Elsewhere

    run = jobs.start(queue_job_id, name)
    if isinstance(run, Elsewhere):
        hand_on(run.id, run.lessons)
        return
    if run is None:
        return  # no run left to take (another queue job took it), or it has ended
    try:
        result = grade(run.exercise_id, run.language, run.source, hidden_seed=run.hidden_seed)
    except ValueError as error:  # an exercise or language this host's chainrule does not know
        jobs.end(run.id, CANNOT_GRADE, str(error))
        return
    if not judged_the_code(result):  # this machine was too busy to run it: the run ends ungraded, counting nothing
        jobs.end(run.id, result["verdict"], result.get("message"))
        return
    waited = 0.0
    while True:
        try:
            keep_graded_job(jobs, run, result)
            return
        except StoreError:
            if waited >= FINISH_PATIENCE_SECONDS:
                raise  # the run stays "running"; its deadline ends it
            time.sleep(1.0)
            waited += 1.0
