"""The teacher's view of what learners think and how they got there (issue 29 items 1-4), on SQLite and
PostgreSQL: each learner's explain-it-back text and ticked key ideas, every text of one lesson side by side;
hints opened and model solutions shown in the timeline, the grid and the gradebook; the grid's four states;
failing runs grouped by what went wrong, never by the learner's own line."""

from __future__ import annotations

import csv
import io
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from chainrule import lessons
from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts, ClassError
from chainrule.classes.report import ClassReport, csv_text, diagnosis_of
from chainrule.progress import open_store
from class_process import run_coroutine
from class_world import FAST_HASHER

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "correct horse battery"
PASS = {"status": "pass", "verdict": "passed", "tests": []}
# Two learners' Python files that do not load, on different lines: the grader's own words (grading/grader.py).
SYNTAX_LINE_1 = {"status": "error", "verdict": "error", "tests": [], "message":
                 "Your file could not be loaded: SyntaxError on line 1: def f(:\nSyntaxError: invalid syntax (solution.py, line 1)"}
SYNTAX_LINE_4 = {"status": "error", "verdict": "error", "tests": [], "message":
                 "Your file could not be loaded: SyntaxError on line 4: x = (\nSyntaxError: '(' was never closed"}
RAISED = {"status": "fail", "verdict": "error", "tests": [], "message":
          "0 of 2 tests passed. seed: Your code raised TypeError on line 9: return a + None\nTypeError: unsupported"}
TIMEOUT = {"status": "error", "verdict": "timeout", "tests": [], "message":
           "Your code did not finish within 10 seconds (is there a loop that never ends, or a wait?)."}


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def made(store_place):
    """Class "Physics": Ada opens hints 1 and 2 of the first backprop exercise, is shown its solution, then
    passes; Bea passes, then looks at the solution; Cal's file does not load (twice, on other lines than
    Bea's) and stops; Eve does nothing. Ada explains backprop ticking two key ideas (and one id the lesson
    does not have); Cal's box is empty. Dan, in "Chemistry", explains backprop too and is never seen."""
    store = open_store(**store_place("class"), clock=Clock(), fuzzing=False, file_name=CLASS_DATABASE)
    accounts = Accounts(store, hasher=FAST_HASHER)
    physics, chemistry = accounts.create_class("Physics"), accounts.create_class("Chemistry")
    people = {name: run_coroutine(accounts.join, physics.invite_token, name, PASSWORD)
              for name in ("Ada", "Bea", "Cal", "Eve")}
    people["Dan"] = run_coroutine(accounts.join, chemistry.invite_token, "Dan", PASSWORD)
    exercise = lessons.exercise_ids("backprop")[0]
    ideas = [idea["id"] for idea in lessons.lesson_data("backprop")["explain"]["key_ideas"]]
    view = {name: store.for_learner(account.id) for name, account in people.items()}
    view["Ada"].record_help("backprop", exercise, "hint", 1)
    view["Ada"].record_help("backprop", exercise, "hint", 2)
    view["Ada"].record_help("backprop", exercise, "solution")
    view["Ada"].record_submission(exercise, "python", "ada's code", PASS)
    view["Bea"].record_submission(exercise, "python", "bea's code", PASS)
    view["Bea"].record_help("backprop", exercise, "solution")
    view["Bea"].record_submission(exercise, "python", "x = (", SYNTAX_LINE_4)
    view["Cal"].record_submission(exercise, "python", "def f(:", SYNTAX_LINE_1)
    view["Cal"].record_submission(exercise, "python", "while True: pass", TIMEOUT)
    view["Ada"].save_explanation("backprop", "It starts at the output <b>with 1</b>.", [ideas[3], ideas[0], "gone"])
    view["Cal"].save_explanation("backprop", "", [ideas[1]])
    view["Dan"].save_explanation("backprop", "Dan's words", [])
    view["Dan"].record_help("backprop", exercise, "solution")
    yield {"report": ClassReport(store, accounts), "class_id": physics.class_id, "people": people,
           "exercise": exercise, "ideas": ideas, "store": store}
    store.close()


def test_each_learners_explanation_with_the_ideas_they_ticked_and_one_lessons_side_by_side(made):
    report, ideas = made["report"], made["ideas"]
    texts = lessons.lesson_data("backprop")["explain"]["key_ideas"]
    side = report.explanations(made["class_id"], "backprop")
    assert side["lesson"]["title"] == next(e["title"] for e in lessons.get_path()["lessons"] if e["id"] == "backprop")
    assert [idea["id"] for idea in side["lesson"]["key_ideas"]] == ideas
    by_name = {entry["name"]: entry for entry in side["learners"]}
    assert sorted(by_name) == ["Ada", "Bea", "Cal", "Eve"]  # Dan is in another class
    # The text as she wrote it (the page puts it in as text); the ideas in the lesson's order, the unknown one dropped.
    assert by_name["Ada"]["text"] == "It starts at the output <b>with 1</b>."
    assert by_name["Ada"]["ticked"] == [texts[0], texts[3]] and by_name["Ada"]["key_ideas"] == len(ideas)
    assert by_name["Ada"]["ticked_text"] == f"2 of {len(ideas)} key ideas ticked"
    assert by_name["Cal"]["text"] is None and by_name["Bea"]["text"] is None  # an empty box is no explanation
    mine = report.timeline(made["class_id"], made["people"]["Ada"].id)["explanations"]
    assert [(entry["lesson_id"], entry["text"]) for entry in mine] == [("backprop", by_name["Ada"]["text"])]
    overview = report.overview(made["class_id"])
    grids = {row["name"]: next(g for g in row["grid"] if g["lesson_id"] == "backprop") for row in overview["roster"]}
    assert [grids[name]["explained"] for name in ("Ada", "Bea", "Cal", "Eve")] == [True, False, False, False]
    with pytest.raises(ClassError):
        report.explanations(made["class_id"], "no-such-lesson")


def test_hints_and_solutions_in_the_timeline_the_grid_and_the_gradebook(made):
    report, exercise = made["report"], made["exercise"]
    overview = report.overview(made["class_id"])
    grids = {row["name"]: next(g for g in row["grid"] if g["lesson_id"] == "backprop") for row in overview["roster"]}
    # Ada saw the solution before her pass; Bea after hers (an earned pass); Cal tried; Eve never started.
    assert {name: grid["exercise_states"][exercise] for name, grid in grids.items()} == {
        "Ada": "passed-with-solution", "Bea": "passed", "Cal": "tried", "Eve": "not-started"}
    assert grids["Ada"]["help"][exercise] == {"hints": 2, "solution_shown": True,
                                              "text": "2 hints opened, the model solution shown"}
    assert grids["Bea"]["help"][exercise] == {"hints": 0, "solution_shown": True, "text": "the model solution shown"}
    assert grids["Eve"]["help"][exercise] == {"hints": 0, "solution_shown": False, "text": ""}
    events = report.timeline(made["class_id"], made["people"]["Ada"].id)["events"]
    assert [(e["kind"], e.get("number")) for e in events] == [("hint", 1), ("hint", 2), ("solution", 0), ("run", None)]
    rows = list(csv.reader(io.StringIO(csv_text(report.gradebook(made["class_id"])))))
    header, by_name = rows[0], {row[0]: row for row in rows[1:]}
    hints, after = header.index("backprop: hints opened"), header.index("backprop: passed after the solution was shown")
    assert [(by_name[n][hints], by_name[n][after]) for n in ("Ada", "Bea", "Cal", "Eve")] == [
        ("2", "1"), ("0", "0"), ("0", "0"), ("0", "0")]


def test_the_grid_names_exercises_and_questions_by_their_title_and_prompt(made):
    path = {lesson["id"]: lesson for lesson in made["report"].overview(made["class_id"])["path"]}
    data = lessons.lesson_data("backprop")
    assert path["backprop"]["exercise_titles"] == [e["title"] for e in data["exercises"]]
    # The prompt as the lesson page shows it (its numbers filled in), e.g. "... a = 2 and b = -3 ...".
    assert path["backprop"]["question_prompts"][1] == data["quiz"][1]["prompt"]
    assert "{{" not in "".join(path["backprop"]["question_prompts"])
    assert all(prompt for lesson in path.values() for prompt in lesson["question_prompts"])


def test_failing_runs_group_by_verdict_and_kind_of_error_never_by_the_learners_line(made):
    assert diagnosis_of(SYNTAX_LINE_1) == diagnosis_of(SYNTAX_LINE_4) == "error: SyntaxError"
    assert diagnosis_of(RAISED) == "error: TypeError" and diagnosis_of(TIMEOUT) == "timeout"
    overview = made["report"].overview(made["class_id"])
    entry = next(e for e in overview["exercises"] if e["exercise_id"] == made["exercise"])
    # Bea's file (line 4) and Cal's (line 1) are one group across the two learners.
    assert entry["diagnoses"][0] == {"diagnosis": "error: SyntaxError", "runs": 2}
    assert entry["title"] == lessons.lesson_data("backprop")["exercises"][0]["title"]


def test_the_classroom_guide_names_only_verdicts_the_grader_gives():
    guide = (REPO / "docs" / "classroom.md").read_text(encoding="utf-8")
    grader = "".join(path.read_text(encoding="utf-8") for path in (REPO / "src" / "chainrule" / "grading").glob("*.py"))
    section = guide[guide.index("## The teacher's numbers"):]
    section = section[:section.index("\n## ", 1)]
    named = set(re.findall(r"`([a-z]+(?:-[a-z]+)*)(?::[^`]*)?`", section))
    assert named and "syntax-error" not in named
    for verdict in named:
        assert f'"{verdict}"' in grader, f"docs/classroom.md names a verdict {verdict!r} the grader never gives"
