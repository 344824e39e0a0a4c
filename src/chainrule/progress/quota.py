"""One storage quota over every table a learner writes (issue 41, items 2 and 3), checked in one place.

    refuse_over_quota(store.database, learner_id, row_cost("some text", at), quota, "This answer")
    stored_chars(conn, learner_id)       # what the learner keeps now, as the quota counts it

What a learner keeps is counted as the characters of every text column of their rows in LEARNER_TABLES,
plus ROW_COST per row (the ids, numbers and times every row holds besides its text: 200,000 tiny rows are
not free). Every path that keeps something a learner sends calls `refuse_over_quota` before writing: an
import (progress/exchange.py), a save, an answer, a review, help opened (progress/store.py, when the store
has a quota), a comment (classes/comments.py). Past the quota it raises StoreError kind OVER_QUOTA, which
web/error_answers.py answers with 413 and this module's sentence; nothing is written.

Every table with a learner column (learner_id, account_id or author_id) is either counted here or listed in
EXEMPT with the reason; tests/test_class_quota.py reads the schema itself, so that a new table a learner
writes cannot be forgotten.
"""

from __future__ import annotations

from typing import Any

from chainrule.progress.store_errors import StoreError

__all__ = ["EXEMPT", "LEARNER_COLUMNS", "LEARNER_TABLES", "OVER_QUOTA", "ROW_COST", "refuse_over_quota",
           "row_cost", "stored_chars"]

OVER_QUOTA = "over-quota"
ROW_COST = 32  # characters a row costs besides its text (keys, numbers, times)
LEARNER_COLUMNS = ("learner_id", "account_id", "author_id")  # the columns that say whose a row is

# table -> (the column naming whose quota the row counts against, the text columns counted)
LEARNER_TABLES: dict[str, tuple[str, tuple[str, ...]]] = {
    "predictions": ("learner_id", ("lesson_id", "key", "at")),
    "code": ("learner_id", ("exercise_id", "language", "source", "at")),
    "submissions": ("learner_id", ("exercise_id", "language", "source", "result", "status", "at")),
    "quiz_answers": ("learner_id", ("lesson_id", "question_id", "answer", "at")),
    "explanations": ("learner_id", ("lesson_id", "text", "ticked", "at")),
    "cards": ("learner_id", ("lesson_id", "question_id", "card")),
    "review_logs": ("learner_id", ("lesson_id", "question_id", "kind", "answer", "log", "previous_card",
                                   "card_after", "at")),
    "help_used": ("learner_id", ("lesson_id", "exercise_id", "kind", "at")),
    # A comment counts against its author (a learner's answers; a teacher's comments count against no one).
    "comments": ("author_id", ("body", "at")),
}

# Tables with a learner column that the quota does not count, and why.
EXEMPT: dict[str, str] = {
    "accounts": "the account itself, made by joining (seats and approval bound them)",
    "roster_entries": "a listed person, made by a teacher's roster import (rows and bytes bounded per import)",
    "one_time_links": "made by a teacher or the command line, one per reset",
    "grading_jobs": "a run waiting for a worker: the queue bounds them per learner and each becomes a submission",
    "lti_users": "one per account, written by the server from the LMS's launch",
    "lti_scores": "one per account and resource, written by the server for the LMS",
    "lti_work_seen": "one per account, written by the server",
    "sso_users": "one per account, written by the server from the sign-in provider",
    "extensions": "written by a teacher",
    "regrade_runs": "written by a teacher's regrade, one per learner",
    "credit_marks": "written by a teacher",
    "audit_log": "written for a teacher's changes",
}


def row_cost(*values: Any) -> int:
    """What one row holding ``values`` costs against the quota (its text and ROW_COST)."""
    return ROW_COST + sum(len(value) for value in values if isinstance(value, str))


def _counted(table: str) -> str:
    owner, columns = LEARNER_TABLES[table]
    text = " + ".join(f"COALESCE(LENGTH({column}), 0)" for column in columns)
    return f"SELECT COALESCE(SUM({text}), 0) + {ROW_COST} * COUNT(*) AS n FROM {table} WHERE {owner} = ?"


_STORED = "SELECT SUM(n) AS chars FROM (" + " UNION ALL ".join(_counted(table) for table in LEARNER_TABLES) + ") AS kept"


def stored_chars(conn: Any, learner_id: int) -> int:
    """What one learner keeps, as the quota counts it (one query over every table in LEARNER_TABLES)."""
    row = conn.execute(_STORED, (int(learner_id),) * len(LEARNER_TABLES)).fetchone()
    return int(row.chars or 0)


def refuse_over_quota(database: Any, learner_id: int, adding: int, quota: int | None, what: str) -> None:
    """StoreError kind OVER_QUOTA when keeping ``adding`` more would take the learner past ``quota`` (None:
    no quota). ``what``: what was refused, as the sentence starts ("This file", "This comment")."""
    if quota is None:
        return
    kept = database.read(lambda conn: stored_chars(conn, learner_id))
    if kept + adding > quota:
        raise StoreError(
            f"{what} would take your storage past its limit: you keep {kept / 1e6:.1f} MB, it adds "
            f"{adding / 1e6:.1f} MB, and each learner may keep {quota / 1e6:.1f} MB (docs/classroom.md, "
            "\"Limits\"). Nothing was saved; ask your teacher if you need more room.", kind=OVER_QUOTA)
