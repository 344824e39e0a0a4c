"""Graded runs as jobs (issue 23) with the real parts: PostgreSQL (the session's throwaway cluster),
procrastinate's queue, `chainrule worker` and `chainrule serve` as separate processes, the real sandbox.

Faults: a worker killed with kill -9 mid-run, the web process killed and started again, the database
unreachable for a moment, a burst from one learner, a run past its deadline.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chainrule.classes.accounts import Accounts
from chainrule.progress import open_store
from chainrule.progress.run_jobs import ENDED, GRADED, MAX_STARTS, RUNNING, RunJobs
from chainrule.web.routes_class import create_class_app
from class_process import create_class
from class_world import BASE, FAST_HASHER, PASSWORD, csrf_of, send
from job_process import (
    EXERCISE,
    FAST_WORKER,
    REPO,
    SOLUTION,
    WAIT_SECONDS,
    Class,
    Process,
    Worker,
    env_for,
    job_row,
    run,
    submissions,
    wait_for,
)
from lti_world import cli
from postgres_cluster import new_postgres_schema  # not via conftest: tests/browser has a conftest too


@pytest.fixture
def school(postgres_cluster):
    made = Class(new_postgres_schema(postgres_cluster))
    yield made
    made.close()


# ------------------------------------------------------------------------------------------------ tests


def test_a_run_waits_in_the_queue_then_a_worker_process_grades_it_once(school):
    ada = school.learner("Ada")
    key = uuid.uuid4().hex
    ticket = run(ada, key=key)
    assert ticket.status_code == 202, ticket.text
    assert ticket.json()["state"] == "queued" and ticket.json()["position"] == 1
    job = ticket.json()["job"]
    assert run(ada, key=key).json()["job"] == job  # the same click sent again: the same run
    assert [entry["job"] for entry in ada.get("/api/jobs").json()["jobs"]] == [job]  # what a reload resumes
    assert submissions(school, ada.learner_id) == 0  # nothing graded in the web process

    worker = school.worker()
    done = wait_for(ada, job)
    assert done["state"] == GRADED and done["result"]["status"] == "pass" and done["result"]["saved"] is True
    assert job_row(school, job)[2].endswith(f":{worker.pid}")
    assert submissions(school, ada.learner_id) == 1
    assert ada.get("/api/progress/backprop").json()["results"][f"{EXERCISE}/python"]["status"] == "pass"
    assert ada.get("/api/jobs").json()["jobs"] == []
    # Another learner cannot watch Ada's run.
    assert school.learner("Bea").get(f"/api/jobs/{job}").status_code == 404


def test_a_burst_from_one_learner_is_queued_up_to_the_bound_and_then_answered_clearly(postgres_cluster):
    school = Class(new_postgres_schema(postgres_cluster), max_open=3)
    try:
        ada, bea = school.learner("Ada"), school.learner("Bea")
        answers = [run(ada) for _ in range(5)]
        assert [answer.status_code for answer in answers] == [202, 202, 202, 200, 200]
        assert [answer.json()["position"] for answer in answers[:3]] == [1, 2, 3]
        refused = answers[3].json()
        assert refused["verdict"] == "busy" and refused["saved"] is False
        assert "already have 3 runs waiting" in refused["message"]
        # Others are not held back by Ada's burst: learners take turns, and Bea goes next.
        assert run(bea).json()["position"] == 2
        # The page of a learner with a long queue still answers (progress, the list of runs).
        assert ada.get("/api/progress/backprop").status_code == 200
        assert len(ada.get("/api/jobs").json()["jobs"]) == 3
    finally:
        school.close()


# A worker whose gradings wait until the file HELD_UNTIL names exists (then grade as usual): a run it has taken
# stays running, mid-run, for as long as the test needs, where a run that sleeps in the sandbox must guess a length.
HELD = """
import os, sys, time
import chainrule.grading as grading
grade = grading.grade
def held(*args, **kwargs):
    while not os.path.exists(os.environ["HELD_UNTIL"]):
        time.sleep(0.05)
    return grade(*args, **kwargs)
grading.grade = held
from chainrule.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_worker_killed_mid_run_loses_nothing_and_the_run_counts_once(school, tmp_path, monkeypatch):
    """The run goes back to the queue once its worker has been silent for --stalled-after, and the idle
    worker is told at once (a NOTIFY, as for a new job), not at its next poll (issue 27: the 36-42 s). The
    workers hold the run they take until the first is killed."""
    import json

    import psycopg

    monkeypatch.setenv("HELD_UNTIL", str(tmp_path / "killed"))
    ada = school.learner("Ada")
    first, second = school.worker(("-c", HELD)), school.worker(("-c", HELD))
    job = run(ada).json()["job"]
    wait_for(ada, job, states=(RUNNING,))
    taken_by = int(job_row(school, job)[2].rsplit(":", 1)[1])
    queue_job = school.store.database.read(lambda conn: conn.execute(
        "SELECT queue_job_id FROM grading_jobs WHERE id = ?", (job,)).fetchone()[0])
    with psycopg.connect(school.url, autocommit=True) as listener:
        listener.execute('LISTEN "procrastinate_queue_v1#grading"')
        os.killpg(taken_by, signal.SIGKILL)
        (tmp_path / "killed").touch()
        survivor = second if taken_by == first.pid else first
        done = wait_for(ada, job)
        told = []
        for note in listener.notifies(timeout=WAIT_SECONDS):  # the notices sent meanwhile, until the one asked for
            told.append(json.loads(note.payload))
            if {"type": "job_inserted", "job_id": queue_job} in told:
                break
    state, attempts, worker = job_row(school, job)
    assert done["result"]["status"] == "pass", done
    assert (state, attempts) == (GRADED, 2) and worker.endswith(f":{survivor.pid}")
    assert {"type": "job_inserted", "job_id": queue_job} in told
    assert submissions(school, ada.learner_id) == 1
    assert school.store.for_learner(ada.learner_id).failed_runs(EXERCISE) == 0


def test_a_worker_grades_learners_in_fair_turns_not_first_come(school):
    """Two learners send two runs each, then Ada one: a worker process grades hers third, not fifth."""
    pip, pia, ada = school.learner("Pip"), school.learner("Pia"), school.learner("Ada")
    theirs = [run(learner).json()["job"] for learner in (pip, pip, pia, pia)]
    mine = run(ada).json()
    assert mine["position"] == 3
    school.worker()
    for client, job in [(pip, theirs[0]), (pip, theirs[1]), (pia, theirs[2]), (pia, theirs[3]), (ada, mine["job"])]:
        assert wait_for(client, job)["result"]["status"] == "pass"
    started = school.store.database.read(lambda conn: [row[0] for row in conn.execute(
        "SELECT id FROM grading_jobs ORDER BY started_ts, id").fetchall()])
    assert started == [theirs[0], theirs[2], mine["job"], theirs[1], theirs[3]]


def test_workers_join_and_leave_while_the_class_works(school):
    ada, bea = school.learner("Ada"), school.learner("Bea")
    first = school.worker()
    early = [run(ada).json()["job"] for _ in range(3)]
    second = school.worker()
    first.process.send_signal(signal.SIGTERM)  # the worker alone: it finishes the runs in hand, then stops
    assert first.process.wait(60) == 0
    late = [run(bea).json()["job"] for _ in range(3)]
    results = [wait_for(ada, job) for job in early] + [wait_for(bea, job) for job in late]
    assert [result["result"]["status"] for result in results] == ["pass"] * 6
    assert all(job_row(school, job)[2].endswith(f":{second.pid}") for job in late)
    assert all(job_row(school, job)[1] == 1 for job in early + late)  # none started twice
    assert submissions(school, ada.learner_id) == 3 and submissions(school, bea.learner_id) == 3


def test_a_run_the_queue_never_got_is_sent_by_a_worker(school):
    ada = school.learner("Ada")
    # Kept in the class database, but the web process stopped before handing it to the queue.
    job, _ = school.runs.jobs.submit(ada.learner_id, EXERCISE, "python", SOLUTION, "never-sent")
    school.worker()
    assert wait_for(ada, job)["result"]["status"] == "pass"
    assert submissions(school, ada.learner_id) == 1


def test_a_run_no_worker_takes_before_its_deadline_ends_with_a_clear_verdict(postgres_cluster):
    school = Class(new_postgres_schema(postgres_cluster), deadline_seconds=0.5)
    try:
        ada = school.learner("Ada")
        job = run(ada).json()["job"]
        done = wait_for(ada, job)
        assert done["state"] == ENDED and done["result"]["verdict"] == "expired"
        assert "before its deadline" in done["result"]["message"] and done["result"]["saved"] is False
        assert submissions(school, ada.learner_id) == 0
    finally:
        school.close()


def _socket_of(url: str) -> Path:
    folder = re.search(r"host=([^&]+)", url).group(1)
    return Path(folder) / ".s.PGSQL.5432"


def test_the_database_away_for_a_moment_loses_no_run(school):
    import psycopg

    ada = school.learner("Ada")
    worker = school.worker()
    place = _socket_of(school.url)
    hidden = place.with_name("away")
    with psycopg.connect(school.url, autocommit=True) as admin:
        place.rename(hidden)  # new connections fail, and every open one is ended: PostgreSQL is away
        try:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
            key = uuid.uuid4().hex
            away = run(ada, key=key)
            assert away.status_code == 503 and "cannot be reached" in away.json()["detail"], away.text
        finally:
            hidden.rename(place)
    # The page sends the same run again, as jobs.js does: it is queued once and graded by the same worker.
    ticket = run(ada, key=key)
    assert ticket.status_code == 202, ticket.text
    try:
        done = wait_for(ada, ticket.json()["job"])
    except AssertionError as error:  # say what the worker said meanwhile
        raise AssertionError(f"{error}\nworker output:\n{''.join(worker.lines)}") from None
    assert done["result"]["status"] == "pass" and worker.process.poll() is None
    assert submissions(school, ada.learner_id) == 1


def test_a_class_in_sqlite_has_no_jobs_and_grades_in_process(tmp_path):
    store = open_store(tmp_path, fuzzing=False, file_name="class.sqlite")
    try:
        accounts = Accounts(store, hasher=FAST_HASHER)
        app = create_class_app(store, accounts=accounts, hosts=["class.example.org"])
        physics = accounts.create_class("Physics")
        client = TestClient(app, base_url=BASE, follow_redirects=False)
        page = client.get(f"/join/{physics.invite_token}")
        client.post(f"/join/{physics.invite_token}", data={"csrf": csrf_of(page.text), "name": "Ada",
                                                           "password": PASSWORD})
        answer = send(client, "POST", "/api/grade", json={"exercise": EXERCISE, "language": "python",
                                                          "source": SOLUTION})
        assert answer.status_code == 200 and answer.json()["status"] == "pass" and answer.json()["saved"]
        assert client.get("/api/jobs").json() == {"queued": False, "jobs": [], "ungraded": []}
    finally:
        store.close()


# ------------------------------------------------------------------------------------------------ RunJobs


def test_a_result_delivered_twice_is_kept_once_and_a_run_started_too_often_ends(store_place):
    from chainrule.classes.graded_runs import job_answer, keep_graded_job

    store = open_store(**store_place("class"), fuzzing=False)
    try:
        jobs = RunJobs(store)
        job, queued = jobs.submit(7, EXERCISE, "python", SOLUTION, "click-1")
        assert queued and jobs.submit(7, EXERCISE, "python", SOLUTION, "click-1") == (job, True)
        taken = jobs.start(101, "host:1")  # queue job 101 takes the one run there is
        assert taken.id == job
        result = {"status": "fail", "verdict": "failed", "tests": []}
        assert keep_graded_job(jobs, taken, result) is not None
        assert keep_graded_job(jobs, taken, result) is None  # a second worker finishing the same run
        learner = store.for_learner(7)
        assert learner.submission_count() == 1 and learner.failed_runs(EXERCISE) == 1
        assert jobs.start(102, "host:2") is None  # graded: nothing left to take

        again, _ = jobs.submit(7, EXERCISE, "python", SOLUTION, "click-2")
        for _ in range(MAX_STARTS):  # queue job 201 handed back each time its worker dies mid-run
            assert jobs.start(201, "host:dies").id == again
        assert jobs.start(201, "host:3") is None
        ended = job_answer(jobs.status(7, again))
        assert ended["state"] == ENDED and ended["result"]["verdict"] == "crashed"
        assert ended["result"]["saved"] is False and "stopped 2 times" in ended["result"]["message"]
        assert learner.submission_count() == 1
    finally:
        store.close()


def test_workers_take_learners_in_fair_turns_not_first_come(store_place):
    """Two learners send three runs each, then Ada one: her run is third in line, not seventh, and
    queue jobs take runs in that order whichever job was sent for which run (issue 27, items 8 and 9)."""
    store = open_store(**store_place("class"), fuzzing=False)
    try:
        jobs = RunJobs(store)
        sent = {name: [jobs.submit(learner, EXERCISE, "python", SOLUTION, f"{name}-{n}")[0] for n in range(3)]
                for name, learner in (("pip", 11), ("pia", 12))}
        ada, _ = jobs.submit(13, EXERCISE, "python", SOLUTION, "ada")
        assert jobs.position(ada) == 3 and jobs.status(13, ada)["position"] == 3
        assert jobs.submit(11, EXERCISE, "python", SOLUTION, "pip-3") == (None, False)  # the bound: 3 open
        taken = [jobs.start(1000 + turn, "host:1").id for turn in range(7)]
        assert taken == [sent["pip"][0], sent["pia"][0], ada, sent["pip"][1], sent["pia"][1],
                         sent["pip"][2], sent["pia"][2]]
        assert jobs.start(2000, "host:1") is None
    finally:
        store.close()


def test_a_run_is_started_at_the_time_it_was_taken_not_when_its_worker_began_waiting(postgres_cluster):
    """Two workers asking at once: the one that waited for the pick lock starts later, so the starts keep
    the order runs were taken in, which the next fair turn reads (a flake of the worker test above)."""
    from datetime import datetime, timedelta, timezone

    import psycopg

    from chainrule.progress.connection import ADVISORY_NAMESPACE
    from chainrule.progress.run_jobs import PICK_LOCK

    url = new_postgres_schema(postgres_cluster)
    moment = [datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)]
    store = open_store(database=url, fuzzing=False, clock=lambda: moment[0])
    try:
        jobs = RunJobs(store)
        job, _ = jobs.submit(11, EXERCISE, "python", SOLUTION, "pip-0")
        taken: list = []
        with psycopg.connect(url, autocommit=True) as other:  # another worker, in the middle of its pick
            other.execute("SELECT pg_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, PICK_LOCK))
            asking = threading.Thread(target=lambda: taken.append(jobs.start(1, "host:late")))
            asking.start()
            deadline = time.monotonic() + 30
            while not other.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                                    "AND objid = %s", (PICK_LOCK % 2**32,)).fetchone()[0]:
                assert time.monotonic() < deadline, "the worker never waited for the pick lock"
                time.sleep(0.01)
            moment[0] += timedelta(seconds=3)  # the other pick takes its time
            other.execute("SELECT pg_advisory_unlock(%s, %s)", (ADVISORY_NAMESPACE, PICK_LOCK))
            asking.join(30)
        assert taken[0].id == job
        started = store.database.read(lambda conn: conn.execute(
            "SELECT started_ts FROM grading_jobs WHERE id = ?", (job,)).fetchone()[0])
        assert started == moment[0].timestamp()
    finally:
        store.close()


# ------------------------------------------------------------------------------------------------ the web process


def test_the_web_process_killed_and_started_again_loses_no_run(postgres_cluster):
    import local_http

    url = new_postgres_schema(postgres_cluster)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    _, invite = create_class("Physics", base, env_for(url))
    serve = ["serve", "--port", str(port), "--workers", "1"]
    web = Process(url, serve, "sign in at")
    worker = None
    try:
        with local_http.client(base_url=base, timeout=30) as ada:
            page = ada.get(invite)
            assert ada.post(invite, data={"csrf": csrf_of(page.text), "name": "Ada", "password": PASSWORD}).status_code == 303
            key = uuid.uuid4().hex
            ticket = run(ada, key=key)
            assert ticket.status_code == 202, ticket.text
            job = ticket.json()["job"]

            web.stop(signal.SIGKILL)
            web = Process(url, serve, "sign in at")
            assert [entry["job"] for entry in ada.get("/api/jobs").json()["jobs"]] == [job]  # the page resumes it
            assert run(ada, key=key).json()["job"] == job  # the answer lost with the old process, sent again

            worker = Worker(url)
            done = wait_for(ada, job)
            assert done["state"] == GRADED and done["result"]["status"] == "pass"
            assert ada.get("/api/progress/backprop").json()["results"][f"{EXERCISE}/python"]["status"] == "pass"
        store = open_store(database=url)
        try:
            assert store.database.read(lambda conn: conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]) == 1
        finally:
            store.close()
    finally:
        if worker is not None:
            worker.stop()
        web.stop()


# ------------------------------------------------------------------------------------------------ the command


@pytest.mark.parametrize("argv, code, says", [
    ([], 2, "give the class's PostgreSQL database with --database"),
    (["--database", "postgresql:///x", "--concurrency", "0"], 2, "--concurrency must be between 1 and 256"),
    (["--database", "postgresql:///x", "--heartbeat", "40"], 2, "shorter than --stalled-after"),
    (["--database", "postgresql:///x", "--nice", "25"], 2, "--nice must be between 0 and 19"),
])
def test_worker_refuses_arguments_it_cannot_work_with_and_says_why(argv, code, says):
    """Refused before the worker does anything (run in this process: the command's output is under test)."""
    env = {key: value for key, value in os.environ.items() if key != "CHAINRULE_DATABASE"}
    done, _, error = cli("worker", *argv, env=env)
    assert done == code and says in error, error
    assert "Traceback" not in error


@pytest.mark.parametrize("argv, code, says", [
    (["--database", "postgresql://nobody@/none?host=/nonexistent"], 1, "cannot be reached"),
    (["--database", "postgresql://nobody@/none?host=/nonexistent", "--concurrency", "3"], 1, "cannot be reached"),
    (["--database", "postgresql:///x", "weak"], 2, "refusing to grade here"),
])
def test_worker_refuses_what_it_cannot_do_with_the_reason(argv, code, says):
    """As a process: a worker lowers its own priority before it reaches the database, and probes this host's
    sandbox once per process."""
    env = {key: value for key, value in os.environ.items() if key != "CHAINRULE_DATABASE"}
    if "weak" in argv:  # a host whose sandbox lacks a layer (here: bubblewrap turned off)
        argv = [item for item in argv if item != "weak"]
        env["CHAINRULE_SANDBOX_NO_BWRAP"] = "1"
    done = subprocess.run([sys.executable, "-m", "chainrule", "worker", *argv], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == code and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_worker_with_two_processes_grades_and_stops_them_on_sigterm(school):
    ada = school.learner("Ada")
    jobs = [run(ada).json()["job"] for _ in range(2)]
    supervisor = Process(school.url, ["worker", "--concurrency", "2", *FAST_WORKER], "2 processes grading")
    for job in jobs:
        assert wait_for(ada, job)["result"]["status"] == "pass"
    workers = {job_row(school, job)[2] for job in jobs}
    # At the default nice, and so is its session's scheduling group: Linux schedules each session as one group
    # and a nice counts only inside it (a group of its own at nice 0 would take a web server's share).
    if Path("/proc/self/autogroup").exists():  # a kernel with autogroups
        assert Path(f"/proc/{supervisor.pid}/autogroup").read_text().split()[-2:] == ["nice", "10"]
    assert {os.getpriority(os.PRIO_PROCESS, int(name.rsplit(":", 1)[1])) for name in workers} == {10}
    supervisor.process.send_signal(signal.SIGTERM)
    assert supervisor.process.wait(60) == 0
    for name in workers:  # the processes that graded are gone with it
        pid = int(name.rsplit(":", 1)[1])
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert submissions(school, ada.learner_id) == 2


def test_threads_that_come_and_go_leave_no_connections_open(postgres_cluster):
    """A server's pool threads end when idle and new ones start: each new thread's connection must not
    leave the ended threads' connections open (found as "too many clients" while a class polled its runs)."""
    import uuid

    import psycopg

    # A database of its own, so that only this store's connections are counted (not other tests' in the cluster).
    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(postgres_cluster, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    assert "@/postgres?" in postgres_cluster
    url = postgres_cluster.replace("@/postgres?", f"@/{name}?")
    store = open_store(database=url, fuzzing=False)
    with psycopg.connect(postgres_cluster, autocommit=True) as admin:
        def open_connections() -> int:
            return admin.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
                                 "AND datname = %s", (name,)).fetchone()[0]

        def settles_at_most(limit: int) -> int:
            # A closed connection's server process ends a moment after the client lets go (later still on
            # a busy machine), so the count is read until it is within the limit; a leak never gets there.
            deadline = time.monotonic() + 15
            while (count := open_connections()) > limit and time.monotonic() < deadline:
                time.sleep(0.05)
            return count

        before = open_connections()
        try:
            for _ in range(30):
                thread = threading.Thread(target=store.submission_count)
                thread.start()
                thread.join()
            # the last thread's, and the one that opened the store
            assert settles_at_most(before + 2) - before <= 2
        finally:
            store.close()
        assert settles_at_most(before) <= before


def test_a_graded_runs_result_is_kept_in_one_place_for_both_backends():
    """Issue 46 item 3: in process and queued, a result becomes a submission through classes/graded_runs.py's
    keep() alone (the worker's keep_graded_job passes the job's claim to it): no other module of the package
    calls the store's record_submission."""
    import ast
    import pathlib

    package = pathlib.Path(__file__).parents[1] / "src" / "chainrule"
    callers = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "record_submission" not in text:  # no call to it can be in this module: not worth parsing
            continue
        tree = ast.parse(text)
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls = [node for node in ast.walk(function) if isinstance(node, ast.Call)
                         and isinstance(node.func, ast.Attribute) and node.func.attr == "record_submission"]
                callers += [f"{path.relative_to(package)}:{function.name}"] * bool(calls)
    assert callers == ["classes/graded_runs.py:keep"], callers


# `chainrule worker` as the console script runs it, quiet_start.started watched (it still runs): what held when the
# worker's start ended (chainrule/quiet_start.py).
WATCHED_START = """
import gc, sys
from chainrule import quiet_start
from chainrule.cli import main

def collections():
    return sum(generation["collections"] for generation in gc.get_stats())

def watched(started=quiet_start.started):
    during = collections() - before
    started()
    print(f"collections while starting: {during}; collecting: {gc.isenabled()}; frozen: {gc.get_freeze_count()}",
          flush=True)

quiet_start.started = watched
before = collections()
sys.exit(main(sys.argv[1:]))
"""


def test_a_worker_starts_without_the_garbage_collector_and_grades_with_it(school):
    worker = Process(school.url, ["worker", "--concurrency", "1", "--nice", "0", *FAST_WORKER], "is grading",
                     program=("-c", WATCHED_START))
    school.workers.append(worker)
    said = "".join(worker.lines)
    assert "collections while starting: 0; collecting: True; frozen: " in said, said
    assert int(said.split("frozen: ", 1)[1].split()[0]) > 10_000, said
    ada = school.learner("Ada")
    ticket = run(ada)
    assert ticket.status_code == 202, ticket.text
    done = wait_for(ada, ticket.json()["job"])  # and it grades, with the collector on
    assert done["state"] == GRADED and done["result"]["status"] == "pass"
