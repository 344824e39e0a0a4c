"""One seam for a graded run (issue 28, item 1): one admission policy, one result builder, one interface
the routes hold, and a page that learns from the server whether a run is queued.

- chainrule.turns: the per-learner bound and fair turns, for threads and event loops alike;
- every answer a page gets about a run (graded, refused, expired, lost its workers) has the one shape of
  grading.run_result, with "saved" and "store_error";
- the routes answer the same way in personal mode and in a class kept in SQLite (200 and the result), and
  GET /api/jobs tells any page whether runs are queued; the page reads no cookie to decide.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chainrule.classes.graded_runs import InProcessRuns, Submission, ended_result, job_answer, kept, refused
from chainrule.grading import configure_concurrency, gate, grade, reference_source
from chainrule.grading.grader import restore_concurrency
from chainrule.progress.run_jobs import CANNOT_GRADE, EXPIRED, STOPPED, poll_after
from chainrule.turns import BOUND, BUSY, Admission, fair_order
from chainrule.web.connections import KEEP_ALIVE_TIMEOUT

EXERCISE = "neuron-grads"
SOLUTION = reference_source(EXERCISE, "python")
JS = Path(__file__).resolve().parents[1] / "src" / "chainrule" / "web" / "static" / "js"


# ------------------------------------------------------------------------------------------------ the policy


def test_fair_order_is_round_robin_by_learner_not_first_come():
    waiting = [(1, "pip"), (2, "pip"), (3, "pip"), (4, "pia"), (5, "pia"), (6, "ada")]
    assert fair_order(waiting, {}) == [1, 4, 6, 2, 5, 3]
    # Pip was served last: everyone else goes first; a learner never served goes before one served.
    assert fair_order(waiting, {"pip": 9.0, "pia": 3.0}) == [6, 4, 1, 5, 2, 3]
    assert fair_order([(1, None), (2, None), (3, None)], {None: 1.0}) == [1, 2, 3]  # one learner: first come
    assert fair_order([], {}) == []


def test_a_waiting_page_asks_again_before_the_server_closes_its_kept_alive_connection():
    """A page far back in a long queue asks less often, but never as late as the server's keep-alive: a poll
    sent as the server closes the idle connection is lost and sent again (measured: 1,034 of 33,053 requests
    in the 400-learner benchmark when the longest pause was the keep-alive's 5 s)."""
    waits = [poll_after(position) for position in range(0, 5000)]
    assert waits[0] == waits[1] == 1.0 and max(waits) < KEEP_ALIVE_TIMEOUT
    assert waits == sorted(waits)  # further back: never asked sooner


def test_the_gate_bounds_a_learner_and_gives_the_next_turn_to_the_learner_served_longest_ago():
    gate_ = Admission(slots=1, queue=4, wait_seconds=30)
    first = gate_.enter("ada", bound=3)
    order: list[str] = []

    def wait_turn(owner: str) -> None:
        turn = gate_.enter(owner, bound=3)
        order.append(owner)
        gate_.leave(turn)

    threads = [threading.Thread(target=wait_turn, args=("ada",)) for _ in range(2)]
    for thread in threads:
        thread.start()
    while gate_.waiting < 2:
        threading.Event().wait(0.01)
    assert gate_.enter("ada", bound=3) == BOUND  # her fourth open run: refused at once
    assert gate_.open_runs("ada") == 3
    bea = threading.Thread(target=wait_turn, args=("bea",))
    bea.start()
    while gate_.waiting < 3:
        threading.Event().wait(0.01)
    gate_.leave(first)
    for thread in (*threads, bea):
        thread.join(10)
    assert order == ["bea", "ada", "ada"]
    assert gate_.running == gate_.waiting == 0 and gate_.open_runs("ada") == 0


def test_the_gate_refuses_past_its_waiting_room_and_takes_back_a_removed_learners_runs():
    gate_ = Admission(slots=1, queue=1, wait_seconds=30)
    holder = gate_.enter("ada")

    async def scenario() -> list:
        waiting = asyncio.create_task(gate_.enter_async("pip"))
        while gate_.waiting == 0:
            await asyncio.sleep(0)
        refused_now = await gate_.enter_async("bea")  # the slot runs and the waiting room is full
        taken_back = gate_.withdraw_owner("pip")  # Pip's account removed: his waiting run goes
        return [refused_now, taken_back, await waiting]

    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.extend(asyncio.run(scenario())))
    thread.start()
    thread.join(10)
    assert outcome == [BUSY, 1, BUSY]
    gate_.leave(holder)
    assert gate_.running == gate_.waiting == 0


# ------------------------------------------------------------------------------------------------ one shape


def test_every_answer_about_a_run_has_the_one_shape_of_a_result(grade_once):
    graded = kept(grade_once(EXERCISE, "python", SOLUTION), saved=True)
    run = Submission(7, EXERCISE, "python", SOLUTION)
    answers = [refused(run, BUSY, 3), refused(run, BOUND, 3)] + [
        ended_result(EXERCISE, "python", {"verdict": verdict, "detail": "no such exercise here"})
        for verdict in (EXPIRED, STOPPED, CANNOT_GRADE)]
    shape = set(graded) - {"duration_ms"}
    for answer in answers:
        assert set(answer) == shape and answer["isolation"] is None, answer  # it never ran
        assert answer["version"] == 3 and answer["status"] == "error" and answer["saved"] is False
        assert answer["tests"] == [] and answer["exercise"] == EXERCISE and answer["message"]
    assert [answer["verdict"] for answer in answers] == ["busy", "busy", "expired", "crashed", "error"]
    assert "You already have 3 runs waiting for the grader" in answers[1]["message"]
    assert "cannot grade it: no such exercise here" in answers[4]["message"]
    # A job's answer: its graded result kept, its ended result built here, nothing else of the store's.
    status = {"job": 1, "state": "ended", "exercise": EXERCISE, "language": "python", "ended": {"verdict": EXPIRED}}
    assert job_answer(status) == {key: value for key, value in status.items() if key != "ended"} | {
        "result": ended_result(EXERCISE, "python", {"verdict": EXPIRED})}


# ------------------------------------------------------------------------------------------------ the routes


@pytest.fixture
def personal_app(tmp_path):
    from chainrule.web.app import create_app

    return TestClient(create_app("t0ken", tmp_path / "data"), base_url="http://127.0.0.1",
                      headers={"X-Chainrule-Token": "t0ken"})


def test_the_page_learns_from_the_server_whether_runs_are_queued(personal_app):
    assert personal_app.get("/api/jobs").json() == {"queued": False, "jobs": [], "ungraded": []}
    assert personal_app.get("/api/jobs/1").status_code == 404
    answer = personal_app.post("/api/grade", json={"exercise": EXERCISE, "language": "python", "source": SOLUTION},
                               headers={"X-Chainrule-Run": "a-click"})
    assert answer.status_code == 200 and answer.json()["verdict"] == "passed" and answer.json()["saved"] is True
    # The page reads no cookie to decide: GET /api/jobs says whether runs wait for workers.
    script = (JS / "jobs.js").read_text()
    assert "document.cookie" not in script and "(await pageRuns()).queued" in script


def test_a_run_in_process_passes_one_gate_once_and_the_gate_knows_whose_it_is(tmp_path):
    """The web run takes its turn at grading.gate() itself and grades with grade_now(): while it runs, the
    gate counts it once, under its learner; a grade() from elsewhere in the process finds the same gate."""
    from chainrule.progress import open_store

    previous = configure_concurrency(slots=1, queue=0)
    store = open_store(tmp_path, file_name="class.sqlite")
    try:
        runs = InProcessRuns.for_class(store)
        seen: list = []

        async def scenario() -> dict:
            task = asyncio.create_task(runs.submit(Submission(5, EXERCISE, "python", "import time\ntime.sleep(2)\n"
                                                              + SOLUTION)))
            while gate().running == 0:
                await asyncio.sleep(0.01)
            seen.extend([gate().running, gate().open_runs(5),
                         await asyncio.to_thread(grade, EXERCISE, "python", SOLUTION)])
            return (await task).body

        result: list = []
        thread = threading.Thread(target=lambda: result.append(asyncio.run(scenario())))
        thread.start()
        thread.join(60)
        assert seen[:2] == [1, 1] and seen[2]["verdict"] == "busy"  # the one slot is the web run's
        assert result[0]["verdict"] == "passed" and result[0]["saved"] is False  # no account 5: kept nowhere
        assert gate().running == 0
    finally:
        restore_concurrency(previous)
        store.close()
