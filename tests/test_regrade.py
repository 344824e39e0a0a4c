"""Regrading an exercise after its cases changed (issue 29 item 8): each learner's latest (or best) run graded
again through the class's one seam (this process's sandbox on SQLite; the queue and a real `chainrule
worker` on PostgreSQL), a before/after table of who would change standing, idempotent, applied and reverted.

"The cases changed" is played by runs kept with the verdict an older version of the cases gave: Bea's and
Cal's code forgets tanh's derivative (n's gradient taken as 1), which the current cases fail, but it was
kept as a pass. The real grader decides every verdict after."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from chainrule import lessons
from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts, ClassError
from chainrule.classes.graded_runs import InProcessRuns
from chainrule.classes.regrade import Regrades
from chainrule.grading import reference_source
from chainrule.progress import open_store
from chainrule.progress.finished import learner_work
from class_process import PASSWORD, REPO, run_coroutine
from class_world import FAST_HASHER
from reaper import spawn

EXERCISE = "neuron-grads"
OLD_PASS = {"status": "pass", "verdict": "passed", "tests": [{"status": "pass"}] * 3}
ADA_SEED = 777  # the seed of the hidden cases Ada's run was first graded on: a regrade draws the same ones
lessons.register_exercises()
RIGHT = reference_source(EXERCISE, "python")
FORGETS_TANH = RIGHT.replace("dn = 1 - out**2", "dn = 1")
assert FORGETS_TANH != RIGHT


def made_class(store):
    """Ada: the right code (a pass). Bea: the code that forgets tanh, kept as a pass. Cal: that code kept as
    a pass, then a syntax error (his latest run: a fail, passing 0 tests). Dan: no run."""
    accounts = Accounts(store, hasher=FAST_HASHER)
    made = accounts.create_class("Physics")
    people = {name: run_coroutine(accounts.join, made.invite_token, name, PASSWORD) for name in ("Ada", "Bea", "Cal", "Dan")}
    runs = {"Ada": [(RIGHT, OLD_PASS | {"hidden": {"seed": ADA_SEED, "count": 3}})], "Bea": [(FORGETS_TANH, OLD_PASS)],
            "Cal": [(FORGETS_TANH, OLD_PASS), ("def neuron_grads(:\n", {"status": "error", "tests": []})]}
    for name, kept in runs.items():
        for source, result in kept:
            store.for_learner(people[name].id).record_submission(EXERCISE, "python", source, result)
    return accounts, made.class_id, {name: account.id for name, account in people.items()}


def passed(store, learner: int) -> bool:
    work = store.database.read(lambda conn: learner_work(conn, "learner_id = ?", (learner,)))
    return EXERCISE in work[learner].passed


def count_runs(store) -> int:
    return store.database.read(lambda conn: conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0])


def regraded_seeds(store, people: dict[str, int], origin: str) -> dict[str, int]:
    """The hidden seed in each learner's result kept under `origin` (a regrade's runs)."""
    kept = store.database.read(lambda conn: conn.execute(
        "SELECT learner_id, result FROM submissions WHERE origin = ?", (origin,)).fetchall())
    names = {learner: name for name, learner in people.items()}
    return {names[learner]: (json.loads(result).get("hidden") or {}).get("seed") for learner, result in kept}


def rows(table: dict) -> dict[str, tuple]:
    return {row["name"]: (row["passed_before"], row["after"], row["changes"]) for row in table["rows"]}


def test_a_regrade_shows_who_changes_applies_once_and_reverts(tmp_path):
    store = open_store(tmp_path, fuzzing=False, file_name=CLASS_DATABASE)
    runs = InProcessRuns.for_class(store)
    try:
        accounts, class_id, people = made_class(store)
        regrades = Regrades(store, accounts, runs)
        latest = regrades.start(class_id, EXERCISE)
        table = run_coroutine(regrades.grade, class_id, latest)
        # Cal's latest run is the syntax error; Dan has none and is not in the table.
        assert rows(table) == {"Ada": (True, "pass", False), "Bea": (True, "fail", True), "Cal": (True, "error", True)}
        assert (table["state"], table["changes"]) == ("graded", 2)
        # Ada's run is graded again on the hidden cases of its first grading; a run kept before hidden cases
        # existed gets a seed of the regrade's own.
        seeds = regraded_seeds(store, people, f"regrade:{latest}")
        assert seeds["Ada"] == ADA_SEED and sorted(seeds) == ["Ada", "Bea", "Cal"]
        # Nothing counts until applied: everyone who passed still has.
        assert all(passed(store, people[name]) for name in ("Ada", "Bea", "Cal"))
        # Idempotent: starting again finds the same regrade; grading again grades nothing new.
        before = count_runs(store)
        assert regrades.start(class_id, EXERCISE) == latest
        assert run_coroutine(regrades.grade, class_id, latest)["rows"] == table["rows"] and count_runs(store) == before
        # The learners' latest code stays theirs (an editor is not given back an older run).
        assert store.for_learner(people["Cal"]).latest_code()[f"{EXERCISE}/python"] == "def neuron_grads(:\n"

        # Applying changes LMS scores: the score scan looks at the class's learners again (lti_work_seen).
        store.database.write(lambda conn: conn.execute(
            "INSERT INTO lti_work_seen (account_id, signature) VALUES (?, 'seen')", (people["Bea"],)))
        assert rows(regrades.apply(class_id, latest))["Bea"] == (True, "fail", True)
        assert store.database.read(lambda conn: conn.execute("SELECT COUNT(*) FROM lti_work_seen").fetchone()[0]) == 0
        assert (passed(store, people["Ada"]), passed(store, people["Bea"]), passed(store, people["Cal"])) == \
               (True, False, False)
        assert regrades.apply(class_id, latest)["state"] == "applied"  # twice: nothing more
        assert (passed(store, people["Ada"]), passed(store, people["Bea"])) == (True, False)
        regrades.revert(class_id, latest)
        assert all(passed(store, people[name]) for name in ("Ada", "Bea", "Cal"))
        with pytest.raises(ClassError, match="is reverted"):
            regrades.apply(class_id, latest)

        # "best": Cal's pass (the code that forgets tanh) rather than his latest syntax error.
        best = regrades.start(class_id, EXERCISE, pick="best")
        assert best != latest
        assert rows(run_coroutine(regrades.grade, class_id, best))["Cal"] == (True, "fail", True)
        assert store.for_learner(people["Cal"]).latest_code()[f"{EXERCISE}/python"] == "def neuron_grads(:\n"
        with pytest.raises(ClassError, match="no regrade"):
            regrades.table(class_id + 1, best)  # another class's id: not found
    finally:
        runs.close()
        store.close()


def test_on_postgresql_the_regrade_goes_through_the_queue_to_a_worker(postgres_url, tmp_path):
    store = open_store(database=postgres_url, fuzzing=False)
    try:
        accounts, class_id, people = made_class(store)
    finally:
        store.close()
    env = {key: value for key, value in os.environ.items() if not key.startswith("CHAINRULE_")}
    env["CHAINRULE_DATABASE"] = postgres_url  # in the environment, never on a command line
    worker = spawn([sys.executable, "-m", "chainrule", "worker", "--concurrency", "1"], env=env, cwd=REPO,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def chainrule(*argv: str) -> str:
            done = subprocess.run([sys.executable, "-m", "chainrule", "class", *argv], env=env, cwd=REPO,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, done.stderr
            return done.stdout

        shown = chainrule("regrade", "Physics", EXERCISE)
        assert "Regrade 1 of neuron-grads (latest runs): graded; 2 learners would change standing" in shown
        assert [line.split() for line in shown.splitlines()[2:5]] == [
            ["Ada", "passed", "pass", "-"], ["Bea", "passed", "fail", "yes"], ["Cal", "passed", "error", "yes"]]
        assert "chainrule class regrade Physics --apply 1" in shown
        assert "graded; 2 learners would change" in chainrule("regrade", "Physics", EXERCISE)  # the same one
        assert "applied; 2 learners changed standing" in chainrule("regrade", "Physics", "--apply", "1")
        store = open_store(database=postgres_url, fuzzing=False)
        try:
            assert (passed(store, people["Ada"]), passed(store, people["Bea"])) == (True, False)
            # Ada's run graded again by the worker counts with the time of the run it grades (issue 39 item 2),
            # never the worker's or the regrade's own: a pass before a due date stays on time.
            kept = store.database.read(lambda conn: conn.execute(
                "SELECT origin, at FROM submissions WHERE learner_id = ? ORDER BY id", (people["Ada"],)).fetchall())
            assert [at for origin, at in kept if origin == ""] == [at for origin, at in kept if origin == "superseded:1"]
            jobs = store.database.read(lambda conn: conn.execute(
                "SELECT COUNT(*), MIN(worker) FROM grading_jobs WHERE request_key LIKE 'regrade-1-%'").fetchone())
            assert jobs[0] == 3 and jobs[1]  # three runs, each taken by the worker
            # The queued run carried Ada's first seed to the worker, whose grader drew the same hidden cases.
            assert regraded_seeds(store, people, "")["Ada"] == ADA_SEED
        finally:
            store.close()
        assert "reverted; every standing is as before it" in chainrule("regrade", "Physics", "--revert", "1")
    finally:
        worker.terminate()
        worker.wait(timeout=60)
