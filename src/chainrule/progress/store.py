"""ProgressStore: everything a learner does, kept in one database (see docs/progress.md).

The database is one SQLite file in the data folder (a personal store, or a class on one machine), or a
PostgreSQL database by URL (a class on a server); connection.py holds both, migrations.py brings
either to the current schema. Every row belongs to one learner: a personal store's learner is 0, a
class store hands out a view per account with :meth:`ProgressStore.for_learner`. Every write is one
short transaction; every database error becomes a StoreError that says what happened and what to do.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from fsrs import Card, Rating
from fsrs.card import CardDict

from chainrule.progress import schema
from chainrule.progress.connection import (
    DEFAULT_BUSY_TIMEOUT,
    DEFAULT_WRITE_ATTEMPTS,
    Connection,
    Database,
    PostgresDatabase,
    SqliteDatabase,
    missing_store_error,
)
from chainrule.progress.dialect import Record
from chainrule.progress.migrations import apply_migrations, schema_version
from chainrule.progress.rows import sound_rows
from chainrule.progress.scheduling import (
    fitted_parameters,
    interleave_lessons,
    interval_phrase,
    make_scheduler,
    rating_for,
    schedule_summary,
)
from chainrule.progress.shapes import (
    DueReview,
    Explanation,
    LoggedRating,
    Prediction,
    QuizAnswer,
    Schedule,
    UndoneReview,
)
from chainrule.progress.store_errors import CANNOT_OPEN, NOT_FOUND, StoreError
from chainrule.progress.validation import stored_card
from chainrule.text_safety import valid_data

if TYPE_CHECKING:
    from chainrule.progress.finished import Work

DATABASE_NAME = "progress.sqlite3"
ENV_DATA_DIR = "CHAINRULE_DATA_DIR"
PERSONAL_LEARNER = 0  # the one learner of a personal store

Clock = Callable[[], datetime]
T = TypeVar("T")

__all__ = [
    "DATABASE_NAME", "DEFAULT_BUSY_TIMEOUT", "DEFAULT_WRITE_ATTEMPTS", "ENV_DATA_DIR", "NOT_FOUND",
    "PERSONAL_LEARNER", "ProgressStore", "default_data_dir", "missing_store_error", "open_store", "system_clock",
]


def default_data_dir() -> Path:
    """$CHAINRULE_DATA_DIR if set, else platformdirs' user_data_dir("chainrule")."""
    from_env = os.environ.get(ENV_DATA_DIR)
    if from_env:
        return Path(from_env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("chainrule"))


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def origin_of_key(key: str | None) -> str:
    """The origin a graded run is kept with, from its request key: a teacher's regrade's run (key
    'regrade-<id>-...', classes/regrade.py) is kept apart as 'regrade:<id>' (it counts for nothing until
    the teacher applies the regrade); every other run is the learner's own ('')."""
    match = re.match(r"regrade-(\d+)-", key or "")
    return f"regrade:{match.group(1)}" if match else ""


def work_time(at: Any) -> str | None:
    """A run's given work time as it is kept (ISO 8601 in UTC), or None when it is not an aware time."""
    try:
        moment = at if isinstance(at, datetime) else datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return None
    return None if moment.tzinfo is None else _iso(moment.astimezone(timezone.utc))


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _require_text(name: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value:
        raise ValueError(f"{name} must be a non-empty string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{name} contains an invalid character (a lone UTF-16 surrogate)") from None
    return value


class _AlreadyKept(Exception):
    """Rolls back a submission whose claim failed (see record_submission)."""


class ProgressStore:
    """A learner's progress in a database (SQLite or PostgreSQL). Create it with :func:`open_store`.

    Safe to share between threads (each thread gets its own connection) and to use from several
    processes on the same database at once. :meth:`for_learner` gives another learner's view of the
    same database, sharing its connections.
    """

    def __init__(
        self,
        database: Database,
        clock: Clock | None = None,
        *,
        fuzzing: bool = True,
        learner_id: int = PERSONAL_LEARNER,
    ) -> None:
        self.database = database
        self.path: Path | None = getattr(database, "path", None)  # None for PostgreSQL
        self.data_dir = None if self.path is None else self.path.parent
        self.where = database.where  # the file, or the URL without its password, for messages
        self._clock: Clock = clock or system_clock
        self.scheduler = make_scheduler(fuzzing)
        self.fuzzing = fuzzing
        self.learner_id = int(learner_id)
        self.quota: int | None = None  # the most a learner may keep (class mode): progress/quota.py
        self.repaired = 0  # how many unreadable text values initialize() repaired (see repair.py)

    def for_learner(self, learner_id: int) -> "ProgressStore":
        """The same database seen as another learner's store (for class mode: one per account)."""
        if isinstance(learner_id, bool) or not isinstance(learner_id, int) or learner_id < 0:
            raise ValueError(f"a learner id is a whole number >= 0, got {learner_id!r}")
        view = copy.copy(self)
        view.learner_id = learner_id
        return view

    # ---------------------------------------------------------------- connections and transactions

    def now(self) -> datetime:
        """The clock's current time, as an aware UTC datetime."""
        moment = self._clock()
        if not isinstance(moment, datetime) or moment.tzinfo is None:
            raise ValueError("the store's clock must return a timezone-aware datetime")
        return moment.astimezone(timezone.utc)

    def close(self) -> None:
        """Close every connection this store (and every view of it) opened in this process."""
        self.database.close()

    def __enter__(self) -> "ProgressStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in one transaction, serialized with this learner's other writes."""
        return self.database.write(work, lock=self.learner_id)

    def _refuse_over_quota(self, what: str, *values: Any) -> None:
        """StoreError over-quota (413) if keeping a row of ``values`` takes the learner past ``self.quota``."""
        if self.quota is not None:
            from chainrule.progress.quota import refuse_over_quota, row_cost

            refuse_over_quota(self.database, self.learner_id, row_cost(*values), self.quota, what)

    def _read(self, work: Callable[[Connection], T], *, snapshot: bool = False) -> T:
        """Run a read; ``snapshot=True`` wraps several SELECTs in one transaction (a consistent view)."""
        return self.database.read(work, snapshot=snapshot)

    # ---------------------------------------------------------------- schema

    def initialize(self, *, check_integrity: bool = True) -> None:
        """Check the database, apply missing migrations, repair text that cannot be read back."""
        self.database.prepare(check_integrity=check_integrity)
        apply_migrations(self.database, schema.MIGRATIONS)
        self.repaired = self.database.repair_text()

    def schema_version(self) -> int:
        return self._read(schema_version)

    # ---------------------------------------------------------------- predictions

    def save_prediction(self, lesson_id: str, key: str, value: float, correct: bool) -> None:
        """Keep the learner's latest prediction for ``key`` (one per lesson and key); ``first_at`` stays when it
        was first made (what its section's lateness is judged by: classes/deadlines.py)."""
        _require_text("lesson_id", lesson_id)
        _require_text("key", key)
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"a prediction must be a finite number, got {value!r}")
        at = _iso(self.now())
        self._refuse_over_quota("This prediction", lesson_id, key, at)
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO predictions (learner_id, lesson_id, key, value, correct, at, first_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (learner_id, lesson_id, key) DO UPDATE SET value = excluded.value, "
                "correct = excluded.correct, at = excluded.at, "
                "first_at = COALESCE(predictions.first_at, predictions.at)",
                (self.learner_id, lesson_id, key, number, int(bool(correct)), at, at),
            )
        )

    def predictions(self, lesson_id: str) -> dict[str, Prediction]:
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT key, value, correct, at FROM predictions WHERE learner_id = ? AND lesson_id = ? ORDER BY key",
                (self.learner_id, lesson_id),
            ).fetchall()
        )
        rows = sound_rows("predictions", ("key", "value", "correct", "at"), rows)
        return {key: {"value": value, "correct": correct, "at": at} for key, value, correct, at in rows}

    # ---------------------------------------------------------------- code and submissions

    def _upsert_code(self, conn: Connection, exercise_id: str, language: str, source: str, at: str) -> None:
        conn.execute(
            "INSERT INTO code (learner_id, exercise_id, language, source, at, first_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (learner_id, exercise_id, language) DO UPDATE SET source = excluded.source, at = excluded.at, "
            "first_at = COALESCE(code.first_at, code.at)",
            (self.learner_id, exercise_id, language, source, at, at),
        )

    def save_code(self, exercise_id: str, language: str, source: str) -> None:
        """Keep the latest code the learner wrote for one exercise in one language."""
        _require_text("exercise_id", exercise_id)
        _require_text("language", language)
        _require_text("source", source, allow_empty=True)
        at = _iso(self.now())
        self._refuse_over_quota("This code", exercise_id, language, source, at)
        self._write(lambda conn: self._upsert_code(conn, exercise_id, language, source, at))

    def latest_code(self) -> dict[str, str]:
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT exercise_id, language, source FROM code WHERE learner_id = ? ORDER BY exercise_id, language",
                (self.learner_id,),
            ).fetchall()
        )
        rows = sound_rows("code", ("exercise_id", "language", "source"), rows)
        return {f"{exercise}/{language}": source for exercise, language, source in rows}

    def record_submission(self, exercise_id: str, language: str, source: str, result: dict[str, Any],
                          *, claim: Callable[[Connection, int], bool] | None = None, origin: str = "",
                          at: str | None = None) -> int | None:
        """Keep one graded run (source and result); it also becomes the latest code. Returns its id.

        at: the run's work time, when the server accepted it (classes/graded_runs.py's Submission.accepted; a
        regrade's run: the time of the run it grades again), ISO 8601 with its offset; default now. Credit
        judges lateness by it (classes/deadlines.py): a queue's or a grader's delay never makes work late.

        origin: '' for the learner's own run; a teacher's regrade keeps its runs apart (origin_of_key), and
        such a run does not become the learner's latest code.

        claim(conn, submission_id) runs in the same transaction after the insert (class mode's job queue
        marks its job graded there): if it returns False, the run was already kept, nothing is written
        and None is returned, so a job graded twice counts once."""
        _require_text("exercise_id", exercise_id)
        _require_text("language", language)
        _require_text("source", source, allow_empty=True)
        if not isinstance(result, dict):
            raise ValueError(f"result must be a dict (the grading result), got {type(result).__name__}")
        try:
            # The grader already hands over valid text; a result from elsewhere is made valid here so
            # that the store never holds a string that cannot be encoded (and the run is not lost).
            result_json = json.dumps(valid_data(result), sort_keys=True)
        except (TypeError, ValueError) as error:
            raise ValueError(f"result must be JSON-serialisable (the grading result dict): {error}") from error
        status = str(result.get("status", ""))
        at = work_time(at) or _iso(self.now())

        def work(conn: Connection) -> int:
            submission_id = conn.one(
                "INSERT INTO submissions (learner_id, exercise_id, language, source, result, status, at, origin) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (self.learner_id, exercise_id, language, source, result_json, status, at, origin),
            ).id
            if claim is not None and not claim(conn, int(submission_id)):
                raise _AlreadyKept
            if not origin:
                self._upsert_code(conn, exercise_id, language, source, at)
            return int(submission_id)

        try:
            return self._write(work)
        except _AlreadyKept:
            return None

    def latest_results(self) -> dict[str, dict[str, Any]]:
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT exercise_id, language, result FROM submissions WHERE id IN "
                "(SELECT MAX(id) FROM submissions WHERE learner_id = ? AND origin = '' GROUP BY exercise_id, language) "
                "ORDER BY exercise_id, language",
                (self.learner_id,),
            ).fetchall()
        )
        rows = sound_rows("submissions", ("exercise_id", "language", "result"), rows)
        return {f"{exercise}/{language}": result for exercise, language, result in rows}

    def submission_count(self) -> int:
        return self._read(
            lambda conn: int(conn.one(
                "SELECT COUNT(*) AS runs FROM submissions WHERE learner_id = ?", (self.learner_id,)
            ).runs)
        )

    def last_passing_code(self, exercise_id: str, language: str) -> str | None:
        """The code of the learner's latest run of this exercise in this language that passed (their own runs,
        not a teacher's regrades), or None: a step that continues it starts from this code."""
        _require_text("exercise_id", exercise_id)
        _require_text("language", language)
        row = self._read(
            lambda conn: conn.execute(
                "SELECT source FROM submissions WHERE learner_id = ? AND exercise_id = ? AND language = ? "
                "AND status = 'pass' AND origin = '' ORDER BY id DESC LIMIT 1",
                (self.learner_id, exercise_id, language),
            ).fetchone()
        )
        return None if row is None else str(row.source)

    def failed_runs(self, exercise_id: str) -> int:
        """How many graded runs of this exercise, in any language, did not pass (they unlock its model solution)."""
        _require_text("exercise_id", exercise_id)
        return self._read(
            lambda conn: int(conn.one(
                "SELECT COUNT(*) AS runs FROM submissions WHERE learner_id = ? AND exercise_id = ? "
                "AND status != 'pass' AND origin = ''",
                (self.learner_id, exercise_id),
            ).runs)
        )

    # ---------------------------------------------------------------- quiz and review cards

    def _load_card(self, conn: Connection, lesson_id: str, question_id: str) -> str | None:
        row = conn.execute(
            "SELECT card FROM cards WHERE learner_id = ? AND lesson_id = ? AND question_id = ?",
            (self.learner_id, lesson_id, question_id),
        ).fetchone()
        return None if row is None else row.card

    def _put_card(self, conn: Connection, lesson_id: str, question_id: str, card: Card) -> None:
        conn.execute(
            "INSERT INTO cards (learner_id, lesson_id, question_id, card, due_ts) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (learner_id, lesson_id, question_id) DO UPDATE SET card = excluded.card, "
            "due_ts = excluded.due_ts",
            (self.learner_id, lesson_id, question_id, json.dumps(card.to_dict(), sort_keys=True),
             card.due.timestamp()),
        )

    def _rate(
        self, conn: Connection, kind: str, lesson_id: str, question_id: str, answer: str, correct: bool,
        now: datetime, numbers: dict[str, float] | None = None,
    ) -> Schedule:
        """Rate the question's card (creating it if new) and log the rating with the card before it."""
        previous_json = self._load_card(conn, lesson_id, question_id)
        card = None if previous_json is None else stored_card(previous_json, f"card {lesson_id}/{question_id}")
        if card is None:  # new, or a stored card the scheduler cannot review (reported): start it afresh
            previous_json = None
            card = Card(card_id=int(now.timestamp() * 1000), due=now)
        rating: Rating = rating_for(correct)
        fitted = fitted_parameters(conn, self.learner_id)  # FSRS fitted to the logs, when it predicts better
        scheduler = self.scheduler if fitted is None else make_scheduler(self.fuzzing, fitted)
        new_card, log = scheduler.review_card(card, rating, review_datetime=now)
        self._put_card(conn, lesson_id, question_id, new_card)
        conn.execute(
            "INSERT INTO review_logs (learner_id, lesson_id, question_id, kind, answer, correct, rating, log, "
            "previous_card, card_after, at, numbers) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                self.learner_id, lesson_id, question_id, kind, answer, int(bool(correct)), int(rating),
                json.dumps(log.to_dict(), sort_keys=True), previous_json,
                json.dumps(new_card.to_dict(), sort_keys=True), _iso(now), json.dumps(numbers) if numbers else None,
            ),
        )
        return schedule_summary(new_card.due, now)

    def answer_question(
        self, lesson_id: str, question_id: str, answer: str, correct: bool, *, first_only: bool = False
    ) -> Schedule:
        """Keep a lesson quiz answer and schedule the question for review (right: Good, wrong: Again).

        first_only=True rates only the question's first answer: a later one (a retry after seeing the
        answer) is kept as practice and leaves the card as it is; the check and the write are one
        transaction, so two tabs answering at once rate it once.
        Returns {"due": ISO 8601, "interval_days": float, "text": "again in 2 days"}, with "rated": bool
        when first_only is given.
        """
        _require_text("lesson_id", lesson_id)
        _require_text("question_id", question_id)
        _require_text("answer", answer, allow_empty=True)
        now = self.now()
        self._refuse_over_quota("This answer", lesson_id, question_id, answer, _iso(now))

        def work(conn: Connection) -> Schedule:
            earlier = conn.execute(
                "SELECT 1 FROM quiz_answers WHERE learner_id = ? AND lesson_id = ? AND question_id = ? LIMIT 1",
                (self.learner_id, lesson_id, question_id),
            ).fetchone()
            conn.execute(
                "INSERT INTO quiz_answers (learner_id, lesson_id, question_id, answer, correct, at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (self.learner_id, lesson_id, question_id, answer, int(bool(correct)), _iso(now)),
            )
            card_json = self._load_card(conn, lesson_id, question_id)
            where = f"card {lesson_id}/{question_id}"
            card = None if card_json is None else stored_card(card_json, where, review=False)
            if first_only and earlier is not None and card is not None:
                return schedule_summary(card.due, now) | {"rated": False}
            rated = self._rate(conn, "quiz", lesson_id, question_id, answer, correct, now)
            return rated | {"rated": True} if first_only else rated

        return self._write(work)

    def quiz_answers(self, lesson_id: str) -> dict[str, QuizAnswer]:
        """Latest lesson answer per question, with when its review card is now due."""

        def work(conn: Connection) -> list[Record]:
            return conn.execute(
                "SELECT q.question_id, q.answer, q.correct, q.at, c.card, "
                "(SELECT COUNT(*) FROM quiz_answers n WHERE n.learner_id = q.learner_id "
                "AND n.lesson_id = q.lesson_id AND n.question_id = q.question_id) "
                "FROM quiz_answers q "
                "LEFT JOIN cards c ON c.learner_id = q.learner_id AND c.lesson_id = q.lesson_id "
                "AND c.question_id = q.question_id "
                "WHERE q.id IN (SELECT MAX(id) FROM quiz_answers WHERE learner_id = ? AND lesson_id = ? "
                "GROUP BY question_id) "
                "ORDER BY q.question_id",
                (self.learner_id, lesson_id),
            ).fetchall()

        answers: dict[str, QuizAnswer] = {}
        rows = sound_rows("quiz_answers", ("question_id", "answer", "correct", "at"), self._read(work, snapshot=True))
        for question_id, answer, correct, at, card_json, attempts in rows:
            # attempts: how many times it was answered in the lesson (after the first: practice).
            entry: QuizAnswer = {"answer": answer, "correct": correct, "at": at, "due": None, "text": "",
                     "attempts": int(attempts)}
            where = f"card {lesson_id}/{question_id}"
            card = None if card_json is None else stored_card(card_json, where, review=False)
            if card is not None:
                entry["due"] = _iso(card.due)
                if card.last_review is not None:
                    entry["text"] = interval_phrase(card.due - card.last_review)
            answers[question_id] = entry
        return answers

    def due_reviews(self, now: datetime | None = None) -> list[DueReview]:
        """Questions whose card is due at ``now`` (default: the clock), mixed across lessons: one from each
        lesson in turn, each lesson's in the order they are due (scheduling.interleave_lessons)."""
        moment = self.now() if now is None else now.astimezone(timezone.utc)
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT lesson_id, question_id, card FROM cards WHERE learner_id = ? AND due_ts <= ? "
                "ORDER BY due_ts, lesson_id, question_id",
                (self.learner_id, moment.timestamp()),
            ).fetchall()
        )
        cards = [(lesson_id, question_id, stored_card(card, f"card {lesson_id}/{question_id}"))
                 for lesson_id, question_id, card in rows]
        return interleave_lessons([{"lesson_id": lesson_id, "question_id": question_id, "due": card.due.isoformat()}
                                   for lesson_id, question_id, card in cards if card is not None])

    def next_due(self) -> str | None:
        """When the earliest review card is due (ISO 8601), or None if there are no cards."""
        rows = self._read(lambda conn: conn.execute(
            "SELECT card FROM cards WHERE learner_id = ? ORDER BY due_ts", (self.learner_id,)).fetchall())
        due = (stored_card(card, "a review card", review=False) for (card,) in rows)
        return next((card.due.isoformat() for card in due if card is not None), None)

    def review(self, lesson_id: str, question_id: str, answer: str, correct: bool,
               numbers: dict[str, float] | None = None) -> Schedule:
        """Rate a question answered in review (asked with fresh ``numbers``, if any); as answer_question."""
        _require_text("lesson_id", lesson_id)
        _require_text("question_id", question_id)
        _require_text("answer", answer, allow_empty=True)
        self._refuse_over_quota("This answer", lesson_id, question_id, answer, _iso(now := self.now()))
        return self._write(lambda c: self._rate(c, "review", lesson_id, question_id, answer, correct, now, numbers))

    def undo_last_review(self) -> UndoneReview | None:
        """Undo the most recent rating made in review: its card goes back exactly as it was before.

        Lesson quiz answers are not undone here (they are the learner's recorded answers). Calling
        again undoes the review before that. Returns {"lesson_id", "question_id", "due"} or None.
        """

        def work(conn: Connection) -> UndoneReview | None:
            row = conn.execute(
                "SELECT id, lesson_id, question_id, previous_card FROM review_logs "
                "WHERE learner_id = ? AND kind = 'review' AND undone = 0 ORDER BY id DESC LIMIT 1",
                (self.learner_id,),
            ).fetchone()
            if row is None:
                return None
            log_id, lesson_id, question_id, previous_json = row
            later = conn.execute(
                "SELECT 1 FROM review_logs WHERE learner_id = ? AND lesson_id = ? AND question_id = ? AND id > ? "
                "AND undone = 0",
                (self.learner_id, lesson_id, question_id, log_id),
            ).fetchone()
            if later is not None:
                return None  # the card was rated again in the lesson since: undoing would lose that
            conn.execute("UPDATE review_logs SET undone = 1 WHERE id = ?", (log_id,))
            if previous_json is None:
                conn.execute(
                    "DELETE FROM cards WHERE learner_id = ? AND lesson_id = ? AND question_id = ?",
                    (self.learner_id, lesson_id, question_id),
                )
                return {"lesson_id": lesson_id, "question_id": question_id, "due": None}
            previous = stored_card(previous_json, f"review log {log_id}")
            if previous is None:  # reported: the card stays as it is
                return None
            conn.execute(
                "UPDATE cards SET card = ?, due_ts = ? WHERE learner_id = ? AND lesson_id = ? AND question_id = ?",
                (previous_json, previous.due.timestamp(), self.learner_id, lesson_id, question_id),
            )
            return {"lesson_id": lesson_id, "question_id": question_id, "due": _iso(previous.due)}

        return self._write(work)

    def card(self, lesson_id: str, question_id: str) -> CardDict | None:
        """The question's FSRS card as fsrs.Card.to_dict(), or None if it has none yet."""
        card_json = self._read(lambda conn: self._load_card(conn, lesson_id, question_id))
        if card_json is None or stored_card(card_json, f"card {lesson_id}/{question_id}", review=False) is None:
            return None
        card: CardDict = json.loads(card_json)  # stored_card checked it is one
        return card

    def review_log(self, lesson_id: str, question_id: str) -> list[LoggedRating]:
        """Every rating of one question, oldest first (undone ones included, marked)."""
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT kind, answer, correct, rating, at, undone FROM review_logs "
                "WHERE learner_id = ? AND lesson_id = ? AND question_id = ? ORDER BY id",
                (self.learner_id, lesson_id, question_id),
            ).fetchall()
        )
        rows = sound_rows("review_logs", ("kind", "answer", "correct", "rating", "at", "undone"), rows)
        return [
            {"kind": kind, "answer": answer, "correct": correct, "rating": rating, "at": at, "undone": undone}
            for kind, answer, correct, rating, at, undone in rows
        ]

    # ---------------------------------------------------------------- explanations

    def save_explanation(self, lesson_id: str, text: str, ticked: list[str]) -> None:
        """Keep the learner's own explanation and the key ideas they ticked as covered; ``first_at`` stays when
        it was first written (not empty): a typo fixed later does not make it late (classes/deadlines.py)."""
        _require_text("lesson_id", lesson_id)
        _require_text("text", text, allow_empty=True)
        if not isinstance(ticked, (list, tuple)) or not all(isinstance(item, str) for item in ticked):
            raise ValueError("ticked must be a list of key-idea ids (strings)")
        for item in ticked:
            _require_text("a ticked key-idea id", item)
        at = _iso(self.now())
        self._refuse_over_quota("This explanation", lesson_id, text, *ticked, at)
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO explanations (learner_id, lesson_id, text, ticked, at, first_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (learner_id, lesson_id) DO UPDATE SET text = excluded.text, ticked = excluded.ticked, "
                "at = excluded.at, first_at = COALESCE(explanations.first_at, "
                "CASE WHEN explanations.text != '' THEN explanations.at END, excluded.first_at)",
                (self.learner_id, lesson_id, text, json.dumps(list(ticked)), at, at if text else None),
            )
        )

    def explanation(self, lesson_id: str) -> Explanation | None:
        row = self._read(
            lambda conn: conn.execute(
                "SELECT text, ticked, at FROM explanations WHERE learner_id = ? AND lesson_id = ?",
                (self.learner_id, lesson_id),
            ).fetchone()
        )
        rows = sound_rows("explanations", ("text", "ticked", "at"), [] if row is None else [row])
        if not rows:
            return None
        text, ticked, at = rows[0]
        return {"text": text, "ticked": ticked, "at": at}

    def record_help(self, lesson_id: str, exercise_id: str, kind: str, number: int = 0) -> None:
        """Keep that the learner opened hint ``number`` of an exercise (kind "hint"), or was shown its model
        solution (kind "solution", number 0): the teacher's view tells such a pass from an earned one."""
        _require_text("lesson_id", lesson_id)
        _require_text("exercise_id", exercise_id)
        if kind not in ("hint", "solution") or not isinstance(number, int) or number < 0:
            raise ValueError("help is a hint (its number, from 1) or the solution (number 0)")
        at = _iso(self.now())
        self._refuse_over_quota("Opening this help", lesson_id, exercise_id, kind, at)
        self._write(lambda conn: conn.execute(
            "INSERT INTO help_used (learner_id, lesson_id, exercise_id, kind, number, at) VALUES (?, ?, ?, ?, ?, ?)",
            (self.learner_id, lesson_id, exercise_id, kind, number, at)))

    # ---------------------------------------------------------------- summary, export, import

    def work(self) -> Work:
        """This learner's work, every lesson's (progress.finished.Work): what "finished" is decided from,
        with chainrule.lessons.lesson_shape(lesson_id) and progress.finished.lesson_state."""
        from chainrule.progress.finished import Work, learner_work

        found = self._read(lambda conn: learner_work(conn, "learner_id = ?", (self.learner_id,)), snapshot=True)
        return found.get(self.learner_id, Work())

    def export_data(self) -> dict[str, Any]:
        """Everything stored, as a JSON-able, versioned dict (format described in docs/progress.md)."""
        from chainrule.progress.exchange import export_rows

        return self._read(lambda conn: export_rows(conn, self.now(), self.learner_id), snapshot=True)

    def import_data(self, data: Any, *, origin: str = "", quota: int | None = None) -> dict[str, Any]:
        """Validate ``data`` completely, then add it (progress/exchange.py's import_rows: compared in linear
        time, written in short batches; importing the same file again adds nothing). On a bad file raise
        StoreError and change nothing. Returns counts of rows added per table."""
        added = self.import_runs(data, origin=origin, quota=quota)
        added.pop("new_runs")
        return added

    def import_runs(self, data: Any, *, origin: str = "", quota: int | None = None) -> dict[str, Any]:
        """import_data, whose answer also lists the runs added under "new_runs": (exercise, language,
        source, at), oldest first (a class grades them again: classes/imports.py)."""
        from chainrule.progress.exchange import import_rows, validate_export

        validate_export(data)
        with _import_lock(self.learner_id):
            return import_rows(self, data, origin=origin, quota=quota)


_IMPORT_LOCKS: dict[int, threading.Lock] = {}
_IMPORT_LOCKS_GUARD = threading.Lock()


def _import_lock(learner_id: int) -> threading.Lock:
    """One import at a time per learner in this process: the second compares against the first's rows."""
    with _IMPORT_LOCKS_GUARD:
        return _IMPORT_LOCKS.setdefault(learner_id, threading.Lock())


def open_store(
    data_dir: str | os.PathLike[str] | None = None,
    clock: Clock | None = None,
    *,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    write_attempts: int = DEFAULT_WRITE_ATTEMPTS,
    fuzzing: bool = True,
    check_integrity: bool = True,
    create: bool = True,
    database: str | None = None,
    file_name: str = DATABASE_NAME,
    pool_size: int | None = None,
) -> ProgressStore:
    """Open (creating and migrating if needed) the progress store in ``data_dir``, or in PostgreSQL.

    data_dir: default $CHAINRULE_DATA_DIR, else platformdirs.user_data_dir("chainrule").
    clock: ``clock() -> aware datetime``, default the system clock (tests inject their own).
    fuzzing: False makes FSRS intervals deterministic.
    create: False (for commands that only read, such as `progress info`) creates neither the
    directory nor the database: if no database exists there, a StoreError of kind NOT_FOUND is raised,
    so a mistyped --data-dir is reported instead of showing an empty store.
    database: a postgresql:// URL puts the store in that PostgreSQL database instead (data_dir is
    then not used). file_name: the SQLite file in data_dir (a class keeps its own, classes.CLASS_DATABASE).
    pool_size: with PostgreSQL, the connections this process opens at most (default DEFAULT_POOL_SIZE).
    Raises StoreError if the store cannot be used.
    """
    if database is not None:
        pool = {} if pool_size is None else {"pool_size": pool_size}
        return _initialized(ProgressStore(PostgresDatabase(database, write_attempts=write_attempts, **pool), clock,
                                          fuzzing=fuzzing), check_integrity)
    directory = Path(data_dir).expanduser() if data_dir is not None else default_data_dir()
    path = directory / file_name
    if not create and not path.is_file():
        raise missing_store_error(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StoreError(
            f"The progress directory {directory} cannot be created ({error.strerror or error}). "
            "Make its parent writable for your user, or start chainrule with --data-dir pointing "
            "to a writable directory.",
            kind=CANNOT_OPEN,
            path=path,
        ) from error
    sqlite = SqliteDatabase(path, create=create, busy_timeout=busy_timeout, write_attempts=write_attempts)
    return _initialized(ProgressStore(sqlite, clock, fuzzing=fuzzing), check_integrity)


def _initialized(store: ProgressStore, check_integrity: bool) -> ProgressStore:
    try:
        store.initialize(check_integrity=check_integrity)
    except BaseException:
        store.close()
        raise
    return store
