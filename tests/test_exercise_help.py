"""Help for a stuck learner, through the real API: hints one at a time, the model solution behind
three stored runs that did not pass (graded for real in the sandbox) or an explicit confirm, and
starters that no longer give the answer away."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from chainrule.grading import exercise_cases, reference_source, starter_source
from chainrule.lessons import exercise_ids, get_lesson, lesson_data
from chainrule.progress import open_store
from chainrule.web import create_app

LESSON = "backprop"
TOKEN = "test-token-0123456789"
LANGUAGES = ("python", "javascript", "typescript")


@pytest.fixture
def client(tmp_path):
    app = create_app(TOKEN, tmp_path / "data", port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        test_client.headers.update({"X-Chainrule-Token": TOKEN})
        yield test_client
    app.state.services.close()


def base(exercise: str) -> str:
    return f"/api/lessons/{LESSON}/exercises/{exercise}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_local_gradients_starter_states_no_backward_rule(language):
    source = starter_source("local-gradients", language)
    compact = source.replace(" ", "")
    for rule in ("grad+=", "*out.grad", "data*out", "1-t", "1-out", "**2"):
        assert rule not in compact, rule
    assert source.count("TODO:") == 3  # the three empty bodies


def test_the_lesson_says_how_many_hints_and_when_the_solution_opens():
    lesson = get_lesson(LESSON)
    assert [e["hint_count"] for e in lesson["exercises"]] == [3, 3, 3]
    assert lesson["solution_after"] == 3
    assert "hints" not in repr(lesson["exercises"])  # the hints themselves come one at a time


def test_hints_come_one_at_a_time_and_state_no_answer(client):
    answers = set()
    for exercise in exercise_ids(LESSON):
        for case in exercise_cases(exercise):
            answers |= {f"{x:.4g}" for x in case.expected}
    answers -= {"0", "1", "2", "-0"}
    for exercise in exercise_ids(LESSON):
        for number in (1, 2, 3):
            hint = client.get(f"{base(exercise)}/hints/{number}").json()
            assert hint["number"] == number and hint["count"] == 3 and hint["html"].startswith("<p>")
            numbers = set(re.findall(r"-?\d+(?:\.\d+)?", re.sub(r"[xwzt]_?\d", "", hint["html"])))
            assert not numbers & answers, (exercise, number, numbers)
            assert numbers <= {"1", "2"}, (exercise, number, numbers)  # slope 1, a square
        missing = client.get(f"{base(exercise)}/hints/4")
        assert missing.status_code == 404 and "ask for 1 to 3" in missing.json()["detail"]
    assert client.get(f"{base('neuron-grads')}/hints/0").status_code == 422
    unknown = client.get(f"{base('nope')}/hints/1")
    assert unknown.status_code == 404 and "backward-order" in unknown.json()["detail"]


def test_the_solution_opens_after_three_stored_runs_that_did_not_pass(client):
    exercise = "neuron-grads"
    locked = client.get(f"{base(exercise)}/solution", params={"language": "javascript"}).json()
    assert locked == {"unlocked": False, "failed_runs": 0, "needed": 3, "language": "javascript", "source": None}
    passing = {"exercise": exercise, "language": "python", "source": reference_source(exercise, "python")}
    assert client.post("/api/grade", json=passing).json()["status"] == "pass"  # a pass does not count
    for run in (1, 2, 3):
        failing = {"exercise": exercise, "language": LANGUAGES[run - 1], "source": starter_source(exercise, LANGUAGES[run - 1])}
        assert client.post("/api/grade", json=failing).json()["status"] == "fail"
        body = client.get(f"{base(exercise)}/solution", params={"language": "typescript"}).json()
        assert body["failed_runs"] == run
        assert body["unlocked"] is (run >= 3)
    assert body["source"] == reference_source(exercise, "typescript")
    # Runs of one exercise do not open another's solution.
    other = client.get(f"{base('backward-order')}/solution").json()
    assert other["unlocked"] is False and other["failed_runs"] == 0


def test_a_confirm_opens_the_solution_at_once(client):
    body = client.get(f"{base('backward-order')}/solution", params={"confirm": "true", "language": "python"}).json()
    assert body["unlocked"] is True and body["failed_runs"] == 0
    assert body["source"] == reference_source("backward-order", "python")
    bad = client.get(f"{base('backward-order')}/solution", params={"language": "cobol"})
    assert bad.status_code == 422


def test_failed_runs_are_counted_per_exercise_from_the_store(tmp_path):
    store = open_store(tmp_path)
    try:
        assert store.failed_runs("local-gradients") == 0
        for status in ("fail", "error", "pass", "fail"):
            store.record_submission("local-gradients", "python", "x = 1\n", {"status": status})
        store.record_submission("neuron-grads", "python", "x = 1\n", {"status": "fail"})
        assert store.failed_runs("local-gradients") == 3
        assert store.failed_runs("neuron-grads") == 1
        with pytest.raises(ValueError):
            store.failed_runs("")
    finally:
        store.close()


def test_the_default_is_three_when_a_lesson_does_not_say():
    from chainrule.lessons.loader import SOLUTION_AFTER_DEFAULT

    assert SOLUTION_AFTER_DEFAULT == 3 == lesson_data(LESSON)["solution_after_failed_runs"]


def test_every_exercise_of_every_lesson_has_a_hint_ladder_and_a_model_solution(client):
    """Hints are a feature of the exercise folder: each built-in lesson's exercises serve theirs."""
    from chainrule.lessons import lesson_ids

    for lesson in lesson_ids():
        for exercise in get_lesson(lesson)["exercises"]:
            assert exercise["hint_count"] >= 3, (lesson, exercise["id"])
            hints = [client.get(f"/api/lessons/{lesson}/exercises/{exercise['id']}/hints/{n}").json()
                     for n in range(1, exercise["hint_count"] + 1)]
            assert all(h["html"].startswith("<p>") and "{{" not in h["html"] for h in hints)
            assert len({h["html"] for h in hints}) == len(hints)
            solution = client.get(f"/api/lessons/{lesson}/exercises/{exercise['id']}/solution",
                                  params={"confirm": "true"}).json()
            assert solution["source"] == reference_source(exercise["id"], "python")
