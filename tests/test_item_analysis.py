"""Item analysis (classes/item_analysis.py, GET /api/class/items): on SQLite and PostgreSQL with one class per
backend, a class whose first tries are written by hand gives the counts, shares and discriminations computed
here independently (numpy's correlation of the hand-written matrix); a review asked with fresh numbers keeps
them; the learners behind an item are its triers, with their first runs; a learner asking is refused, bad
input says what is allowed. On a simulated class (2-parameter logistic, known parameters: tests/item_class.py)
the recovered difficulty and discrimination follow the truth and the planted hard value is the one flagged."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from chainrule import lessons
from chainrule.classes import item_analysis
from chainrule.lessons.fresh import draw_numbers
from class_world import backend_world, send
from item_class import HARD_LESSON, HARD_NAME, HARD_QUESTION, HARD_VALUE, LEARNERS, simulate_class

LESSON = "backprop"
QUESTIONS = ["product-gradient", "addition-node", "tanh-gradient"]
EXERCISE = "neuron-grads"
# First tries (1 right, 0 not) of each learner on the three questions and the exercise; None: not tried.
FIRST = {"Ada": [1, 1, 1, 1], "Bea": [1, 0, 1, 1], "Cal": [1, 1, 0, 0], "Dee": [0, 0, 1, 0],
         "Eve": [1, 0, 0, None], "Fay": [0, 0, 0, 0]}
PASS = {"status": "pass", "verdict": "passed", "tests": []}
FAIL = {"status": "fail", "verdict": "failed", "tests": []}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])  # conftest's STORE_BACKENDS, module-scoped
def world(request, tmp_path_factory):
    made = backend_world(request, tmp_path_factory, "items")
    for name in ("Cal", "Dee", "Eve", "Fay"):
        made.join(made.physics.invite_token, name)
    ids = {account.name: account.id for account in made.accounts.learners(made.physics.class_id)}
    made.run_ids = {}
    for name, firsts in FIRST.items():
        runs = made.store.for_learner(ids[name])
        for question, first in zip(QUESTIONS, firsts):
            runs.answer_question(LESSON, question, "first", bool(first), first_only=True)
            runs.answer_question(LESSON, question, "again", not first, first_only=True)  # a retry: never counted
        if firsts[3] is not None:
            made.run_ids[name] = runs.record_submission(EXERCISE, "python", "first", PASS if firsts[3] else FAIL)
            runs.record_submission(EXERCISE, "python", "again", FAIL if firsts[3] else PASS)
    made.ids = ids
    yield made
    made.store.close()


def pearson(xs: list[float], ys: list[float]) -> float:
    return float(np.corrcoef(xs, ys)[0, 1])


def spearman(xs: list[float], ys: list[float]) -> float:
    """Pearson's r of the ranks (the values are continuous: no ties to share a rank)."""
    assert len(set(xs)) == len(xs) and len(set(ys)) == len(ys)
    return pearson(np.argsort(np.argsort(xs)), np.argsort(np.argsort(ys)))


def item(found: dict, kind: str, item_id: str) -> dict:
    return next(entry for entry in found["items"] if (entry["kind"], entry["item_id"]) == (kind, item_id))


def test_counts_shares_and_discrimination_match_a_hand_computation(world):
    answer = world.physics_teacher.get("/api/class/items")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["learners"] == 6 and found["left_out"] == 0
    matrix = np.array([[np.nan if x is None else x for x in row] for row in FIRST.values()], dtype=float)
    for column, (kind, item_id) in enumerate([("question", q) for q in QUESTIONS] + [("exercise", EXERCISE)]):
        got = item(found, kind, item_id)
        tried = ~np.isnan(matrix[:, column])
        assert got["tried"] == tried.sum() and got["right"] == np.nansum(matrix[:, column])
        assert got["difficulty"] == pytest.approx(np.nanmean(matrix[:, column]))
        others = np.delete(matrix, column, axis=1)
        rest = np.nanmean(others, axis=1)  # each learner's share right on the other items they tried
        expected = np.corrcoef(matrix[tried, column], rest[tried])[0, 1]
        assert got["discrimination"] == pytest.approx(expected, abs=1e-4)
        assert got["difficulty_text"].endswith(" %") and got["tried_text"] == f"{tried.sum()} learners"
    untried = item(found, "question", "reverse-order")
    assert untried["tried"] == 0 and untried["difficulty"] is None and untried["discrimination"] is None
    scores = next(lesson for lesson in found["charts"]["distribution"] if lesson["lesson_id"] == LESSON)
    # Ada 4/4, Bea 3/4, Cal 2/4, Dee 1/4, Eve 1/3, Fay 0/4: bands 0-20, 20-40 (Dee, Eve), 40-60, 60-80, 80-100.
    assert [band["learners"] for band in scores["bands"]] == [1, 2, 1, 1, 1]
    assert [band["label"] for band in scores["bands"]][0] == "0 % to 20 %"
    day = found["charts"]["pass_rate"]
    assert [(d["day"], d["tries"], d["right"]) for d in day] == [
        ("2026-03-01", (~np.isnan(matrix)).sum(), np.nansum(matrix))]


def test_the_learners_behind_an_item_are_its_triers_with_their_first_runs(world):
    found = world.physics_teacher.get(f"/api/class/items/learners?kind=exercise&lesson={LESSON}&item={EXERCISE}").json()
    got = {entry["name"]: (entry["right"], entry["run_id"]) for entry in found["learners"]}
    assert got == {name: (bool(FIRST[name][3]), world.run_ids[name]) for name in world.run_ids}
    question = world.physics_teacher.get(
        f"/api/class/items/learners?kind=question&lesson={LESSON}&item={QUESTIONS[1]}").json()
    assert {entry["name"] for entry in question["learners"] if entry["right"]} == {"Ada", "Cal"}


def test_a_review_with_fresh_numbers_keeps_them(world):
    cyd = world.cyd  # Chemistry's learner: her review does not touch Physics' numbers
    assert send(cyd, "POST", f"/api/lessons/{HARD_LESSON}/quiz/{HARD_QUESTION}", json={"answer": "0"}).status_code == 200
    world.clock.now += timedelta(days=1)  # a wrong first answer comes back within the day
    listed = cyd.get("/api/review/due")
    assert listed.status_code == 200, listed.text
    due = next(entry for entry in listed.json()["due"] if entry["question_id"] == HARD_QUESTION)
    question = next(q for q in lessons.lesson_data(HARD_LESSON)["quiz"] if q["id"] == HARD_QUESTION)
    numbers = draw_numbers(question, due["variant"])
    # d(out)/da for out = a * b * upstream: b * upstream (by hand).
    answer = send(cyd, "POST", f"/api/review/{HARD_LESSON}/{HARD_QUESTION}",
                  json={"answer": str(numbers["b"] * numbers["upstream"]), "variant": due["variant"]})
    assert answer.status_code == 200 and answer.json()["correct"] is True, answer.text
    found = world.chemistry_teacher.get("/api/class/items").json()
    reviewed = item(found, "question", HARD_QUESTION)
    assert reviewed["reviews"] == 1 and reviewed["review_share_right"] == 1.0 and reviewed["hard_values"] == []
    assert item(world.physics_teacher.get("/api/class/items").json(), "question", HARD_QUESTION)["reviews"] == 0


def test_only_a_teacher_sees_it_and_bad_input_says_what_is_allowed(world):
    assert world.ada.get("/api/class/items").status_code == 403
    assert world.ada.get(f"/api/class/items/learners?kind=question&lesson={LESSON}&item=x").status_code == 403
    other = world.chemistry_teacher.get(f"/api/class/items/learners?kind=exercise&lesson={LESSON}&item={EXERCISE}")
    assert other.status_code == 200 and other.json()["learners"] == []
    for query, said in [("kind=quiz&lesson=backprop&item=x", "kind must be one of question, exercise"),
                        ("kind=question&lesson=nope&item=x", "there is no lesson 'nope'"),
                        ("kind=question&lesson=backprop&item=x", "its questions are product-gradient")]:
        wrong = world.physics_teacher.get(f"/api/class/items/learners?{query}")
        assert wrong.status_code == 422 and said in wrong.text, wrong.text


def test_past_the_learner_bound_the_latest_to_join_are_left_out_and_counted(world, monkeypatch):
    monkeypatch.setattr(item_analysis, "MAX_LEARNERS", 4)
    found = world.physics_teacher.get("/api/class/items").json()
    assert found["learners"] == 4 and found["left_out"] == 2 and found["left_out_text"] == "2 learners"
    assert item(found, "question", QUESTIONS[0])["tried"] == 4  # Ada, Bea, Cal, Dee


def test_one_section_s_items_count_its_learners_only(world):
    """Ada, Cal and Eve in section Monday (set through the API as a teacher does): their first tries alone."""
    monday = ["Ada", "Cal", "Eve"]
    for name in monday:
        assert send(world.physics_teacher, "PUT", f"/api/class/learners/{world.ids[name]}/section",
                    json={"section": "Monday"}).status_code == 200
    try:
        found = world.physics_teacher.get("/api/class/items?section=Monday").json()
        assert found["learners"] == 3 and found["left_out"] == 0
        tried = [FIRST[name][3] for name in monday if FIRST[name][3] is not None]  # Eve never ran it
        got = item(found, "exercise", EXERCISE)
        assert (got["tried"], got["right"]) == (len(tried), sum(tried))
        assert item(found, "question", QUESTIONS[0])["right"] == sum(FIRST[name][0] for name in monday)
        wrong = world.physics_teacher.get("/api/class/items?section=Tuesday")
        assert wrong.status_code == 422 and "Monday" in wrong.text, wrong.text
    finally:
        for name in monday:
            send(world.physics_teacher, "PUT", f"/api/class/learners/{world.ids[name]}/section", json={"section": ""})


@pytest.fixture(scope="module", params=["postgresql"])
def simulated(request, tmp_path_factory):
    """The simulated class on PostgreSQL (the hand-written class above proves both backends read alike): its
    160 learners' first tries imported, a file each, and their reviews rated one at a time (tests/item_class.py)."""
    made = backend_world(request, tmp_path_factory, "simulated")
    truth = simulate_class(made.store, made.accounts, made.chemistry.class_id, made.chemistry.invite_token)
    yield made, truth
    made.store.close()


# A bound that only catches a hang: the simulated class's 11,520 single writes (its fixture, counted in the test's
# time) took 310 s at load average 25 on the 2-core machine, past the suite's 300 s. Its first tries are imported
# since (2026-12-07: the file's CPU alone 32.7 s -> 10.3 s); the bound is kept.
@pytest.mark.timeout(900)
def test_a_simulated_class_recovers_its_known_item_parameters(simulated):
    made, truth = simulated
    found = made.chemistry_teacher.get("/api/class/items").json()
    assert found["learners"] == LEARNERS + 1  # and Cyd, who did nothing
    keys = sorted(truth["a"])
    got = {(entry["kind"], entry["lesson_id"], entry["item_id"]): entry for entry in found["items"]}
    assert all(got[key]["tried"] == LEARNERS for key in keys)
    difficulty = pearson([got[key]["difficulty"] for key in keys], [truth["difficulty"][key] for key in keys])
    discrimination = spearman([got[key]["discrimination"] for key in keys], [truth["a"][key] for key in keys])
    print(f"difficulty: Pearson {difficulty:.3f}; discrimination: Spearman {discrimination:.3f}")
    assert difficulty >= 0.9 and discrimination >= 0.9, (difficulty, discrimination)
    flagged = [(key, value["name"], value["value"]) for key, entry in got.items() for value in entry["hard_values"]]
    assert flagged == [(("question", HARD_LESSON, HARD_QUESTION), HARD_NAME, HARD_VALUE)]
