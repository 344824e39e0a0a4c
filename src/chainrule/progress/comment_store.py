"""The SQL of comments on a learner's runs (schema migration 10); classes/comments.py holds the rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record
from chainrule.progress.rows import sound_rows

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

RUN_COLUMNS = ("id", "exercise_id", "language", "source", "status", "at", "origin")
COMMENT_COLUMNS = "c.id, c.submission_id, c.line, c.body, c.at, c.author_id, a.name, a.role"


class TooManyComments(Exception):
    """add: the author wrote as many comments as the rate allows since ``since``; ``oldest``: the first of them."""

    def __init__(self, oldest: str) -> None:
        super().__init__(oldest)
        self.oldest = oldest


class CommentStore:
    """Comments in a progress store's database (a class store's: learner ids are account ids)."""

    def __init__(self, store: ProgressStore) -> None:
        self.database = store.database

    def run_owner(self, submission_id: int) -> Record | None:
        """The run's (learner_id, class_id: their class, source), or None if there is no such run."""
        return self.database.read(lambda conn: conn.execute(
            "SELECT s.learner_id, a.class_id, s.source FROM submissions s JOIN accounts a ON a.id = s.learner_id "
            "WHERE s.id = ?", (int(submission_id),)).fetchone())

    def add(self, learner_id: int, submission_id: int, author_id: int, line: int | None, body: str, at: str,
            *, most: int | None = None, since: str = "") -> int:
        """The new comment's id. most: the author may have written at most this many comments after ``since``
        (TooManyComments otherwise, nothing written); counted in the insert's transaction, with the learner's
        other writes serialized, so comments sent at once are counted one after another."""

        def work(conn: Connection) -> int:
            if most is not None:
                count, oldest = conn.one(
                    "SELECT COUNT(*), MIN(at) FROM comments WHERE learner_id = ? AND author_id = ? AND at > ?",
                    (learner_id, author_id, since))
                if int(count) >= most:
                    raise TooManyComments(oldest)
            return int(conn.one(
                "INSERT INTO comments (learner_id, submission_id, author_id, line, body, at) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (learner_id, submission_id, author_id, line, body, at)).id)

        return self.database.write(work, lock=learner_id)

    def runs(self, learner_id: int, *, limit: int, shown: int, commented_only: bool = False,
             exercise_id: str | None = None) -> tuple[list[Record], list[Record], dict[int, int]]:
        """The learner's latest ``limit`` runs (newest first; only those with a comment, or of one exercise,
        if asked), the latest ``shown`` comments on them (oldest first), and how many comments each has."""

        def work(conn: Connection) -> tuple[list[Record], list[Record], dict[int, int]]:
            where = "learner_id = ?"
            args: list[int | str] = [learner_id]
            if commented_only:
                where += " AND id IN (SELECT submission_id FROM comments WHERE learner_id = ?)"
                args.append(learner_id)
            if exercise_id is not None:
                where += " AND exercise_id = ?"
                args.append(exercise_id)
            runs = sound_rows("submissions", RUN_COLUMNS[1:], keep=1, rows=conn.execute(
                f"SELECT {', '.join(RUN_COLUMNS)} FROM submissions WHERE {where} ORDER BY id DESC LIMIT ?",
                (*args, limit)).fetchall())
            ids = [int(run.id) for run in runs]
            if not ids:
                return runs, [], {}
            marks = ", ".join("?" for _ in ids)
            comments = conn.execute(
                f"SELECT {COMMENT_COLUMNS} FROM comments c LEFT JOIN accounts a ON a.id = c.author_id "
                f"WHERE c.learner_id = ? AND c.submission_id IN ({marks}) ORDER BY c.id DESC LIMIT ?",
                (learner_id, *ids, shown)).fetchall()
            counts = conn.execute(
                f"SELECT submission_id, COUNT(*) FROM comments WHERE learner_id = ? AND submission_id IN ({marks}) "
                "GROUP BY submission_id", (learner_id, *ids)).fetchall()
            return (runs, sound_rows("comments", ("body", "at"), comments[::-1], keep=3),
                    {int(run): int(count) for run, count in counts})

        return self.database.read(work, snapshot=True)

    def earlier(self, learner_id: int, submission_id: int, before: int, shown: int) -> tuple[list[Record], int]:
        """The ``shown`` comments on one run just before comment ``before`` (oldest first), and how many
        earlier ones are left."""

        def work(conn: Connection) -> tuple[list[Record], int]:
            comments = conn.execute(
                f"SELECT {COMMENT_COLUMNS} FROM comments c LEFT JOIN accounts a ON a.id = c.author_id "
                "WHERE c.learner_id = ? AND c.submission_id = ? AND c.id < ? ORDER BY c.id DESC LIMIT ?",
                (learner_id, submission_id, before, shown)).fetchall()
            first = min((int(row.id) for row in comments), default=before)
            left = conn.one("SELECT COUNT(*) AS earlier FROM comments WHERE learner_id = ? AND submission_id = ? "
                            "AND id < ?", (learner_id, submission_id, first)).earlier
            return sound_rows("comments", ("body", "at"), comments[::-1], keep=3), int(left)

        return self.database.read(work, snapshot=True)

    def latest_answers(self, class_id: int, limit: int) -> list[Record]:
        """The class's learners' latest answers: (comment id, run id, line, body, at, learner id, name, exercise)."""
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT c.id, c.submission_id, c.line, c.body, c.at, c.learner_id, a.name, s.exercise_id FROM comments c "
            "JOIN accounts a ON a.id = c.author_id JOIN submissions s ON s.id = c.submission_id "
            "WHERE a.class_id = ? AND a.role = 'learner' ORDER BY c.id DESC LIMIT ?", (int(class_id), limit)).fetchall())
        return sound_rows("comments", ("body", "at"), rows, keep=3)
