"""The one seam between a submitted run and its result, for every face that grades for a learner.

    runs = InProcessRuns(keeper)                       # `chainrule lesson`, and a class kept in SQLite
    runs = QueuedRuns(store, url)                      # a class kept in PostgreSQL: `chainrule worker` grades
    answer = await runs.submit(Submission(learner, exercise, language, source, key), still_wanted)
    answer.pending                                     # True: answer.body is a job to follow ...
    runs.status(learner, job)                          # ... {"job", "state", "position"?, "result"?} or None
    runs.open_runs(learner)                            # the runs still waiting or running (a reloaded page)
    runs.ungraded_runs(learner)                        # runs that ended without a grade after the last graded one
    runs.forget_learner(learner)                       # an account removed: its waiting runs go

The routes hold one of these (web/store_access.py) and ask it; the page learns from the answers (202 and a
job, or 200 and a result; GET /api/jobs) whether runs are queued, never from anything else.

One admission policy (chainrule.turns): at most ``per_learner`` open runs per learner (3 unless `serve
--runs-per-learner` says otherwise) and learners in fair turns, whether the run waits for this process's
sandboxes (grading.gate()) or for a worker (progress/run_jobs.py). One result builder: every answer a page
sees, graded or not, is grading.run_result's shape, with "saved" and "store_error" added here only (kept()).
``key`` names one click of "Run tests", so a request sent again after a lost answer finds its job.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from chainrule.compute_cost import costs_cpu
from chainrule.number_text import count_text
from chainrule.progress.shapes import JobStatus
from chainrule.progress.store import ProgressStore, origin_of_key, system_clock, work_time
from chainrule.turns import BOUND, BUSY, GRADING_NICE, MAX_OPEN_PER_LEARNER

if TYPE_CHECKING:
    from chainrule.progress.connection import Connection
    from chainrule.progress.run_jobs import Run, RunJobs

log = logging.getLogger("chainrule.serve")

StillWanted = Callable[[], Awaitable[bool]]
Claim = Callable[["Connection", int], bool]  # record_submission's claim: keep the run only if it agrees


def yield_to_pages() -> None:
    """Lower the calling thread's priority to GRADING_NICE (Linux keeps a nice per thread; the processes a
    thread starts inherit it): the runs this thread grades then yield the CPU to the server's pages."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, max(GRADING_NICE, os.getpriority(os.PRIO_PROCESS, 0)))
    except (OSError, AttributeError):  # not allowed, or not a POSIX system: the runs weigh as the server
        pass


@dataclass(frozen=True)
class Submission:
    """One click of "Run tests": whose (None: the one learner of `chainrule lesson`), what, and its key.
    accepted: the run's work time, kept as its submission's time whenever it is graded: when the server
    accepted it (submit() stamps it, with the store's clock), or, for a regrade's run, the time of the run it
    grades again. The waiting room, the queue and the grader take time; the learner's work does not."""

    learner: int | None
    exercise: str
    language: str
    source: str
    key: str | None = None
    accepted: str | None = None
    hidden_seed: int | None = None  # the seed of its hidden cases: a regrade's run keeps its first grading's

    def stamped(self, now: Callable[[], datetime]) -> "Submission":
        """This run with its work time: the one it has, else ``now()`` (the server accepting it)."""
        return self if work_time(self.accepted) else replace(self, accepted=work_time(now()))


@dataclass(frozen=True)
class Answer:
    """What a submit answers: a result (pending False), or a job to follow (pending True). ``failure``: why
    the result could not be kept (the web words it through its one error mapping: web/error_answers.py)."""

    body: dict = field(default_factory=dict)
    pending: bool = False
    failure: BaseException | None = None


class GradedRuns(Protocol):
    """A graded run, in process or queued: what the routes hold."""

    queued: bool  # True when runs wait for `chainrule worker` (then submit answers jobs)

    async def submit(self, run: Submission, still_wanted: StillWanted | None = None) -> Answer: ...

    def status(self, learner: int | None, job_id: int) -> dict | None: ...

    def open_runs(self, learner: int | None) -> list[dict]: ...

    def ungraded_runs(self, learner: int | None) -> list[dict]: ...

    def forget_learner(self, learner: int) -> int: ...

    def close(self) -> None: ...


# ---------------------------------------------------------------- the answers (one builder: grading.run_result)


def kept(result: dict, saved: bool, store_error: str | None = None) -> dict:
    """A result as a page gets it: whether it was kept as the learner's submission, and if not, why."""
    return result | {"saved": bool(saved), "store_error": store_error}


def refused(run: Submission, reason: str, per_learner: int) -> dict:
    """The answer to a run that got no turn (not a verdict on the code, and it counts nothing)."""
    from chainrule.grading import busy_result

    if reason == BOUND:
        return kept(busy_result(run.exercise, run.language,
                                f"You already have {count_text(per_learner, 'run')} waiting for the grader; this one was not "
                                "queued. Wait for one of them to finish, then run it again."), saved=False)
    return kept(busy_result(run.exercise, run.language), saved=False)


def ended_result(exercise: str, language: str, ended: dict) -> dict:
    """The result of a queued run that ended without a grade (progress/run_jobs.py says which way)."""
    from chainrule.grading import SERVER_BUSY, run_result
    from chainrule.progress.run_jobs import CANNOT_GRADE, EXPIRED, MAX_STARTS, STOPPED

    verdict = str(ended.get("verdict", ""))
    if verdict == SERVER_BUSY:  # the grader's own words (grading.grader), kept with the ended job
        return kept(run_result(exercise, language, SERVER_BUSY, "error", ended.get("detail")), saved=False)
    messages = {
        EXPIRED: "No grader took this run before its deadline (the graders are stopped or the queue is very "
                 "long), so it was not graded and does not count. Run it again in a moment.",
        STOPPED: f"The grader stopped {MAX_STARTS} times while running this code (a worker machine failed), so "
                 "it was not graded and does not count. Run it again.",
        CANNOT_GRADE: f"This worker cannot grade it: {ended.get('detail')}",
    }
    message = messages.get(verdict, "This run was not graded and does not count. Run it again.")
    shown = verdict if verdict in (EXPIRED, STOPPED) else "error"
    return kept(run_result(exercise, language, shown, "error", message), saved=False)


def job_answer(status: JobStatus) -> dict[str, Any]:
    """RunJobs.status as the page gets it: a graded run's result kept, an ended run's result built."""
    answer: dict[str, Any] = {key: value for key, value in status.items() if key != "ended"}
    if "result" in status:
        answer["result"] = kept(status["result"], saved=True)
    elif "ended" in status:
        answer["result"] = ended_result(status["exercise"], status["language"], status["ended"])
    return answer


# ---------------------------------------------------------------- keeping a result (one place, both backends)


def keep(learner_store: ProgressStore, run: Submission, result: dict,
         claim: Claim | None = None) -> int | None:
    """The one place a graded run's result is kept as the learner's submission, in process and queued: at
    the run's work time, under the origin its key gives (a regrade's runs apart), only if it is a verdict on
    the code (grading.judged_the_code) and ``claim`` (run in the same transaction) agrees. The submission's
    id, or None when nothing was kept. It may raise the store's errors (the caller says what they mean)."""
    from chainrule.grading import judged_the_code

    if not judged_the_code(result):  # the server was too busy to run it: not a run of the learner's
        return None
    return learner_store.record_submission(run.exercise, run.language, run.source, result, claim=claim,
                                           origin=origin_of_key(run.key), at=run.accepted)


def keep_graded_job(jobs: RunJobs, run: Run, result: dict) -> int | None:
    """A worker's result of a queued run (progress/run_jobs.py's Run) kept through keep(), marking its job
    graded in the same transaction; None if the job was graded already (a result delivered twice)."""
    key, work_at, claim = jobs.graded(run, result)
    submission = Submission(run.learner_id, run.exercise_id, run.language, run.source, key=key, accepted=work_at)
    return keep(jobs.store.for_learner(run.learner_id), submission, result, claim)


# ---------------------------------------------------------------- in this process


# Runs of a class in SQLite that may wait for this process's sandboxes (each at most the gate's minute; the
# per-learner bound keeps one learner to 3): 100 learners' busiest moments measured 24 "busy" answers of 387
# runs with the personal app's room of 4 (benchmarks/bench_class_browsers.py --sqlite), none with this one.
CLASS_WAITING_ROOM = 400


class InProcessRuns:
    """Runs graded in this process's sandboxes, in turns of grading.gate(); the result is kept at once
    through ``keeper(learner)`` (the learner's progress store; it may raise: the grade stands, unsaved),
    and only if ``claim_for(learner)`` (a record_submission claim) agrees."""

    queued = False

    def __init__(self, keeper: Callable[[int | None], ProgressStore], *, per_learner: int = MAX_OPEN_PER_LEARNER,
                 claim_for: Callable[[int | None], Claim] | None = None) -> None:
        if per_learner < 1:
            raise ValueError("a learner may have at least 1 open run")
        self.keeper = keeper
        self.per_learner = int(per_learner)
        self.claim_for = claim_for
        # Admitted runs' own threads (the gate admits at most its slots): never the pages' thread pool, and
        # at a lower priority than the pages (the server stays quick while a room's runs are graded).
        self.threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="chainrule-grading",
                                          initializer=yield_to_pages)

    @costs_cpu
    async def submit(self, run: Submission, still_wanted: StillWanted | None = None) -> Answer:
        """Wait for a turn in the event loop (holding no thread), grade, keep. A run whose page has gone
        by the time its turn comes is not graded."""
        import anyio

        from chainrule.grading import gate, grade_now

        run = run.stamped(lambda: self._clock(run.learner))
        admission = gate()
        turn = await admission.enter_async(run.learner, bound=self.per_learner)
        if isinstance(turn, str):
            return Answer(refused(run, turn, self.per_learner))

        def graded() -> dict:
            try:
                return grade_now(run.exercise, run.language, run.source, hidden_seed=run.hidden_seed)
            finally:
                admission.leave(turn)  # in the grading's thread: the turn ends when the sandbox does

        try:
            wanted = still_wanted is None or await still_wanted()
        except BaseException:
            admission.leave(turn)
            raise
        if not wanted:
            admission.leave(turn)
            return Answer(refused(run, BUSY, self.per_learner))
        result = await asyncio.shield(asyncio.get_running_loop().run_in_executor(self.threads, graded))
        return await anyio.to_thread.run_sync(self.keep, run, result)

    @classmethod
    def for_class(cls, store: ProgressStore, *, per_learner: int = MAX_OPEN_PER_LEARNER) -> "InProcessRuns":
        """A class kept in SQLite: each learner's runs kept in the class store, while the account exists."""
        from chainrule.progress.class_store import account_exists

        def learners_store(learner: int | None) -> ProgressStore:
            if learner is None:  # every run of a class is an account's
                raise ValueError("a class's run names its learner")
            return store.for_learner(learner)

        return cls(learners_store, per_learner=per_learner, claim_for=account_exists)

    def _clock(self, learner: int | None) -> datetime:
        """Now, by the learner's store's clock (the system's if the store cannot be reached)."""
        try:
            return self.keeper(learner).now()
        except Exception:
            return system_clock()

    def keep(self, run: Submission, result: dict) -> Answer:
        claim = None if self.claim_for is None else self.claim_for(run.learner)
        try:
            kept_id = keep(self.keeper(run.learner), run, result, claim)
        except Exception as failure:  # the store cannot be used: the grade stands, and says so
            return Answer(kept(result, saved=False, store_error=str(failure)), failure=failure)
        return Answer(kept(result, saved=kept_id is not None))

    def status(self, learner: int | None, job_id: int) -> dict | None:
        return None  # nothing waits here after its request: there are no jobs

    def open_runs(self, learner: int | None) -> list[dict]:
        return []

    def ungraded_runs(self, learner: int | None) -> list[dict]:
        return []

    def forget_learner(self, learner: int) -> int:
        from chainrule.grading import gate

        return gate().withdraw_owner(learner)

    def close(self) -> None:
        self.threads.shutdown(wait=False)


# ---------------------------------------------------------------- queued for workers


def queue_unreachable(where: str, error: Exception) -> Exception:
    from chainrule.progress.store_errors import CANNOT_OPEN, StoreError

    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return StoreError(f"The job queue in the class database {where} cannot be used ({text}). Check that "
                      "PostgreSQL is running and that the URL is right; then try again.", kind=CANNOT_OPEN)


class QueuedRuns:
    """Runs become jobs in the class database (progress/run_jobs.py) and go to the queue
    (classes/queue.py); `chainrule worker` processes on any host grade them and keep the results.
    Nothing of a learner's code runs in the web process. Each job is stamped with this process's lessons
    (lessons/fingerprint.py), the ones a worker must grade it with (classes/class_lessons.py)."""

    queued = True

    def __init__(self, store: ProgressStore, url: str, *, deadline_seconds: float | None = None,
                 max_open: int | None = None) -> None:
        from chainrule.classes.queue import Sender, apply_schema
        from chainrule.lessons.fingerprint import lessons_hash
        from chainrule.progress.run_jobs import DEFAULT_DEADLINE_SECONDS, RunJobs

        self.jobs = RunJobs(store, lessons=lessons_hash(),
                            deadline_seconds=DEFAULT_DEADLINE_SECONDS if deadline_seconds is None else deadline_seconds,
                            max_open=MAX_OPEN_PER_LEARNER if max_open is None else max_open)
        try:
            apply_schema(url)
            self.sender = Sender(url)
        except Exception as error:  # psycopg's and procrastinate's errors: say what and where, no traceback
            raise queue_unreachable(store.where, error) from error

    @costs_cpu
    async def submit(self, run: Submission, still_wanted: StillWanted | None = None) -> Answer:
        import anyio

        return await anyio.to_thread.run_sync(self.submit_now, run)

    def submit_now(self, run: Submission) -> Answer:
        """submit() from synchronous code (the benchmark)."""
        if run.learner is None:  # only `chainrule lesson` has runs of no account, and it grades in process
            raise ValueError("a queued run is a class learner's: its Submission names the learner")
        job_id, _queued = self.jobs.submit(run.learner, run.exercise, run.language, run.source,
                                           run.key or uuid.uuid4().hex, accepted=run.accepted,
                                           hidden_seed=run.hidden_seed)
        if job_id is None:  # not queued: the learner has too many open runs
            return Answer(refused(run, BOUND, self.jobs.max_open))
        self.send(job_id)
        return Answer(self.status(run.learner, job_id) or {}, pending=True)

    def send(self, job_id: int) -> None:
        """Hand the run to the queue. If the queue cannot be reached now, the run stays queued in the
        class database and a worker's sweeper sends it later: nothing is lost."""
        try:
            queue_job_id = self.sender.send(job_id)
            if queue_job_id is not None:
                self.jobs.mark_sent(job_id, queue_job_id)
        except Exception as error:  # the queue's own errors, the store's: the sweeper sends it later
            log.warning("run %s is kept but not yet on the queue (%s); a worker will send it", job_id, error)

    def status(self, learner: int | None, job_id: int) -> dict | None:
        status = None if learner is None else self.jobs.status(learner, job_id)
        return None if status is None else job_answer(status)

    def open_runs(self, learner: int | None) -> list[dict]:
        return [] if learner is None else [job_answer(status) for status in self.jobs.open_jobs(learner)]

    def ungraded_runs(self, learner: int | None) -> list[dict]:
        return [] if learner is None else [job_answer(status) for status in self.jobs.ended_since_graded(learner)]

    def forget_learner(self, learner: int) -> int:
        return self.jobs.forget_learner(learner)

    def close(self) -> None:
        self.sender.close()
