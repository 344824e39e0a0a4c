"""Credit from when the learner did the work (issue 39 items 1-3), on SQLite and PostgreSQL with the store's
clock set by the test (no sleeps): a run counts from when the server accepted it, not from when a worker or
this process's grader got to it; a regrade's run keeps the time of the run it grades again, and a reverted
regrade counts nowhere; a section is as late as the work that first finished it, so a re-save after the date
does not make it late.

The class: Europe/Berlin, 10 % less per day late, backprop due 14 March 2025 14:20 (13:20 UTC). Ada does all
of backprop at 12:00 UTC, but for one exercise, neuron-grads, which she sends at 14:12:50 Berlin (13:12:50
UTC), before the date. Every expected number is a hand count of backprop's 8 sections (01-03 reading, 04
predictions, 05 exercises, 06 quiz, 07 explanation, 08 recap): all on time is 8; 05 and 08 one day late is
6 + 2 x 0.9 = 7.8."""

from __future__ import annotations

import asyncio
import csv
import io
import os
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

from chainrule import lessons
from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts
from chainrule.classes.deadlines import Deadlines
from chainrule.classes.graded_runs import InProcessRuns, QueuedRuns, Submission
from chainrule.classes.lti_scores import lesson_score
from chainrule.classes.regrade import Regrades
from chainrule.classes.report import ClassReport, csv_text
from chainrule.grading import configure_concurrency, gate, reference_source
from chainrule.progress import open_store
from chainrule.progress.run_jobs import GRADED, RunJobs
from class_process import PASSWORD, REPO, run_coroutine
from class_world import FAST_HASHER
from reaper import spawn

PASS = {"status": "pass", "verdict": "passed", "tests": []}
SHAPE = lessons.lesson_shape("backprop")
EXERCISE = "neuron-grads"
SOLUTION = reference_source(EXERCISE, "python")
WORK = datetime(2025, 3, 14, 12, 0, tzinfo=timezone.utc)
SENT = datetime(2025, 3, 14, 13, 12, 50, tzinfo=timezone.utc)  # 14:12:50 in Berlin, 7 minutes before the date
AFTER = datetime(2025, 3, 14, 13, 21, tzinfo=timezone.utc)  # 14:21 in Berlin: the date has passed
WAIT_SECONDS = 120  # only catches a hang


class Clock:
    """The store's clock, set by the test."""

    def __init__(self, now: datetime = WORK) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def open_class(place: dict, clock: Clock):
    """A class in Europe/Berlin, 10 % a day, backprop due 2025-03-14 14:20; its learner Ada."""
    store = open_store(**place, clock=clock, fuzzing=False, file_name=CLASS_DATABASE)
    accounts = Accounts(store, hasher=FAST_HASHER)
    made = accounts.create_class("Physics")
    ada = run_coroutine(accounts.join, made.invite_token, "Ada", PASSWORD)
    deadlines = Deadlines(store, accounts)
    deadlines.set_policy(made.class_id, time_zone_name="Europe/Berlin", late="10%")
    deadlines.set_due(made.class_id, "backprop", "2025-03-14 14:20")
    JOINING[made.class_id] = made.invite_token
    return store, accounts, deadlines, made.class_id, ada.id


JOINING: dict[int, str] = {}  # each class's invite


def join(accounts: Accounts, class_id: int, name: str) -> int:
    return run_coroutine(accounts.join, JOINING[class_id], name, PASSWORD).id


def all_but(view, clock: Clock, *, exercise: str | None = EXERCISE, explain: bool = True) -> None:
    """Every piece of backprop at WORK (12:00 UTC), but ``exercise`` (and the explanation unless ``explain``)."""
    clock.now = WORK
    for key in SHAPE["predictions"]:
        view.save_prediction("backprop", key, 1.0, True)
    for other in SHAPE["exercises"]:
        if other != exercise:
            view.record_submission(other, "python", "# mine", PASS)
    for question in SHAPE["quiz"]:
        view.answer_question("backprop", question, "1", True)
    if explain:
        view.save_explanation("backprop", "from the output back, node by node", [])


def credit(deadlines: Deadlines, class_id: int, learner: int) -> dict:
    return deadlines.credit(class_id)[learner]["backprop"]


def book_row(store, accounts, class_id: int) -> dict:
    rows = list(csv.DictReader(io.StringIO(csv_text(ClassReport(store, accounts).gradebook(class_id)))))
    return rows[0]


def wait_until(condition, what: str) -> None:
    """Wait for a condition (a bound that only catches a hang)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"waited {WAIT_SECONDS} s for {what}"
        time.sleep(0.05)


def kept_times(store, learner: int, exercise: str) -> list[str]:
    return store.database.read(lambda conn: [row[0] for row in conn.execute(
        "SELECT at FROM submissions WHERE learner_id = ? AND exercise_id = ? ORDER BY id",
        (learner, exercise)).fetchall()])


# ---------------------------------------------------------------- item 1: the server's delay costs nothing


def test_a_run_sent_before_the_date_and_graded_by_a_worker_after_it_earns_full_credit_everywhere(postgres_url):
    """The workers are stopped while the date passes; a real `chainrule worker` grades the run later (its own
    clock is the system's, long after March 2025). The page's data, the gradebook CSV, `chainrule class
    gradebook` and the score an LMS is sent all say 8 of 8, not 7.8 with "late work: 1"."""
    clock = Clock()
    store, accounts, deadlines, class_id, ada = open_class({"database": postgres_url}, clock)
    runs = None
    try:
        all_but(store.for_learner(ada), clock)
        clock.now = SENT
        # The queue's own deadline is years long here: the test's clock is in 2025, the worker's is today.
        runs = QueuedRuns(store, postgres_url, deadline_seconds=5 * 365 * 86400.0)
        answer = runs.submit_now(Submission(ada, EXERCISE, "python", SOLUTION, "ada-click-1"))
        assert answer.pending
        job = int(answer.body["job"])
        clock.now = AFTER
        env = {key: value for key, value in os.environ.items() if not key.startswith("CHAINRULE_")}
        env["CHAINRULE_DATABASE"] = postgres_url
        worker = spawn([sys.executable, "-m", "chainrule", "worker", "--concurrency", "1"], env=env,
                       cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            jobs = RunJobs(store, deadline_seconds=5 * 365 * 86400.0)
            wait_until(lambda: jobs.status(ada, job)["state"] == GRADED, "the worker to grade the run")
        finally:
            worker.terminate()
            worker.wait(timeout=60)
        assert jobs.status(ada, job)["result"]["status"] == "pass"
        assert kept_times(store, ada, EXERCISE) == [SENT.isoformat()]

        mine = credit(deadlines, class_id, ada)
        assert (mine["credit"], mine["late_sections"], mine["late_work"]) == (8, 0, 0)
        # One credit function: the learner's page (mine), the CSV, the CLI and the LMS score all read it.
        assert deadlines.mine(accounts.account(ada), AFTER)["lessons"][0]["score_text"] == "8 of 8"
        row = book_row(store, accounts, class_id)
        assert (row["backprop: credit (of 8)"], row["backprop: late work"]) == ("8", "0")
        assert lesson_score("backprop", deadlines.credit_of([ada])[ada]) == (8.0, 8.0, True)
        shown = subprocess.run([sys.executable, "-m", "chainrule", "class", "gradebook", "Physics", "--csv"],
                               env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert shown.returncode == 0, shown.stderr
        cli_row = next(csv.DictReader(io.StringIO(shown.stdout)))
        assert (cli_row["backprop: credit (of 8)"], cli_row["backprop: late work"]) == ("8", "0")
    finally:
        if runs is not None:
            runs.close()
        store.close()


def test_a_run_that_waits_in_this_processs_waiting_room_past_the_date_counts_from_its_click(tmp_path):
    """A class in SQLite: the run waits for this process's one sandbox slot (held) while the date passes,
    then the real sandbox grades it. It counts from when it was sent: 8, not 7.8."""
    clock = Clock()
    store, accounts, deadlines, class_id, ada = open_class({"data_dir": tmp_path}, clock)
    runs = InProcessRuns.for_class(store)
    previous = configure_concurrency(slots=1, queue=4)
    try:
        all_but(store.for_learner(ada), clock)
        holder = gate().enter("someone else")  # the one slot is taken: Ada's run waits
        clock.now = SENT
        answers: list = []
        sent = threading.Thread(target=lambda: answers.append(asyncio.run(
            runs.submit(Submission(ada, EXERCISE, "python", SOLUTION, "ada-click-1")))))
        sent.start()
        try:
            wait_until(lambda: gate().waiting == 1, "Ada's run to wait for the slot")
            clock.now = AFTER
        finally:
            gate().leave(holder)
            sent.join(WAIT_SECONDS)
        assert answers and answers[0].body["status"] == "pass" and answers[0].body["saved"]
        assert kept_times(store, ada, EXERCISE) == [SENT.isoformat()]
        mine = credit(deadlines, class_id, ada)
        assert (mine["credit"], mine["late_work"]) == (8, 0)
    finally:
        configure_concurrency(slots=previous.slots, queue=previous.queue)
        runs.close()
        store.close()


# ---------------------------------------------------------------- item 2: regrades


def test_a_regrade_keeps_the_time_of_the_run_it_grades_and_a_reverted_one_counts_nowhere(tmp_path):
    """Ada passed every exercise on time; a regrade of neuron-grads two days after the date (the real sandbox
    grades her code again: still a pass) keeps her on time: 8, not 7.8. Bea's code, kept as a pass by older
    cases, fails the real ones: applied, she loses the pass; reverted, its failing run counts nowhere: not in
    the Exercises table's runs, its pass rates or its diagnoses."""
    clock = Clock()
    store, accounts, deadlines, class_id, ada = open_class({"data_dir": tmp_path}, clock)
    runs = InProcessRuns.for_class(store)
    try:
        bea = join(accounts, class_id, "Bea")
        all_but(store.for_learner(ada), clock)
        store.for_learner(ada).record_submission(EXERCISE, "python", SOLUTION, PASS)
        forgets_tanh = SOLUTION.replace("dn = 1 - out**2", "dn = 1")
        assert forgets_tanh != SOLUTION
        store.for_learner(bea).record_submission(EXERCISE, "python", forgets_tanh, PASS)
        assert credit(deadlines, class_id, ada)["credit"] == 8

        def exercise_row() -> dict:
            return next(row for row in ClassReport(store, accounts).overview(class_id)["exercises"]
                        if row["exercise_id"] == EXERCISE)

        before = exercise_row()
        assert (before["runs"], before["learners_passed"], before["diagnoses"]) == (2, 2, [])
        clock.now = AFTER + timedelta(days=2)
        regrades = Regrades(store, accounts, runs)
        regrade = regrades.start(class_id, EXERCISE)
        table = run_coroutine(regrades.grade, class_id, regrade)
        assert {row["name"]: row["after"] for row in table["rows"]} == {"Ada": "pass", "Bea": "fail"}
        regrades.apply(class_id, regrade)
        assert kept_times(store, ada, EXERCISE)[-1] == WORK.isoformat()  # the regraded run's time
        mine = credit(deadlines, class_id, ada)
        assert (mine["credit"], mine["late_work"]) == (8, 0)
        applied = exercise_row()
        assert (applied["runs"], applied["learners_passed"], len(applied["diagnoses"])) == (2, 1, 1)
        regrades.revert(class_id, regrade)
        assert exercise_row() == before
        assert credit(deadlines, class_id, ada)["credit"] == 8
    finally:
        runs.close()
        store.close()


# ---------------------------------------------------------------- item 3: first finished


def test_a_re_save_after_the_date_does_not_make_an_on_time_section_late(store_place):
    """Ada finished everything on time; after the date she fixes a typo in her explanation, changes a
    prediction and answers a quiz question again: still 8, nothing late. A learner who writes the
    explanation first after the date is late all the same (7.8: 07 and 08 one day late)."""
    clock = Clock()
    store, accounts, deadlines, class_id, ada = open_class(store_place("class"), clock)
    try:
        view = store.for_learner(ada)
        all_but(view, clock, exercise=None)
        clock.now = AFTER + timedelta(hours=3)
        view.save_explanation("backprop", "from the output back, node by node (fixed a typo)", [])
        view.save_prediction("backprop", SHAPE["predictions"][0], 2.0, False)
        view.answer_question("backprop", SHAPE["quiz"][0], "2", False)
        mine = credit(deadlines, class_id, ada)
        assert (mine["credit"], mine["late_sections"], mine["late_work"]) == (8, 0, 0)

        cal = join(accounts, class_id, "Cal")
        late = store.for_learner(cal)
        all_but(late, clock, exercise=None, explain=False)
        late.save_explanation("backprop", "", [])  # an empty box saved on time: not written
        clock.now = AFTER + timedelta(hours=3)
        late.save_explanation("backprop", "written after the date", [])
        clock.now = AFTER + timedelta(hours=5)
        late.save_explanation("backprop", "written after the date, then fixed", [])
        theirs = credit(deadlines, class_id, cal)
        assert (theirs["credit"], theirs["late_sections"], theirs["late_work"]) == (7.8, 2, 1)
    finally:
        store.close()
