"""The SQL of a class's item analysis (classes/item_analysis.py holds the rules): each learner's first try of
every quiz question and exercise, and the review answers asked with fresh numbers, read in one snapshot.

    rows = item_rows(store, class_id, max_learners=2000, max_reviews=50_000)
    rows["first_answers"]   # (learner_id, lesson_id, question_id, correct, at): each learner's first lesson answer
    rows["first_runs"]      # (learner_id, exercise_id, id, status, at): each learner's first run that counts

Only work done in the class counts (origin ''), as the grid's first answers and first runs: never a file a
learner imported, a regrade's run not applied, or a run an applied regrade set aside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record
from chainrule.progress.rows import sound_rows

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

__all__ = ["ItemRows", "item_rows"]

# The learners read: the class's first ``?`` learners by id (the earliest to join), so the cost is bounded.
_LEARNERS = "SELECT id FROM accounts WHERE class_id = ? AND role = 'learner' ORDER BY id LIMIT ?"


class ItemRows(TypedDict):
    learners: list[Record]  # id, name of the learners read
    learners_in_class: int
    first_answers: list[Record]  # learner_id, lesson_id, question_id, correct, at
    first_runs: list[Record]  # learner_id, exercise_id, id, status, at
    reviews: list[Record]  # learner_id, lesson_id, question_id, correct, numbers (a dict): the latest ones


def item_rows(store: ProgressStore, class_id: int, *, max_learners: int, max_reviews: int) -> ItemRows:
    """Each of the class's first ``max_learners`` learners' first try of every item, and the class's latest
    ``max_reviews`` review answers asked with fresh numbers (not undone), in one consistent read."""
    among = f"learner_id IN ({_LEARNERS})"
    bound = (class_id, max_learners)

    def work(conn: Connection) -> ItemRows:
        learners = sound_rows("accounts", ("name",), conn.execute(
            f"SELECT id, name FROM accounts WHERE id IN ({_LEARNERS}) ORDER BY id", bound).fetchall(), keep=1)
        everyone = conn.one("SELECT COUNT(*) AS n FROM accounts WHERE class_id = ? AND role = 'learner'", (class_id,))
        answers = conn.execute(
            "SELECT learner_id, lesson_id, question_id, correct, at FROM quiz_answers WHERE id IN ("
            f"SELECT MIN(id) FROM quiz_answers WHERE {among} AND origin = '' "
            "GROUP BY learner_id, lesson_id, question_id) ORDER BY id", bound).fetchall()
        runs = conn.execute(
            "SELECT learner_id, exercise_id, id, status, at FROM submissions WHERE id IN ("
            f"SELECT MIN(id) FROM submissions WHERE {among} AND origin = '' GROUP BY learner_id, exercise_id) "
            "ORDER BY id", bound).fetchall()
        reviews = conn.execute(
            "SELECT learner_id, lesson_id, question_id, correct, numbers FROM review_logs "
            f"WHERE {among} AND kind = 'review' AND undone = 0 AND numbers IS NOT NULL ORDER BY id DESC LIMIT ?",
            (*bound, max_reviews)).fetchall()
        return {"learners": learners, "learners_in_class": int(everyone.n),
                "first_answers": sound_rows("quiz_answers", ("lesson_id", "question_id", "correct", "at"), answers,
                                            keep=1),
                "first_runs": sound_rows("submissions", ("exercise_id",), runs, keep=1),
                "reviews": sound_rows("review_logs", ("lesson_id", "question_id", "correct", "numbers"), reviews,
                                      keep=1)}

    return store.database.read(work, snapshot=True)
