"""Hidden cases: every graded run is also graded on inputs drawn fresh from the exercise folder's "hidden" rule,
so a file that only fits the cases shown fails (issue 43, item 5).

Many seeds are checked on the engine's side (our Python references run in this process against the engine's
expected numbers); a few real runs in the sandbox show what a learner gets, in every language."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from answer_tables import answer_table
from chainrule.commands.exercises import render_result
from chainrule.grading import EXERCISES, ExerciseFolderError, get_exercise, grade, load_exercise_folder
from chainrule.grading.grader import RUNTIME_DIR
from chainrule.grading.hidden_cases import MAX_HIDDEN
from chainrule.grading.rounding import all_same_graded
from chainrule.lessons.exercises import exercise_folders
from chainrule.lessons.loader import DATA_DIR

pytestmark = pytest.mark.timeout(300)

SEEDS = range(100)


def _reference_function(exercise):
    """The reference's function, or for a kind with a driver (the capstone's) the driver's entry run beside the
    reference's classes, as the harness runs them."""
    namespace: dict = {"__name__": "reference"}
    exec(compile(exercise.source("solution", "python"), str(exercise.folder / "solution.py"), "exec"), namespace)
    if exercise.kind.driver is None:
        return namespace[exercise.python_function]
    driver = RUNTIME_DIR / f"{exercise.kind.driver}.py"
    exec(compile(driver.read_text(encoding="utf-8"), str(driver), "exec"), namespace)
    return namespace[exercise.kind.entry]


def _answer(function, case) -> list:
    args = json.loads(json.dumps(case.args))
    returned = function(*args)
    return list(args[-1] if returned is None else returned)


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_every_reference_passes_a_hundred_draws_and_the_draws_repeat_by_seed(exercise_id):
    exercise = get_exercise(exercise_id)
    assert exercise.hidden is not None, f"{exercise_id} has no hidden rule"
    reference = _reference_function(exercise)
    for seed in SEEDS:
        cases = exercise.hidden_cases(seed)
        assert [c.name for c in cases] == [f"hidden case {k}" for k in range(1, exercise.hidden.count + 1)]
        assert all(c.hidden for c in cases)
        for case in cases:
            assert all_same_graded(_answer(reference, case), case.expected), (seed, case.inputs)
    again, other = exercise.hidden_cases(7), exercise.hidden_cases(8)
    assert [c.inputs for c in again] == [c.inputs for c in exercise.hidden_cases(7)]  # a regrade draws the same
    assert [c.inputs for c in again] != [c.inputs for c in other]
    shown = [c.inputs for c in exercise.cases]
    assert not any(c.inputs in shown for c in again)


# A table of answers needs a function the cases call with their inputs. A kind with a driver calls no such
# function: the driver builds each case's graph or network with the learner's own classes, so a file of
# numbers has nothing to answer with (its shown cases error as well as its hidden ones).
TABLE_RUNS = [(exercise_id, "python") for exercise_id in EXERCISES if get_exercise(exercise_id).kind.driver is None] + [
    ("slopes-by-rule", "javascript"), ("slopes-by-rule", "typescript")]


@pytest.fixture(scope="module")
def table_results() -> dict:
    """Each answer table graded once in the sandbox (the results are shared by the tests below)."""
    return {(exercise_id, language): grade(exercise_id, language, answer_table(get_exercise(exercise_id), language))
            for exercise_id, language in TABLE_RUNS}


@pytest.mark.parametrize("exercise_id,language", TABLE_RUNS)
def test_a_table_of_the_shown_answers_passes_them_and_fails_the_hidden_ones(exercise_id, language, table_results):
    result = table_results[(exercise_id, language)]
    shown = [t for t in result["tests"] if not t.get("hidden")]
    hidden = [t for t in result["tests"] if t.get("hidden")]
    assert [t["status"] for t in shown] == ["pass"] * len(get_exercise(exercise_id).cases), result["message"]
    assert len(hidden) == get_exercise(exercise_id).hidden.count == result["hidden"]["count"]
    assert all(t["status"] == "fail" for t in hidden)
    assert result["verdict"] == "failed" and result["status"] == "fail"
    # The diagnosis says it once, through the kinds' run-level mistakes; the numbers stay hidden.
    assert result["diagnosis_mistake"] == "fits-shown-only"
    assert "may only fit the cases shown" in result["message"]
    for test in hidden:
        assert test["test_code"] is None and test["expected"] is None and test["actual"] is None
        assert test["output"] is None and test["message"].startswith("Its inputs are drawn fresh for each run")
    assert isinstance(result["hidden"]["seed"], int)


def test_chainrule_check_says_the_run_may_only_fit_the_cases_shown(table_results):
    """`chainrule check`'s report (render_result) names the run-level diagnosis once, and no hidden call."""
    report = render_result(table_results[("neuron-grads", "python")])
    assert report.count("may only fit the cases shown") == 1
    assert "call:" not in report.split("hidden case 1", 1)[1]


def test_the_grader_picks_the_seed_and_a_given_seed_draws_its_cases_again():
    exercise = get_exercise("slopes-by-rule")
    first = grade(exercise, "python", exercise.source("solution", "python"), hidden_seed=424242)
    assert first["verdict"] == "passed" and first["hidden"] == {"seed": 424242, "count": exercise.hidden.count}
    codes = [t["test_code"] for t in first["tests"] if t.get("hidden")]
    assert codes == [f"rule_slopes({json.dumps(c.args[0])})" for c in exercise.hidden_cases(424242)]
    # A passing run shows its hidden cases' inputs and numbers.
    assert all(t["expected"] and t["actual"] == t["expected"] for t in first["tests"] if t.get("hidden"))


def test_lessons_check_grades_a_reference_on_ten_draws_in_one_run():
    """What `chainrule lessons check` grades (validate.REFERENCE_SEEDS): the table fails the draws by name."""
    from chainrule.lessons.validate import REFERENCE_SEEDS

    exercise = get_exercise("chain-link-by-link")
    drawn = exercise.with_seeds(range(REFERENCE_SEEDS))
    assert len(drawn.cases) == len(exercise.cases) + REFERENCE_SEEDS * exercise.hidden.count
    result = grade(drawn, "python", answer_table(exercise, "python"))
    failing = [t["name"] for t in result["tests"] if t["status"] != "pass"]
    assert failing and all(" of seed " in name for name in failing)
    assert "hidden case 1 of seed 0" in failing


def _folder_with(tmp_path: Path, exercise_id: str, rule: object, **case_changes) -> Path:
    folder = tmp_path / exercise_id
    shutil.copytree(get_exercise(exercise_id).folder, folder)
    data = json.loads((folder / "exercise.json").read_text())
    data["hidden"] = rule
    for key, value in case_changes.items():
        data["cases"][0][key] = value
    (folder / "exercise.json").write_text(json.dumps(data, indent=1))
    return folder


@pytest.mark.parametrize("rule,says", [
    ({"count": 0, "draw": {"x": [-1, 1]}}, f"hidden count must be a whole number from 1 to {MAX_HIDDEN}"),
    ({"count": 2, "draw": {"x": [1, 1]}}, "must be [low, high] with finite numbers, low below high"),
    ({"count": 2, "draw": {"x": [0, 1e999]}}, "must be [low, high] with finite numbers"),
    ({"count": 2, "draw": {"y": [0, 1]}}, "has no numbers in 'y' to draw afresh"),
    ({"count": 2}, 'hidden must be {"count": N, "draw"'),
    ({"count": 2, "draw": {}}, "hidden draw must name at least one field"),
])
def test_an_invalid_hidden_rule_is_refused_with_what_is_allowed(tmp_path, rule, says):
    with pytest.raises(ExerciseFolderError) as refused:
        load_exercise_folder(_folder_with(tmp_path, "slopes-by-rule", rule))
    assert says in str(refused.value) and "exercise.json" in str(refused.value)


def test_a_rule_whose_draws_land_on_the_hinge_corner_is_refused(tmp_path):
    """One point at margin w1 * 1 + b = 1 whatever b in [0, 1e-9] (drawn to 6 decimals: always 0)."""
    folder = _folder_with(tmp_path, "one-training-step", {"count": 1, "draw": {"b": [0, 1e-9]}},
                          points=[[1, 0]], labels=[1], w=[1, 0], b=0.5)
    with pytest.raises(ExerciseFolderError) as refused:
        load_exercise_folder(folder)
    assert "the corner of the hinge loss" in str(refused.value) and "change the ranges" in str(refused.value)


def test_a_rule_whose_draws_the_kind_refuses_is_refused(tmp_path):
    """Labels are -1 or 1: drawing them afresh gives cases the kind cannot use."""
    folder = _folder_with(tmp_path, "one-training-step", {"count": 1, "draw": {"labels": [-1, 1]}})
    with pytest.raises(ExerciseFolderError) as refused:
        load_exercise_folder(folder)
    assert "cannot use (the last: 'labels' must hold one label per point, each -1 or 1)" in str(refused.value)


def _built_in_exercise_folders() -> list[Path]:
    """Every exercise folder the built-in lessons list, read from their files (not from the registry)."""
    path = json.loads((DATA_DIR / "path.json").read_text(encoding="utf-8"))
    folders = []
    for entry in path["lessons"]:
        lesson = DATA_DIR / entry["id"]
        if entry["status"] == "available" and (lesson / "lesson.json").is_file():
            folders += exercise_folders(lesson, json.loads((lesson / "lesson.json").read_text(encoding="utf-8")))
    return folders


def test_every_built_in_folder_passes_the_full_check_its_first_use_leaves_for_later():
    """A process registers the built-in folders without computing their cases (each is checked on its first
    use): here each is checked in full as it loads, as an author's folder is, and gives what its first use gives."""
    folders = _built_in_exercise_folders()
    assert len(folders) >= len(TABLE_RUNS) - 2
    for folder in folders:
        checked = load_exercise_folder(folder)  # raises ExerciseFolderError naming the file and line at fault
        registered = get_exercise(checked.id)
        assert registered.folder.resolve() == folder.resolve()
        assert checked.cases == registered.cases and checked.hidden == registered.hidden


@pytest.mark.parametrize("rule,case_changes,says", [
    ({"count": 1, "draw": {"labels": [-1, 1]}}, {}, "'labels' must hold one label per point, each -1 or 1"),
    ({"count": 1, "draw": {"b": [-1, 1]}}, {"labels": [1, 5, 1]},
     "case 'three points, from zero weights': 'labels' must hold one label per point"),
])
def test_a_folder_loaded_unchecked_is_checked_on_first_use_with_the_same_error(tmp_path, rule, case_changes, says):
    folder = _folder_with(tmp_path, "one-training-step", rule, **case_changes)
    with pytest.raises(ExerciseFolderError) as at_load:
        load_exercise_folder(folder)  # an author's folder: refused as it loads
    unchecked = load_exercise_folder(folder, checked=False)  # what a built-in folder's registration does
    assert unchecked.id == "one-training-step" and unchecked.languages
    with pytest.raises(ExerciseFolderError) as at_use:
        _ = unchecked.cases
    assert str(at_use.value) == str(at_load.value) and says in str(at_load.value)


def test_an_unchecked_exercise_is_checked_once_on_its_first_use_and_grades_as_a_checked_one():
    exercise = get_exercise("slopes-by-rule")
    unchecked = load_exercise_folder(exercise.folder, checked=False)
    checks = []

    def counted():
        checks.append(1)
        return unchecked.graded()

    counting = replace(unchecked, graded=counted)
    assert checks == []
    result = grade(counting, "python", exercise.source("solution", "python"), hidden_seed=5)
    assert checks == [1]
    assert result["verdict"] == "passed" and result["hidden"] == {"seed": 5, "count": exercise.hidden.count}
    assert counting.cases == exercise.cases and counting.hidden_cases(5) == exercise.hidden_cases(5)
    assert checks == [1]
