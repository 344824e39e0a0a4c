"""The progress database schema, as an ordered list of migrations.

The database's ``PRAGMA user_version`` is the number of migrations already applied. Opening a store
applies the missing ones, in order, each inside the same write transaction that bumps user_version,
so a crash mid-migration leaves the database at the previous version. Never edit a migration that
has shipped: append a new function to MIGRATIONS instead.
"""

from __future__ import annotations

import sqlite3
from typing import Callable


def _run_statements(conn: sqlite3.Connection, script: str) -> None:
    """Run several ";"-separated statements (none may contain ";" inside, comments included)
    inside the caller's transaction.

    (sqlite3's executescript would COMMIT first, breaking the migration's atomicity.)
    """
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _migration_1_initial(conn: sqlite3.Connection) -> None:
    """Everything a learner does: predictions, code, submissions, quiz, explanations, review cards."""
    _run_statements(
        conn,
        """
        CREATE TABLE predictions (
            lesson_id TEXT NOT NULL,
            key       TEXT NOT NULL,
            value     REAL NOT NULL,
            correct   INTEGER NOT NULL,
            at        TEXT NOT NULL,
            PRIMARY KEY (lesson_id, key)
        );
        -- Latest source per exercise and language (the editor's content).
        CREATE TABLE code (
            exercise_id TEXT NOT NULL,
            language    TEXT NOT NULL,
            source      TEXT NOT NULL,
            at          TEXT NOT NULL,
            PRIMARY KEY (exercise_id, language)
        );
        -- Every graded run, kept forever.
        CREATE TABLE submissions (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            exercise_id TEXT NOT NULL,
            language    TEXT NOT NULL,
            source      TEXT NOT NULL,
            result      TEXT NOT NULL,      -- JSON of the grading result
            status      TEXT NOT NULL,      -- result["status"], for counting passes
            at          TEXT NOT NULL
        );
        CREATE INDEX submissions_by_exercise ON submissions (exercise_id, language, id);
        -- Every answer given to a lesson's quiz (not the answers given in review).
        CREATE TABLE quiz_answers (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            lesson_id   TEXT NOT NULL,
            question_id TEXT NOT NULL,
            answer      TEXT NOT NULL,
            correct     INTEGER NOT NULL,
            at          TEXT NOT NULL
        );
        CREATE INDEX quiz_answers_by_question ON quiz_answers (lesson_id, question_id, id);
        CREATE TABLE explanations (
            lesson_id TEXT PRIMARY KEY,
            text      TEXT NOT NULL,
            ticked    TEXT NOT NULL,        -- JSON list of key-idea ids
            at        TEXT NOT NULL
        );
        -- One FSRS card per quiz question (card: fsrs.Card.to_dict() as JSON).
        CREATE TABLE cards (
            lesson_id   TEXT NOT NULL,
            question_id TEXT NOT NULL,
            card        TEXT NOT NULL,
            due_ts      REAL NOT NULL,      -- card.due as epoch seconds, for the due query
            PRIMARY KEY (lesson_id, question_id)
        );
        CREATE INDEX cards_by_due ON cards (due_ts);
        -- One row per rating. previous_card is the card before this rating (NULL if it was new)
        -- so undo can restore it exactly.
        CREATE TABLE review_logs (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            lesson_id     TEXT NOT NULL,
            question_id   TEXT NOT NULL,
            kind          TEXT NOT NULL,    -- 'quiz' (answered in the lesson) or 'review'
            answer        TEXT NOT NULL,
            correct       INTEGER NOT NULL,
            rating        INTEGER NOT NULL,
            log           TEXT NOT NULL,    -- fsrs.ReviewLog.to_dict() as JSON
            previous_card TEXT,
            card_after    TEXT NOT NULL,
            undone        INTEGER NOT NULL DEFAULT 0,
            at            TEXT NOT NULL
        );
        CREATE INDEX review_logs_by_card ON review_logs (lesson_id, question_id, id);
        """
    )


# Ordered; index i holds the migration that takes user_version i to i + 1.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _migration_1_initial,
]

SCHEMA_VERSION = len(MIGRATIONS)
