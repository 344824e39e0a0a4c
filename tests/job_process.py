"""Graded runs as jobs with the real parts: a chainrule command as a process of its own (Process, Worker), a
class in its own PostgreSQL schema with its web app in process and the queued grader (Class), and a run sent
and waited for as the page does (run, wait_for). Used by test_jobs, test_queue_recovery, test_class_secrets
and the served-class tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from fastapi.testclient import TestClient

from chainrule.classes.accounts import Accounts
from chainrule.grading import reference_source
from chainrule.progress import open_store
from chainrule.progress.run_jobs import ENDED, GRADED
from chainrule.web.routes_class import create_class_app
from class_world import BASE, FAST_HASHER, PASSWORD, csrf_of
from reaper import spawn

REPO = Path(__file__).resolve().parents[1]


EXERCISE = "neuron-grads"


SOLUTION = reference_source(EXERCISE, "python")


FAST_WORKER = ("--heartbeat", "0.5", "--stalled-after", "2")


# Only catches a hang: on a busy machine one run alone may be given every window of its hang guard (2 minutes:
# docs/grading.md, "A busy machine") before it ends (at load 30 a run was still running after the 90 s this was).
WAIT_SECONDS = 200


def env_for(url: str) -> dict:
    env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATABASE=url)
    return env


class Process:
    """A chainrule command as its own process (its own process group), ready once it prints ``ready``.
    ``url``: the class database (None: ``env`` says where the class is); ``program``: what runs the CLI."""

    def __init__(self, url: str | None, argv: list[str], ready: str, *, env: dict | None = None,
                 program: tuple[str, ...] = ("-m", "chainrule"), cwd: Path = REPO) -> None:
        self.process = spawn([sys.executable, *program, *argv], env=env or env_for(url), cwd=cwd,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        started = threading.Event()

        def read() -> None:
            for line in self.process.stdout:
                self.lines.append(line)
                if ready in line:
                    started.set()
            started.set()

        threading.Thread(target=read, daemon=True).start()
        assert started.wait(WAIT_SECONDS) and self.process.poll() is None, "".join(self.lines)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, how: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, how)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


# The tests of the queue run their workers at the test's own nice (the default nice, 10, is checked by test_jobs'
# test_worker_with_two_processes_grades_and_stops_them_on_sigterm): niced, a worker beside the suite's other
# processes took, at load 20, 7-12 s to start instead of 3-4 s and about 4 s to stop instead of under 1 s, for
# the same CPU time.
SAME_NICE = ("--nice", "0")


def Worker(url: str, program: tuple[str, ...] = ("-m", "chainrule")) -> Process:
    """`chainrule worker --concurrency 1` at the test's nice, ready once it says it is grading (``program``: what
    runs the CLI)."""
    return Process(url, ["worker", "--concurrency", "1", *SAME_NICE, *FAST_WORKER], "is grading", program=program)


class Class:
    """A class in its own PostgreSQL schema, its web app in process with the queued grader."""

    def __init__(self, url: str, **grader_options) -> None:
        self.url = url
        self.store = open_store(database=url, fuzzing=False)
        self.accounts = Accounts(self.store, hasher=FAST_HASHER)
        from chainrule.classes.graded_runs import QueuedRuns

        self.runs = QueuedRuns(self.store, url, **grader_options)
        self.app = create_class_app(self.store, accounts=self.accounts, runs=self.runs,
                                    hosts=["class.example.org"])
        self.physics = self.accounts.create_class("Physics")
        self.workers: list[Process] = []

    def learner(self, name: str) -> TestClient:
        client = TestClient(self.app, base_url=BASE, follow_redirects=False)
        invite = self.physics.invite_token
        page = client.get(f"/join/{invite}")
        answer = client.post(f"/join/{invite}", data={"csrf": csrf_of(page.text), "name": name, "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        client.learner_id = client.get("/api/class/me").json()["id"]
        client.class_store = self.store  # wait_for reads the job's row between the page's questions
        return client

    def worker(self, program: tuple[str, ...] = ("-m", "chainrule")) -> Process:
        self.workers.append(Worker(self.url, program))
        return self.workers[-1]

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.runs.close()
        self.store.close()


def run(client: TestClient, source: str = SOLUTION, key: str | None = None):
    headers = {"X-CSRF-Token": client.cookies.get("chainrule_csrf", ""), "X-Chainrule-Run": key or uuid.uuid4().hex}
    return client.post("/api/grade", json={"exercise": EXERCISE, "language": "python", "source": source},
                       headers=headers)


def wait_for(client: TestClient, job: int, states=(GRADED, ENDED)) -> dict:
    """Follow the job as the page does, until it reaches one of ``states``: the page's answer is asked for
    whenever the class database shows the job in another state than the last answer said, and at the page's
    own pace (the answer's poll_after) besides, for what only asking does (a run past its deadline ends when
    asked about). In between, a learner of a Class has the job's row read from the store: a query, where a
    request through the app costs about 10 ms of this process's CPU (664 such polls took 6.4 s of
    test_jobs.py's). Another client (a real server's) is asked every 0.1 s."""
    store = getattr(client, "class_store", None)
    deadline = time.monotonic() + WAIT_SECONDS
    asked_at, said, answer = -WAIT_SECONDS, None, None
    while time.monotonic() < deadline:
        seen = None if store is None else _job_state(store, job)
        pace = answer.json().get("poll_after", 1.0) if answer is not None else 0.0
        if store is None or seen != said or time.monotonic() - asked_at >= pace:
            answer = client.get(f"/api/jobs/{job}")
            assert answer.status_code == 200, answer.text
            asked_at, said = time.monotonic(), answer.json()["state"]
            if said in states:
                return answer.json()
        time.sleep(0.1)
    raise AssertionError(f"job {job} did not reach {states}: {answer.json() if answer is not None else None}")


def _job_state(store, job: int) -> str:
    return store.database.read(lambda conn: conn.execute(
        "SELECT state FROM grading_jobs WHERE id = ?", (job,)).fetchone())[0]


def job_row(school: Class, job: int) -> tuple:
    return school.store.database.read(lambda conn: conn.execute(
        "SELECT state, attempts, worker FROM grading_jobs WHERE id = ?", (job,)).fetchone())


def submissions(school: Class, learner_id: int) -> int:
    return school.store.for_learner(learner_id).submission_count()
