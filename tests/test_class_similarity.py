"""Similar code (classes/similarity.py, GET /api/class/similar), on SQLite and PostgreSQL with one class per
backend: near-copies (every name changed; functions reordered and comments changed) are flagged, solutions
written independently and the starter handed in as given are not, in either language; a learner asking is
refused; the cost bound leaves the oldest learners out and says so."""

from __future__ import annotations

import pytest

from chainrule.classes import similarity
from chainrule.grading import starter_source
from class_world import backend_world
from similar_code import COPIES, EXERCISE, SOLUTIONS, starter

PASS = {"status": "pass", "verdict": "passed", "tests": []}
FAIL = {"status": "fail", "verdict": "failed", "tests": []}
# Who hands in what (each learner's latest run counts: Kim's first run was a copy of Kahn's solution).
HANDED_IN = {"Stan": ("python", SOLUTIONS["stack"]), "Kay": ("python", SOLUTIONS["kahn"]),
             "Rex": ("python", SOLUTIONS["recursive"]), "Pam": ("python", SOLUTIONS["passes"]),
             "Kim": ("python", COPIES["kahn-renamed"]), "Sol": ("python", COPIES["stack-reordered"]),
             "Tom": ("python", None), "Tia": ("python", None), "Jo": ("javascript", None), "Jan": ("javascript", None)}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])  # conftest's STORE_BACKENDS, module-scoped
def world(request, tmp_path_factory):
    made = backend_world(request, tmp_path_factory, "similar")
    python_starter = starter()
    for name, (language, source) in HANDED_IN.items():
        made.join(made.physics.invite_token, name)
        learner = next(account for account in made.accounts.learners(made.physics.class_id) if account.name == name)
        runs = made.store.for_learner(learner.id)
        if name == "Kim":
            runs.record_submission(EXERCISE, "python", SOLUTIONS["kahn"], PASS)
        given = source if source is not None else (
            python_starter if language == "python" else starter_source(EXERCISE, language))
        runs.record_submission(EXERCISE, language, given, PASS if source else FAIL)
    return made


def pairs_of(answer: dict) -> set[frozenset[str]]:
    return {frozenset((pair["a"]["name"], pair["b"]["name"])) for pair in answer["pairs"]}


def test_copies_are_flagged_and_independent_or_starter_code_is_not(world):
    answer = world.physics_teacher.get(f"/api/class/similar?exercise={EXERCISE}")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert pairs_of(found) == {frozenset(("Kay", "Kim")), frozenset(("Stan", "Sol"))}
    assert found["learners"] == len(HANDED_IN) and found["left_out"] == 0
    for pair in found["pairs"]:
        assert pair["score"] >= similarity.SIMILAR_AT == found["similar_at"]
        assert {pair["a"]["source"], pair["b"]["source"]} <= {SOLUTIONS["kahn"], SOLUTIONS["stack"],
                                                              COPIES["kahn-renamed"], COPIES["stack-reordered"]}
        assert pair["a"]["run_id"] != pair["b"]["run_id"] and pair["a"]["status"] == "pass"
    kim = next(side for pair in found["pairs"] for side in (pair["a"], pair["b"]) if side["name"] == "Kim")
    assert kim["source"] == COPIES["kahn-renamed"]  # her latest run, not her first


def test_only_a_teacher_of_the_class_sees_it_and_bad_input_says_what_is_allowed(world):
    learner = world.ada.get(f"/api/class/similar?exercise={EXERCISE}")
    assert learner.status_code == 403, learner.text
    other = world.chemistry_teacher.get(f"/api/class/similar?exercise={EXERCISE}")
    assert other.status_code == 200 and other.json()["pairs"] == [] and other.json()["learners"] == 0
    unknown = world.physics_teacher.get("/api/class/similar?exercise=no-such-thing")
    assert unknown.status_code == 422 and "there is no exercise 'no-such-thing'" in unknown.text
    assert EXERCISE in unknown.text


def test_past_the_learner_cap_the_oldest_runs_are_left_out_and_counted(world, monkeypatch):
    monkeypatch.setattr(similarity, "MAX_LEARNERS", 3)
    found = world.physics_teacher.get(f"/api/class/similar?exercise={EXERCISE}").json()
    # The three latest runs: Jan's, Jo's and Tia's (starters): nothing similar among them.
    assert found["learners"] == 3 and found["left_out"] == len(HANDED_IN) - 3 and found["pairs"] == []
