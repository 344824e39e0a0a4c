"""What the store hands to its readers (the web's JSON, the CLI, classes/): each answer's keys and their types.

Dicts, not classes, because they go out as JSON as they are; TypedDicts so that a reader and the type
checker know every key.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class Prediction(TypedDict):
    """ProgressStore.predictions: the learner's latest prediction for one key of a lesson."""

    value: float
    correct: bool
    at: str  # ISO 8601


class Schedule(TypedDict):
    """answer_question and review: when the question's review card is next due."""

    due: str  # ISO 8601
    interval_days: float
    text: str  # "again in 2 days"
    rated: NotRequired[bool]  # answer_question(first_only=True): whether this answer rated the card


class QuizAnswer(TypedDict):
    """ProgressStore.quiz_answers: the latest lesson answer to one question, and when its card is due."""

    answer: str
    correct: bool
    at: str
    due: str | None  # None: no review card (or one no reader could use)
    text: str  # "again in 2 days", or "" before the card's first review
    attempts: int  # how many times it was answered in the lesson (after the first: practice)


class DueReview(TypedDict):
    """ProgressStore.due_reviews: one question whose review card is due."""

    lesson_id: str
    question_id: str
    due: str


class UndoneReview(TypedDict):
    """ProgressStore.undo_last_review: the question whose rating was undone, and when its card is due now."""

    lesson_id: str
    question_id: str
    due: str | None  # None: the card was new before that rating, so it is gone


class LoggedRating(TypedDict):
    """ProgressStore.review_log: one rating of a question."""

    kind: str  # "quiz" or "review"
    answer: str
    correct: bool
    rating: int  # FSRS's 1 (Again) to 4 (Easy)
    at: str
    undone: bool


class Explanation(TypedDict):
    """ProgressStore.explanation: the learner's own explanation of a lesson and the key ideas they ticked."""

    text: str
    ticked: list[str]
    at: str


class Mark(TypedDict):
    """A teacher's mark on one learner's lesson or exercise (progress/mark_store.py)."""

    kind: str  # what the teacher set (classes/overrides.py)
    credit: float | None  # the credit set by hand, or None
    reason: str


class DeadlineSettings(TypedDict):
    """DeadlineStore.settings: what a class's credit is judged by (classes/deadlines.py)."""

    time_zone: str
    late_policy: str
    late_percent: int
    due: dict[tuple[str, str], str]  # (lesson, exercise or ''): due, ISO 8601
    extensions: dict[tuple[int, str], str]  # (learner, lesson): due
    marks: dict[tuple[int, str, str], Mark]  # (learner, lesson, exercise or '')


class JobStatus(TypedDict):
    """RunJobs.status: where a learner's graded run is (the page that waits for it asks)."""

    job: int
    state: str  # queued, running, graded or ended (progress/run_jobs.py)
    exercise: str
    language: str
    position: NotRequired[int]  # a queued run: 1 for the next a worker takes
    poll_after: NotRequired[float]  # an open run: seconds before the page asks again
    result: NotRequired[dict[str, Any]]  # a graded run: its result
    ended: NotRequired[dict[str, Any]]  # a run that ended without a grade: {"verdict", "detail"?}
