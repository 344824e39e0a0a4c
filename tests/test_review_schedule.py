"""Spaced review: the store schedules quiz questions exactly as py-fsrs does, with an injected clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Card, Rating, Scheduler

from chainrule.progress import interval_phrase, open_store

START = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)


class FakeClock:
    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path, clock):
    opened = open_store(tmp_path, clock=clock, fuzzing=False)
    yield opened
    opened.close()


def fsrs_directly(ratings: list[Rating], start: datetime) -> list[tuple[datetime, timedelta]]:
    """The reference: py-fsrs itself, reviewing one card at each due time.

    Settings as documented in docs/progress.md: py-fsrs defaults, no fuzzing, no learning steps.
    """
    scheduler = Scheduler(enable_fuzzing=False, learning_steps=())
    card = Card(card_id=1, due=start)
    when = start
    schedule = []
    for rating in ratings:
        card, _log = scheduler.review_card(card, rating, review_datetime=when)
        schedule.append((card.due, card.due - when))
        when = card.due
    return schedule


def test_right_right_right_wrong_right_follows_fsrs_good_good_good_again_good(store, clock):
    expected = fsrs_directly([Rating.Good, Rating.Good, Rating.Good, Rating.Again, Rating.Good], START)

    got = [store.answer_question("backprop", "q1-mul", "6", True)]  # answered in the lesson
    for correct in (True, True, False, True):  # then in review, each time when it comes due
        clock.now = datetime.fromisoformat(got[-1]["due"])
        assert [item["question_id"] for item in store.due_reviews()] == ["q1-mul"]
        got.append(store.review("backprop", "q1-mul", "6" if correct else "-6", correct))

    assert [datetime.fromisoformat(item["due"]) for item in got] == [due for due, _ in expected]
    for item, (_due, interval) in zip(got, expected):
        assert item["interval_days"] == pytest.approx(interval.total_seconds() / 86400, abs=1e-9)
    # The ratings were logged in order, Good=3 and Again=1.
    assert [entry["rating"] for entry in store.review_log("backprop", "q1-mul")] == [3, 3, 3, 1, 3]


def test_a_first_right_answer_comes_back_in_days_and_a_wrong_one_sooner(store):
    right = store.answer_question("backprop", "q1", "6", True)
    wrong = store.answer_question("backprop", "q5", "3", False)
    reference = fsrs_directly([Rating.Good], START)[0][1]
    assert right["interval_days"] == pytest.approx(reference.total_seconds() / 86400)
    assert right["interval_days"] >= 1  # "comes back after a few days", not minutes
    assert 0 < wrong["interval_days"] < right["interval_days"]
    assert right["text"] == interval_phrase(reference)


def test_nothing_is_due_before_its_time(store, clock):
    answer = store.answer_question("backprop", "q2", "unchanged", True)
    due = datetime.fromisoformat(answer["due"])
    assert store.due_reviews() == []
    assert store.due_reviews(now=due - timedelta(seconds=1)) == []
    assert store.due_reviews(now=due) == [{"lesson_id": "backprop", "question_id": "q2", "due": answer["due"]}]
    clock.now = due + timedelta(days=30)
    assert len(store.due_reviews()) == 1


def test_undo_restores_the_card_exactly_as_before_the_last_rating(store, clock):
    first = store.answer_question("backprop", "q3", "0.51", True)
    clock.now = datetime.fromisoformat(first["due"])
    store.review("backprop", "q3", "0.51", True)
    before_last = store.card("backprop", "q3")
    second_due = datetime.fromisoformat(store.quiz_answers("backprop")["q3"]["due"])
    clock.now = second_due + timedelta(hours=2)
    store.review("backprop", "q3", "0.49", False)
    assert store.card("backprop", "q3") != before_last

    undone = store.undo_last_review()
    assert undone == {"lesson_id": "backprop", "question_id": "q3", "due": before_last["due"]}
    assert store.card("backprop", "q3") == before_last
    assert [entry["undone"] for entry in store.review_log("backprop", "q3")] == [False, False, True]

    # A second undo goes one more review back; lesson answers are never undone here.
    store.undo_last_review()
    assert store.card("backprop", "q3")["due"] == first["due"]
    assert store.undo_last_review() is None


def test_rating_again_after_undo_gives_the_same_schedule(store, clock):
    first = store.answer_question("backprop", "q4", "reverse", True)
    clock.now = datetime.fromisoformat(first["due"])
    once = store.review("backprop", "q4", "reverse", True)
    store.undo_last_review()
    again = store.review("backprop", "q4", "reverse", True)
    assert again == once


def test_undo_with_nothing_to_undo_returns_none(store):
    assert store.undo_last_review() is None
    store.answer_question("backprop", "q1", "6", True)
    assert store.undo_last_review() is None  # a lesson answer is not a review rating
    assert store.card("backprop", "q1") is not None


@pytest.mark.parametrize(
    ("interval", "phrase"),
    [
        (timedelta(seconds=20), "again in 1 minute"),
        (timedelta(minutes=10), "again in 10 minutes"),
        (timedelta(minutes=59), "again in 59 minutes"),
        (timedelta(hours=1), "again in 1 hour"),
        (timedelta(hours=5, minutes=20), "again in 5 hours"),
        (timedelta(hours=23, minutes=50), "again in 1 day"),
        (timedelta(days=1), "again in 1 day"),
        (timedelta(days=2, hours=3), "again in 2 days"),
        (timedelta(days=2, hours=13), "again in 3 days"),
        (timedelta(days=40), "again in 40 days"),
    ],
)
def test_interval_phrase(interval, phrase):
    assert interval_phrase(interval) == phrase
