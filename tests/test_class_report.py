"""The teacher's view, its numbers worked out by hand from a small class's runs and answers, on SQLite
and PostgreSQL; the same data from `chainrule class ...`, and a gradebook a spreadsheet cannot run."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta, timezone

import pytest

from chainrule import cli, lessons
from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts, ClassError
from chainrule.classes.report import ClassReport, csv_text, diagnosis_of
from chainrule.progress import open_store
from class_process import run_coroutine
from class_world import FAST_HASHER

PASSWORD = "correct horse battery"
HINT = "Every gradient is 0: nothing reached the inputs."


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)  # every event a second later: a timeline in order
        return self.now


def failing(hint: str | None = HINT, verdict: str = "failed") -> dict:
    message = "grad[0] (grad[0]): expected 1.0, got 0.0" + (f"\n{hint}" if hint else "")
    return {"status": "fail", "verdict": verdict, "message": "0 of 2 tests passed.",
            "tests": [{"status": "fail", "message": message}, {"status": "fail", "message": message}]}


PASS = {"status": "pass", "verdict": "passed", "tests": []}


@pytest.fixture
def made(store_place):
    """Class "Physics": Ada passes the first backprop exercise at run 1; Bea fails twice (the same hint),
    then passes; Cal fails once with a timeout and stops. Quiz: Ada right, Bea and Cal both answer "5"
    (wrong) first; Bea then answers again, right. "Chemistry" has Dan, who passes everything, unseen."""
    store = open_store(**store_place("class"), clock=Clock(), fuzzing=False, file_name=CLASS_DATABASE)
    accounts = Accounts(store, hasher=FAST_HASHER)
    physics = accounts.create_class("Physics")
    chemistry = accounts.create_class("Chemistry")
    people = {name: run_coroutine(accounts.join, physics.invite_token, name, PASSWORD) for name in ("Ada", "Bea", "Cal")}
    people["Dan"] = run_coroutine(accounts.join, chemistry.invite_token, "Dan", PASSWORD)
    exercise = lessons.exercise_ids("backprop")[0]
    question = lessons.lesson_data("backprop")["quiz"][0]["id"]
    view = {name: store.for_learner(account.id) for name, account in people.items()}
    view["Ada"].record_submission(exercise, "python", "ada's code", PASS)
    view["Bea"].record_submission(exercise, "python", "bea 1", failing())
    view["Bea"].record_submission(exercise, "javascript", "bea 2", failing())
    view["Bea"].record_submission(exercise, "python", "bea 3", PASS)
    view["Cal"].record_submission(exercise, "python", "while True: pass", failing(None, verdict="timeout"))
    view["Dan"].record_submission(exercise, "python", "dan", PASS)
    view["Ada"].answer_question("backprop", question, "6", True)
    view["Ada"].save_explanation("backprop", "my own words", [])
    view["Cal"].save_explanation("backprop", "", [])  # an empty box is not an explanation
    view["Bea"].answer_question("backprop", question, "5", False)
    view["Bea"].answer_question("backprop", question, "6", True)
    view["Cal"].answer_question("backprop", question, "5", False)
    view["Dan"].answer_question("backprop", question, "1", False)
    yield {"store": store, "accounts": accounts, "class_id": physics.class_id, "people": people,
           "exercise": exercise, "question": question, "place": store_place("class")}
    store.close()


def test_per_exercise_runs_first_run_share_median_and_grouped_diagnoses(made):
    data = ClassReport(made["store"], made["accounts"]).overview(made["class_id"])
    entry = next(e for e in data["exercises"] if e["exercise_id"] == made["exercise"])
    assert entry["runs"] == 5  # Ada 1, Bea 3, Cal 1 (Dan is in another class)
    assert entry["learners_tried"] == 3 and entry["learners_passed"] == 2
    assert entry["passed_first_run"] == pytest.approx(1 / 3)  # Ada only
    assert entry["median_runs_to_pass"] == 2  # median of Ada's 1 and Bea's 3
    assert entry["diagnoses"][0] == {"diagnosis": HINT, "runs": 2}
    assert entry["diagnoses"][1]["diagnosis"].startswith("timeout")


def test_per_question_first_answers_and_the_most_chosen_wrong_answer(made):
    data = ClassReport(made["store"], made["accounts"]).overview(made["class_id"])
    entry = next(q for q in data["questions"] if q["question_id"] == made["question"] and q["lesson_id"] == "backprop")
    assert entry["learners_answered"] == 3
    assert entry["share_right"] == pytest.approx(1 / 3)  # first answers: Ada right, Bea and Cal wrong
    assert entry["most_chosen_wrong"] == {"answer": "5", "times": 2}  # Dan's "1" is another class's


def test_roster_and_timeline_of_one_class_only(made):
    report = ClassReport(made["store"], made["accounts"])
    roster = {row["name"]: row for row in report.overview(made["class_id"])["roster"]}
    assert sorted(roster) == ["Ada", "Bea", "Cal"]
    assert roster["Ada"]["exercises_passed"] == 1 and roster["Cal"]["exercises_passed"] == 0
    assert roster["Ada"]["quiz_right"] == 1 and roster["Bea"]["quiz_right"] == 0  # the first answer counts
    assert roster["Cal"]["last_active"] > roster["Bea"]["last_active"] > roster["Ada"]["last_active"]
    # Sections: every section of every lesson, finished by the learner page's own rule (progress/finished.py):
    # all three started backprop, which finishes its reading sections 01-03; Ada also wrote her explanation
    # (07). Nobody finished 04-06 (all predictions, all exercises, all questions), so nobody finished the recap (08).
    assert roster["Ada"]["sections"] == sum(len(lessons.lesson_data(entry["id"])["sections"])
                                            for entry in lessons.get_path()["lessons"])
    assert [roster[name]["sections_done"] for name in ("Ada", "Bea", "Cal")] == [4, 3, 3]
    backprop = next(entry for entry in roster["Ada"]["grid"] if entry["lesson_id"] == "backprop")
    assert backprop["sections"] == {"predictions": False, "exercises": False, "quiz": False, "explanation": True}
    events = report.timeline(made["class_id"], made["people"]["Bea"].id)["events"]
    assert [e.get("source") or e.get("answer") for e in events] == ["bea 1", "bea 2", "bea 3", "5", "6"]
    assert events[0]["diagnosis"] == HINT and events[2]["diagnosis"] is None
    with pytest.raises(ClassError):
        report.timeline(made["class_id"], made["people"]["Dan"].id)


def test_the_gradebook_has_a_row_per_learner_and_no_formula_cells(made):
    rows = list(csv.reader(io.StringIO(csv_text(ClassReport(made["store"], made["accounts"]).gradebook(made["class_id"])))))
    assert rows[0][:5] == ["learner", "sections done", "lessons done", "exercises passed", "quiz right (first answer)"]
    assert [row[0] for row in rows[1:]] == ["Ada", "Bea", "Cal"]
    assert rows[1][3] == "1" and rows[3][3] == "0"
    assert list(csv.reader(io.StringIO(csv_text([["=HYPERLINK(\"x\")", "-2", 3]])))) == [["'=HYPERLINK(\"x\")", "'-2", "3"]]


def test_a_diagnosis_is_the_graders_hint_else_its_verdict():
    assert diagnosis_of(failing()) == HINT
    assert diagnosis_of(failing(None)) == "wrong numbers, no diagnosis"
    # The verdict alone: its message (here a line of the learner's code) is no part of the group.
    assert diagnosis_of({"verdict": "timeout", "message": "line 3: invalid syntax\nmore"}) == "timeout"


def run_cli(capsys, place: dict, *argv: str) -> tuple[int, str, str]:
    where = ["--database", place["database"]] if "database" in place else ["--data-dir", str(place["data_dir"])]
    code = cli.main(["class", *argv, *where])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_shows_the_same_data(made, capsys):
    place = made["place"]
    code, out, _ = run_cli(capsys, place, "roster", "Physics", "--json")
    assert code == 0
    assert [row["name"] for row in json.loads(out)] == ["Ada", "Bea", "Cal"]
    code, out, _ = run_cli(capsys, place, "exercises", "Physics")
    assert code == 0 and HINT in out and "33 %" in out
    code, out, _ = run_cli(capsys, place, "timeline", "Physics", "Bea")
    assert code == 0 and "    | bea 2" in out
    code, out, _ = run_cli(capsys, place, "gradebook", "Physics", "--csv")
    assert code == 0 and out.splitlines()[1].startswith("Ada,")
    code, _, err = run_cli(capsys, place, "roster", "Biology")
    assert code == 1 and "no class named 'Biology'" in err


def test_class_create_prints_links_that_work(store_place, capsys):
    place = store_place("new")
    code, out, _ = run_cli(capsys, place, "create", "Maths 3", "--url", "https://class.example.org")
    assert code == 0
    links = [line.strip() for line in out.splitlines() if line.startswith("    https://class.example.org/")]
    assert len(links) == 2 and "/set-password/" in links[0] and "/join/" in links[1]
    store = open_store(**place, file_name=CLASS_DATABASE)
    try:
        accounts = Accounts(store, hasher=FAST_HASHER)
        learner = run_coroutine(accounts.join, links[1].rsplit("/", 1)[1], "Eve", PASSWORD)
        assert learner.class_name == "Maths 3"
        assert run_coroutine(accounts.use_link, links[0].rsplit("/", 1)[1], PASSWORD).role == "teacher"
    finally:
        store.close()
    code, _, err = run_cli(capsys, place, "create", "Maths 3")
    assert code == 1 and "exists already" in err


def test_the_cli_makes_new_invite_teacher_and_reset_links(made, capsys):
    place, accounts = made["place"], made["accounts"]
    code, out, _ = run_cli(capsys, place, "questions", "Physics")
    assert code == 0 and f"backprop/{made['question']}" in out and "5 (2x)" in out
    code, out, _ = run_cli(capsys, place, "invite", "Physics", "--url", "https://class.example.org")
    assert code == 0 and out.startswith("https://class.example.org/join/")
    assert accounts.invited_class(out.strip().rsplit("/", 1)[1])[1] == "Physics"
    code, out, _ = run_cli(capsys, place, "teacher-link", "Physics")
    assert code == 0 and accounts.link_account(out.strip().rsplit("/", 1)[1]).role == "teacher"
    code, out, _ = run_cli(capsys, place, "reset-link", "Physics", "Bea")
    assert code == 0 and run_coroutine(accounts.use_link, out.strip().rsplit("/", 1)[1], "a new password!").name == "Bea"
    code, _, err = run_cli(capsys, place, "reset-link", "Physics", "Dan")  # Dan is in Chemistry
    assert code == 1 and "no learner named 'Dan'" in err
