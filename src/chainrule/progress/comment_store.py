"""The SQL of comments on a learner's runs (schema migration 10); classes/comments.py holds the rules."""

from __future__ import annotations

from chainrule.progress.connection import Connection
from chainrule.progress.rows import sound_rows

RUN_COLUMNS = ("id", "exercise_id", "language", "source", "status", "at", "origin")


class CommentStore:
    """Comments in a progress store's database (a class store's: learner ids are account ids)."""

    def __init__(self, store) -> None:
        self.database = store.database

    def run_owner(self, submission_id: int) -> tuple[int, int, str] | None:
        """(learner id, their class id, the run's source) of a run, or None if there is no such run."""
        row = self.database.read(lambda conn: conn.execute(
            "SELECT s.learner_id, a.class_id, s.source FROM submissions s JOIN accounts a ON a.id = s.learner_id "
            "WHERE s.id = ?", (int(submission_id),)).fetchone())
        return None if row is None else (int(row[0]), int(row[1]), row[2])

    def add(self, learner_id: int, submission_id: int, author_id: int, line: int | None, body: str, at: str) -> int:
        def work(conn: Connection) -> int:
            return int(conn.execute(
                "INSERT INTO comments (learner_id, submission_id, author_id, line, body, at) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (learner_id, submission_id, author_id, line, body, at)).fetchone()[0])

        return self.database.write(work)

    def runs(self, learner_id: int, *, limit: int, commented_only: bool = False,
             exercise_id: str | None = None) -> tuple[list[tuple], list[tuple]]:
        """The learner's latest ``limit`` runs (newest first; only those with a comment, or of one exercise,
        if asked) and every comment on them, oldest first."""

        def work(conn: Connection) -> tuple[list[tuple], list[tuple]]:
            where, args = "learner_id = ?", [learner_id]
            if commented_only:
                where += " AND id IN (SELECT submission_id FROM comments WHERE learner_id = ?)"
                args.append(learner_id)
            if exercise_id is not None:
                where += " AND exercise_id = ?"
                args.append(exercise_id)
            runs = sound_rows("submissions", RUN_COLUMNS[1:], keep=1, rows=conn.execute(
                f"SELECT {', '.join(RUN_COLUMNS)} FROM submissions WHERE {where} ORDER BY id DESC LIMIT ?",
                (*args, limit)).fetchall())
            ids = [int(run[0]) for run in runs]
            if not ids:
                return runs, []
            marks = ", ".join("?" for _ in ids)
            comments = conn.execute(
                "SELECT c.id, c.submission_id, c.line, c.body, c.at, c.author_id, a.name, a.role FROM comments c "
                f"LEFT JOIN accounts a ON a.id = c.author_id WHERE c.learner_id = ? AND c.submission_id IN ({marks}) "
                "ORDER BY c.id", (learner_id, *ids)).fetchall()
            return runs, sound_rows("comments", ("body", "at"), comments, keep=3)

        return self.database.read(work, snapshot=True)

    def latest_answers(self, class_id: int, limit: int) -> list[tuple]:
        """The class's learners' latest answers: (comment id, run id, line, body, at, learner id, name, exercise)."""
        rows = self.database.read(lambda conn: conn.execute(
            "SELECT c.id, c.submission_id, c.line, c.body, c.at, c.learner_id, a.name, s.exercise_id FROM comments c "
            "JOIN accounts a ON a.id = c.author_id JOIN submissions s ON s.id = c.submission_id "
            "WHERE a.class_id = ? AND a.role = 'learner' ORDER BY c.id DESC LIMIT ?", (int(class_id), limit)).fetchall())
        return sound_rows("comments", ("body", "at"), rows, keep=3)
