"""The class's common mistakes (classes/misconceptions.py, GET /api/class/mistakes), on SQLite and PostgreSQL with
one class per backend: two results of real graded runs (one naming nothing-reached, one naming three mistakes) are
kept for several learners at planted times through the store function the grader's results go through; the counts
(runs, distinct learners, per day in the class's time zone) are the ones counted by hand below, each mistake's runs
are the planted ones, its hint is the exercise's own text (or the grader's, as the learner read it); passing runs,
a regrade's runs and another class's runs take no part; a learner asking is refused; the cost bound says what it
left out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chainrule import lessons
from chainrule.classes import misconceptions
from chainrule.classes.deadlines import Deadlines
from chainrule.cli import main
from chainrule.grading import grade, reference_source
from class_world import backend_world

EXERCISE = "local-gradients"
FOLDER = Path(lessons.__file__).parent / "data" / "backprop" / "exercises" / "2-local-gradients"
PASS = {"status": "pass", "verdict": "passed", "tests": []}
NOTHING_NAMED = {"status": "fail", "verdict": "failed", "tests": [{"name": "t", "status": "fail"}]}
ZONE = "America/New_York"  # UTC-5 in March: a run at 03:00 UTC is the evening before in the class's days
SHARES = ("chain-w", "reuse-one-share", "shared-wrong")


@pytest.fixture(scope="module")
def graded():
    """Two real graded runs of local-gradients: the backward never seeded (every gradient 0), and products that
    replace a gradient (= for +=)."""
    lessons.register_exercises()
    solution = reference_source(EXERCISE, "python")
    never_seeded = grade(EXERCISE, "python", solution.replace("out.grad = 1.0", "out.grad = 0.0"))
    replaced = grade(EXERCISE, "python", solution.replace("self.grad += other.data", "self.grad = other.data")
                     .replace("other.grad += self.data", "other.grad = self.data"))
    assert misconceptions.mistakes_of(never_seeded) == {"nothing-reached"}
    assert misconceptions.mistakes_of(replaced) == set(SHARES)
    return {"nothing": never_seeded, "shares": replaced}


# (learner, exercise, result, work time in UTC, origin): the class's runs, oldest first.
PLANTED = [
    ("Ada", EXERCISE, "nothing", "2026-03-01T15:00:00+00:00", ""),   # New York: March 1
    ("Ada", EXERCISE, "nothing", "2026-03-02T03:00:00+00:00", ""),   # New York: March 1, 22:00
    ("Ada", EXERCISE, "nothing", "2026-03-02T04:00:00+00:00", "regrade:7"),  # a regrade's run: not the class's
    ("Ada", EXERCISE, "pass", "2026-03-02T05:00:00+00:00", ""),
    ("Bea", EXERCISE, "shares", "2026-03-02T15:00:00+00:00", ""),    # March 2
    ("Bea", EXERCISE, "nothing", "2026-03-02T16:00:00+00:00", ""),   # March 2
    ("Cal", EXERCISE, "shares", "2026-03-03T01:00:00+00:00", ""),    # New York: March 2, 20:00
    ("Cal", "forward-values", "unnamed", "2026-03-03T02:00:00+00:00", ""),  # did not pass, names no mistake
    ("Cyd", EXERCISE, "nothing", "2026-03-02T12:00:00+00:00", ""),   # Chemistry's learner
]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])  # conftest's STORE_BACKENDS, module-scoped
def world(request, tmp_path_factory, graded):
    made = backend_world(request, tmp_path_factory, "mistakes")
    made.join(made.physics.invite_token, "Cal")
    Deadlines(made.store, made.accounts).set_policy(made.physics.class_id, time_zone_name=ZONE)
    results = {**graded, "pass": PASS, "unnamed": NOTHING_NAMED}
    learners = {account.name: account.id for class_ in (made.physics, made.chemistry)
                for account in made.accounts.learners(class_.class_id)}
    made.run_ids = []
    for name, exercise, result, at, origin in PLANTED:
        runs = made.store.for_learner(learners[name])
        made.run_ids.append(runs.record_submission(exercise, "python", f"# {name}'s run\n", results[result],
                                                   origin=origin, at=at))
    made.learner_ids = learners
    return made


def mistakes_by_name(found: dict, exercise: str = EXERCISE) -> dict[str, dict]:
    entry = next(entry for entry in found["exercises"] if entry["exercise_id"] == exercise)
    return {mistake["mistake"]: mistake for mistake in entry["mistakes"]}


def test_each_mistake_is_counted_by_runs_learners_and_day_in_the_class_time_zone(world):
    answer = world.physics_teacher.get("/api/class/mistakes")
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["time_zone"] == ZONE and found["per"] == "day" and found["left_out"] == 0
    assert [entry["exercise_id"] for entry in found["exercises"]] == ["forward-values", EXERCISE]  # the path's order
    assert found["exercises"][0]["mistakes"] == []
    assert found["exercises"][0]["said"] == "1 run did not pass, by 1 learner. None of them named a mistake the grader knows."
    local = found["exercises"][1]
    assert local["runs_not_passed"] == {"runs": 5, "runs_text": "5 runs", "learners": 3, "learners_text": "3 learners"}
    assert [mistake["mistake"] for mistake in local["mistakes"]] == ["nothing-reached", *SHARES]  # most runs first
    nothing = local["mistakes"][0]
    assert (nothing["runs"], nothing["learners"], nothing["runs_text"], nothing["learners_text"]) == (3, 2, "3 runs", "2 learners")
    assert [(day["day"], day["runs"], day["learners"]) for day in nothing["days"]] == [
        ("2026-03-01", 2, 1), ("2026-03-02", 1, 1)]
    for name in SHARES:
        shares = local["mistakes"][SHARES.index(name) + 1]
        assert (shares["runs"], shares["learners"]) == (2, 2)
        assert [(day["day"], day["runs"], day["learners"]) for day in shares["days"]] == [("2026-03-02", 2, 2)]


def test_each_mistake_links_to_its_runs_newest_first(world):
    found = mistakes_by_name(world.physics_teacher.get("/api/class/mistakes").json())
    ids = world.run_ids
    assert [(run["run_id"], run["name"], run["learner_id"]) for run in found["nothing-reached"]["recent_runs"]] == [
        (ids[5], "Bea", world.learner_ids["Bea"]), (ids[1], "Ada", world.learner_ids["Ada"]),
        (ids[0], "Ada", world.learner_ids["Ada"])]
    assert [run["run_id"] for run in found["reuse-one-share"]["recent_runs"]] == [ids[6], ids[4]]
    assert found["nothing-reached"]["runs_not_listed"] == 0
    # The teacher's way to a run: the learner's runs (the feedback view) hold it.
    runs = world.physics_teacher.get(f"/api/class/learners/{world.learner_ids['Ada']}/runs").json()["runs"]
    assert {ids[0], ids[1]} <= {run["id"] for run in runs}


def test_each_hint_is_the_text_the_learner_reads_for_that_mistake(world, graded):
    found = mistakes_by_name(world.physics_teacher.get("/api/class/mistakes").json())
    own = json.loads((FOLDER / "exercise.json").read_text(encoding="utf-8"))["diagnoses"]
    assert found["nothing-reached"]["hint"] == own["nothing-reached"] and found["nothing-reached"]["from"] == "exercise"
    assert graded["nothing"]["diagnosis"] == own["nothing-reached"]
    # The grader's own text, with the part it fills from a run's numbers named: it reads as the learner's hint.
    reuse = found["reuse-one-share"]
    assert reuse["from"] == "grader" and "[" in reuse["hint"] and "{" not in reuse["hint"]
    pattern = re.escape(reuse["hint"])
    pattern = re.sub(r"\\\[\w+\\\]", ".+", pattern)
    read = {test["hint"] for test in graded["shares"]["tests"] if test.get("mistake") == "reuse-one-share"}
    assert read and all(re.fullmatch(pattern, hint, re.S) for hint in read)


def test_the_command_line_prints_the_same_counts_runs_and_hints(world, capsys):
    place = world.place
    where = ["--database", place["database"]] if "database" in place else ["--data-dir", str(place["data_dir"])]
    assert main(["class", "mistakes", "Physics", *where]) == 0
    lines = capsys.readouterr().out.splitlines()
    ids = world.run_ids
    assert lines[0].endswith(f"days are in the class's time zone, {ZONE}.")
    assert lines[1] == "forward-values: 1 run did not pass, by 1 learner. None of them named a mistake the grader knows."
    assert lines[2] == f"{EXERCISE}: 5 runs did not pass, by 3 learners."
    assert lines[3].split() == ["nothing-reached", "3", "runs", "2", "learners", "per", "day:", "2026-03-01", "2,",
                                "2026-03-02", "1"]
    assert lines[4] == f"    runs: {ids[5]}, {ids[1]}, {ids[0]}"
    assert lines[5] == "    hint: " + json.loads((FOLDER / "exercise.json").read_text(encoding="utf-8"))["diagnoses"]["nothing-reached"]
    assert main(["class", "mistakes", "Physics", *where, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == world.physics_teacher.get("/api/class/mistakes").json()


def test_only_a_teacher_of_the_class_sees_it(world):
    assert world.ada.get("/api/class/mistakes").status_code == 403
    chemistry = world.chemistry_teacher.get("/api/class/mistakes").json()
    assert [(entry["exercise_id"], [(m["mistake"], m["runs"], m["learners"]) for m in entry["mistakes"]])
            for entry in chemistry["exercises"]] == [(EXERCISE, [("nothing-reached", 1, 1)])]
    assert chemistry["time_zone"] == "UTC"


def test_past_the_bounds_the_oldest_runs_are_left_out_and_counted(world, monkeypatch):
    monkeypatch.setattr(misconceptions, "RUNS_LISTED", 1)
    listed = mistakes_by_name(world.physics_teacher.get("/api/class/mistakes").json())["nothing-reached"]
    assert [run["run_id"] for run in listed["recent_runs"]] == [world.run_ids[5]] and listed["runs_not_listed"] == 2
    monkeypatch.setattr(misconceptions, "MAX_RUNS", 2)
    found = world.physics_teacher.get("/api/class/mistakes").json()
    # The two newest runs naming a mistake: Cal's (three mistakes) and Bea's nothing-reached; five name one.
    assert found["runs_read"] == 2 and found["left_out"] == 3
    assert found["said"].endswith("Only the newest 2 runs naming a mistake were read (left out: 3 older runs).")
    counted = mistakes_by_name(found)
    assert {name: entry["runs"] for name, entry in counted.items()} == {"nothing-reached": 1, **dict.fromkeys(SHARES, 1)}
