"""Correct code is never blamed for a busy server (docs/grading.md, "A busy machine").

The learner's limits are what their code used (CPU time, memory, output); the wall clock is only a hang guard,
and a run that reaches it while it waited for a core is given more time or ends as 'server-busy', which is not
a verdict on the code and counts for nothing. With CPU burners keeping every core busy (tests/burners.py: two
per core, each in its own session; here, on the one core the test keeps to), the reference solutions pass at
the nice the servers grade at, in `chainrule check` (Python, JavaScript and TypeScript: the one TypeScript run,
the costliest), in a real `chainrule serve` (SQLite) and through a real `chainrule worker` (PostgreSQL); an
endless loop still ends at its CPU limit, though it reaches its hang guard first and is given more time, and
code that waits still ends at the guard as the learner's timeout.
A starved run is made deterministic with a CPU quota of 1 % on the run's cgroup: it is the server's delay,
never kept as a run, and three of them do not open the model solution.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from burners import burners
from chainrule.grading import LANGUAGES, SERVER_BUSY, default_limits, grade, grader, isolation_report, reference_source
from chainrule.grading.sandbox import cgroups
from chainrule.grading.sandbox.usage import Usage, starved
from chainrule.lessons.help import solution_unlocked
from chainrule.turns import GRADING_NICE

REPO = Path(__file__).resolve().parents[1]
EXERCISE, LESSON = "backward-order", "backprop"
MARKER = {"python": "# chainrule exercise: {}\n", "javascript": "// chainrule exercise: {}\n",
          "typescript": "// chainrule exercise: {}\n"}
# A generous bound that only catches a hang: a starved run ends within the guard's windows (2 minutes).
HANG_SECONDS = 600
# The endless loop's limits: 1 s of CPU, which the loop reaches only after its 1.5 s hang guard when it gets a
# third of a core (two burners beside it), so the guard must give it more time, up to 40 windows (1 minute).
LOOP_LIMITS = {"cpu_seconds": 1, "wall_seconds": 1.5, "starved_windows": 40}

pytestmark = pytest.mark.timeout(HANG_SECONDS)

CPU_LIMIT = isolation_report()["layers"].get("cpu_limit")
needs_cpu_limit = pytest.mark.skipif(not CPU_LIMIT, reason="a starved run is made with the run cgroup's CPU quota, "
                                                           "which this machine cannot set")


@pytest.fixture
def one_core():
    """This test and every process it starts (the grader, its sandbox, a server, a worker, the burners) keep
    to one core: that core is as busy as a machine whose every core is, while the rest of the suite's workers
    keep the other cores (burners on all of them would slow every test running beside this file)."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("this system cannot keep a process to one core (os.sched_setaffinity)")
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


@pytest.fixture
def busy_machine(one_core):
    with burners(per_core=2) as started:  # two burners on the one core this test may use
        yield started


# ---------------------------------------------------------------- the rule, with numbers made by hand


def test_the_starvation_rule_tells_waiting_for_a_core_from_waiting_for_something_else():
    # 20 s at the guard, one core allowed. A TypeScript check that got a twentieth of a core: starved.
    assert starved(Usage(ran=1.0, waited=19.0), elapsed=20.0, cores=1.0)
    # Code that sleeps neither runs nor waits for a core: its own timeout.
    assert not starved(Usage(ran=0.05, waited=0.01), elapsed=20.0, cores=1.0)
    # Sixty-four spinners sharing the run's own core got all of it: not the machine's delay.
    assert not starved(Usage(ran=20.0, waited=1260.0), elapsed=20.0, cores=1.0)
    # The limits of the rule: a quarter of the time waiting, under half the cores used.
    assert starved(Usage(ran=9.9, waited=5.0), elapsed=20.0, cores=1.0)
    assert not starved(Usage(ran=10.0, waited=10.0), elapsed=20.0, cores=1.0)
    assert not starved(Usage(ran=1.0, waited=4.9), elapsed=20.0, cores=1.0)


# ---------------------------------------------------------------- a busy machine


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_reference_solutions_pass_at_the_servers_grading_nice_while_burners_keep_every_core_busy(
        busy_machine, tmp_path, language):
    path = tmp_path / f"solution.{LANGUAGES[language]}"
    path.write_text(MARKER[language].format(EXERCISE) + reference_source(EXERCISE, language), encoding="utf-8")
    checked = subprocess.run(["nice", "-n", str(GRADING_NICE), sys.executable, "-m", "chainrule", "check", str(path),
                              "--json"], cwd=REPO, capture_output=True, text=True, timeout=HANG_SECONDS)
    result = json.loads(checked.stdout)
    assert (result["verdict"], checked.returncode) == ("passed", 0), result["message"]


def test_an_endless_loop_is_still_stopped_by_its_cpu_limit_on_a_busy_machine(busy_machine):
    source = "def neuron_grads(x, w, b, out, grad):\n    while True:\n        pass\n"
    limits = dataclasses.replace(default_limits("python"), **LOOP_LIMITS)
    result = grade("neuron-grads", "python", source, limits=limits)
    assert result["verdict"] == "cpu-limit", result["message"]
    assert "more than 1 second of CPU time" in result["message"]


def test_code_that_waits_forever_is_still_the_learners_timeout_on_a_busy_machine(busy_machine):
    # A guard of 1.5 s, as the endless loop's: the burners spin all the while the code sleeps.
    source = "import time\ndef neuron_grads(x, w, b, out, grad):\n    time.sleep(10_000)\n"
    limits = dataclasses.replace(default_limits("python"), wall_seconds=1.5)
    result = grade("neuron-grads", "python", source, limits=limits)
    assert result["verdict"] == "timeout" and "within 1.5 seconds" in result["message"], result["message"]


def test_serve_and_a_worker_pass_a_reference_while_burners_keep_every_core_busy(postgres_cluster, one_core):
    """benchmarks/bench_starved.py on one exercise in Python (TypeScript, the costliest run, is checked once,
    above): a class in SQLite graded by `chainrule serve`, a class in PostgreSQL graded by `chainrule worker`,
    each with its own burners (two per core, on the one core the benchmark may use here)."""
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_starved.py"), "--exercises", EXERCISE,
                           "--languages", "python", "--postgres", postgres_cluster],
                          cwd=REPO, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0 and "2 of 2 runs passed" in done.stdout, done.stdout + done.stderr[-3000:]


# ---------------------------------------------------------------- a starved run, made so


@pytest.fixture
def starving(monkeypatch):
    """Every run's cgroup gets 1 ms of CPU per 100 ms (the kernel's smallest quota) while its limits still
    say one core, and the guard is 1 s, twice: a run cannot finish and ends as the server's delay."""
    usual = grader.default_limits
    monkeypatch.setattr(cgroups, "cpu_quota_us", lambda limits: 1000)
    monkeypatch.setattr(grader, "default_limits", lambda language: dataclasses.replace(
        usual(language), wall_seconds=1.0, starved_windows=2))


@needs_cpu_limit
def test_a_starved_run_is_the_servers_delay_and_three_of_them_do_not_open_the_model_solution(starving, tmp_path):
    from chainrule.web import create_app

    app = create_app("t0ken-starved", tmp_path / "data", port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765", headers={"X-Chainrule-Token": "t0ken-starved"}) as client:
        for _ in range(3):
            # TypeScript: its compiler needs far more CPU than a starved run gets (a small Python reference
            # can finish in the 20-odd ms that 1 ms per 100 ms, with the kernel's slack, gives in 2 s).
            answer = client.post("/api/grade", json={"exercise": EXERCISE, "language": "typescript",
                                                     "source": reference_source(EXERCISE, "typescript")})
            result = answer.json()
            assert (answer.status_code, result["verdict"], result["status"]) == (200, SERVER_BUSY, "error")
            assert result["saved"] is False and result["tests"] == []
            assert "does not count as a try" in result["message"]
        solution = client.get(f"/api/lessons/{LESSON}/exercises/{EXERCISE}/solution").json()
    app.state.services.close()
    assert (solution["unlocked"], solution["failed_runs"]) == (False, 0)


@needs_cpu_limit
def test_a_starved_run_on_a_worker_ends_ungraded_and_counts_for_nothing(starving, store_place):
    from chainrule.classes.graded_runs import job_answer
    from chainrule.commands.worker import _grade_turn
    from chainrule.progress import open_store
    from chainrule.progress.run_jobs import ENDED, RunJobs

    store = open_store(**store_place("class"), fuzzing=False)
    try:
        jobs = RunJobs(store)
        for turn in range(3):
            job, queued = jobs.submit(7, EXERCISE, "typescript", reference_source(EXERCISE, "typescript"),
                                      uuid.uuid4().hex)
            _grade_turn(jobs, 100 + turn, "host:1", hand_on=lambda job_id, other: pytest.fail(
                f"run {job_id} was handed on to lessons {other}: the worker and the run share the built-in lessons"))
            ended = job_answer(jobs.status(7, job))
            assert ended["state"] == ENDED and ended["result"]["verdict"] == SERVER_BUSY, ended
            assert ended["result"]["saved"] is False and "not a verdict on your code" in ended["result"]["message"]
        learner = store.for_learner(7)
        assert learner.submission_count() == 0 and learner.failed_runs(EXERCISE) == 0
        assert not solution_unlocked(LESSON, learner.failed_runs(EXERCISE), confirmed=False)
    finally:
        store.close()
