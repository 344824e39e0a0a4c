"""`chainrule review`: asks what is due, gives feedback and the next date, 'u' undoes, 'q' quits."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Card, Rating, Scheduler

from chainrule.commands.review_session import run_review
from chainrule.progress import open_store

START = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)

# A tiny fixture lesson, so the session logic is tested independently of the real lesson data.
FIXTURE = {
    "double": {"id": "double", "prompt": "What is 2 * 3?", "kind": "number", "options": [], "answer": "6"},
    "colour": {"id": "colour", "prompt": "Which is a colour?", "kind": "choice",
               "options": ["Seven", "Blue", "Tuesday"], "answer": "Blue"},
}


def fixture_question(lesson_id: str, question_id: str) -> dict:
    if lesson_id != "fixture" or question_id not in FIXTURE:
        raise LookupError(f"no question {question_id}")
    return {key: value for key, value in FIXTURE[question_id].items() if key != "answer"}


def fixture_check(lesson_id: str, question_id: str, answer: str) -> dict:
    question = FIXTURE[question_id]
    if question["kind"] == "choice" and answer.isdigit():
        answer = question["options"][int(answer) - 1]
    if question["kind"] == "number":
        try:
            float(answer)
        except ValueError:
            return {"correct": False, "expected": "", "reason": "type a number", "invalid": True}
    return {"correct": answer == question["answer"], "expected": question["answer"], "reason": "because."}


class FakeClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def store(tmp_path, clock):
    opened = open_store(tmp_path, clock=clock, fuzzing=False)
    opened.answer_question("fixture", "double", "6", True)
    opened.answer_question("fixture", "colour", "Seven", False)
    clock.now = START + timedelta(days=10)  # both are due now
    yield opened
    opened.close()


def session(store, text: str) -> str:
    out = io.StringIO()
    assert run_review(store, io.StringIO(text), out, question=fixture_question, check=fixture_check) == 0
    return out.getvalue()


def expected_interval(ratings: list[Rating], times: list[datetime]) -> timedelta:
    """py-fsrs directly (settings as in docs/progress.md): the interval after the last rating."""
    scheduler = Scheduler(enable_fuzzing=False, learning_steps=())
    card = Card(card_id=1, due=times[0])
    for rating, when in zip(ratings, times):
        card, _ = scheduler.review_card(card, rating, review_datetime=when)
    return card.due - times[-1]


def test_lists_what_is_due_asks_each_question_and_says_when_it_comes_back(store, clock):
    output = session(store, "2\n7\n")
    # Due first: colour (answered wrong, due after 1 day), then double.
    assert "2 questions due for review:" in output
    assert output.index("Which is a colour?") < output.index("What is 2 * 3?")
    assert "  2) Blue" in output
    assert "Right. because." in output
    assert "Not quite. The answer is 6. because." in output
    colour_next = expected_interval([Rating.Again, Rating.Good], [START, clock.now])
    double_next = expected_interval([Rating.Good, Rating.Again], [START, clock.now])
    assert f"Next review: again in {round(colour_next / timedelta(days=1))} day" in output
    assert double_next < timedelta(hours=1)  # a lapse: relearning step of minutes
    assert f"Next review: again in {round(double_next / timedelta(minutes=1))} minutes" in output
    assert "Reviewed 2 questions; 0 still due." in output
    assert [entry["rating"] for entry in store.review_log("fixture", "colour")] == [1, 3]
    assert [entry["rating"] for entry in store.review_log("fixture", "double")] == [3, 1]


def test_u_undoes_the_last_rating_and_asks_that_question_again(store):
    card_before = store.card("fixture", "colour")
    output = session(store, "1\nu\n2\nq\n")
    assert "Not quite. The right answer: “Blue”." in output
    assert "Undone: your last rating of fixture/colour" in output
    assert output.count("Which is a colour?") == 3  # the list, the first ask, the ask after undo
    log = store.review_log("fixture", "colour")
    assert [(entry["answer"], entry["undone"]) for entry in log] == [("Seven", False), ("1", True), ("2", False)]
    # The undone rating left no trace on the card: rating again equals rating the original card once.
    scheduler = Scheduler(enable_fuzzing=False, learning_steps=())
    expected, _ = scheduler.review_card(Card.from_dict(card_before), Rating.Good, review_datetime=store.now())
    assert store.card("fixture", "colour") == expected.to_dict()
    assert "Reviewed 1 question; 1 still due." in output


def test_q_quits_and_leaves_the_rest_due(store):
    output = session(store, "q\n")
    assert "Reviewed 0 questions; 2 still due." in output
    assert len(store.due_reviews()) == 2


def test_an_answer_that_cannot_be_checked_is_asked_again_not_recorded(store):
    output = session(store, "2\nsix\n\n6\n")
    assert "type a number" in output
    assert "Type an answer, 'u' to undo or 'q' to quit." in output
    assert [entry["answer"] for entry in store.review_log("fixture", "double")] == ["6", "6"]


def test_end_of_input_stops_cleanly_and_nothing_due_says_when_the_next_comes(store, clock, tmp_path):
    session(store, "2\n6\n")
    assert store.due_reviews() == []
    soonest = min(store.card("fixture", name)["due"] for name in ("colour", "double"))
    output = session(store, "")
    assert "Nothing is due for review right now; the next question comes back " in output
    assert datetime.fromisoformat(soonest).strftime("%Y-%m-%d %H:%M UTC") in output
    empty = open_store(tmp_path / "empty", clock=clock)
    try:
        assert "Nothing to review yet" in session(empty, "")
    finally:
        empty.close()


@pytest.mark.timeout(60)
def test_chainrule_review_in_a_terminal_with_the_real_lesson(tmp_path):
    """The real command, reading stdin, with the questions of the backprop lesson."""
    lessons = pytest.importorskip("chainrule.lessons")
    ids = lessons.question_ids("backprop")
    first = ids[0]
    past = datetime.now(timezone.utc) - timedelta(days=5)
    setup = open_store(tmp_path, clock=lambda: past, fuzzing=False)
    setup.answer_question("backprop", first, "wrong", False)
    due = setup.card("backprop", first)["due"]
    setup.close()
    # The review asks its own variant of the question (fresh numbers), not the lesson's.
    variant = lessons.review_variant("backprop", first, due)
    prompt = lessons.quiz_question("backprop", first, variant)["prompt"]
    assert prompt != lessons.quiz_question("backprop", first)["prompt"]
    verdict = lessons.check_quiz_answer("backprop", first, "999999", variant)
    assert verdict["correct"] is False

    completed = subprocess.run(
        [sys.executable, "-m", "chainrule", "review", "--data-dir", str(tmp_path)],
        input="999999\nu\nq\n", capture_output=True, text=True, timeout=60,
        env={**os.environ, "CHAINRULE_DATA_DIR": str(tmp_path / "not-this-one")},
    )
    assert completed.returncode == 0, completed.stderr
    assert prompt in completed.stdout
    assert "Not quite. The answer is" in completed.stdout
    assert "Next review: again in" in completed.stdout
    assert f"Undone: your last rating of backprop/{first}" in completed.stdout
    assert "Traceback" not in completed.stderr
    check = open_store(tmp_path)
    try:
        assert [entry["undone"] for entry in check.review_log("backprop", first)] == [False, True]
        assert len(check.due_reviews()) == 1
    finally:
        check.close()


@pytest.mark.timeout(60)
def test_chainrule_review_with_a_mistyped_data_dir_says_so_and_creates_nothing(tmp_path):
    typo = tmp_path / "no-such-store"
    completed = subprocess.run(
        [sys.executable, "-m", "chainrule", "review", "--data-dir", str(typo)],
        input="q\n", capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 1
    assert completed.stderr == (
        f"chainrule: error: no progress database at {typo / 'progress.sqlite3'}: "
        "nothing has been saved there yet (check --data-dir)\n"
    )
    assert "Nothing to review" not in completed.stdout
    assert not typo.exists()


def test_a_wrong_choice_is_told_why_that_option_is_wrong_with_the_real_lesson(tmp_path, clock):
    """The hint aimed at the very answer (quiz.json's why_wrong for the option chosen) comes with the answer;
    a general "try once more" would not fit a review, which gives the answer."""
    import json
    from pathlib import Path

    import chainrule.lessons
    from chainrule import lessons

    quiz = json.loads((Path(chainrule.lessons.__file__).parent / "data" / "backprop" / "quiz.json").read_text())
    question = next(q for q in quiz["questions"] if q["id"] == "addition-node")
    opened = open_store(tmp_path, clock=clock, fuzzing=False)
    try:
        opened.answer_question("backprop", "addition-node", "wrong", False)
        due = opened.card("backprop", "addition-node")["due"]
        clock.now = START + timedelta(days=30)
        shown = lessons.quiz_question("backprop", "addition-node", lessons.review_variant("backprop", "addition-node", due))
        chosen = shown["options"].index(question["options"][2])  # "g times q to p, and g times p to q."
        out = io.StringIO()
        assert run_review(opened, io.StringIO(f"{chosen + 1}\nq\n"), out) == 0
    finally:
        opened.close()
    said = out.getvalue()
    right = question["options"][1].rstrip(".")  # said as a quote, its full stop after it
    assert f"Not quite. {question['why_wrong'][2]} The right answer: “{right}”." in said
    assert "try once more" not in said
