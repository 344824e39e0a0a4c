"""Comments on a learner's run: a teacher of the class comments on one line or on the whole file, and the
run's learner answers. The body is Markdown as written, kept as text; pages render it text-safe (no HTML,
links only http(s): static/js/comments.js).

    comments = Comments(accounts)
    comments.add(teacher, run_id, line=3, body="Why `* 2` here?")
    comments.threads(learner)                      # the learner's commented runs, with every comment

Who may: a teacher of the run's learner's class, and the learner on their own runs. Anyone else finds no
such run (ClassError "not-found", as for an id that does not exist): nobody learns that a run exists.

A learner's comments count toward their storage quota (progress/quota.py: 413 past it) and have a rate:
at most LEARNER_RATE[0] in any LEARNER_RATE[1] (ClassError "rate-limited": 429 with Retry-After). A view
shows the latest SHOWN_COMMENTS comments of its runs; each run says how many of its comments are not shown
("earlier_comments"), and `earlier` pages back through one run's.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime, timedelta
from typing import Any

from chainrule.classes.accounts import LEARNER, STAFF, Account, Accounts, ClassError, staff_only, storable_text
from chainrule.errors import InputError
from chainrule.number_text import count_text
from chainrule.progress.comment_store import CommentStore, TooManyComments
from chainrule.progress.dialect import Record
from chainrule.progress.quota import refuse_over_quota, row_cost

MAX_COMMENT = 4000  # characters: a paragraph or three, with a code block
TEACHER_RUNS = 20  # the latest runs of a learner the teacher's page shows to comment on
LEARNER_RUNS = 50  # the latest commented runs a learner's pages show
LATEST_ANSWERS = 10  # learners' answers the teacher's page lists
SHOWN_COMMENTS = 50  # the latest comments a view shows (the rest: "earlier_comments", then `earlier`)
LEARNER_RATE = (30, timedelta(minutes=10))  # a learner writes at most 30 comments in any 10 minutes


def clean_body(value: Any) -> str:
    body = unicodedata.normalize("NFC", storable_text(value, "body")).strip()
    if not body or len(body) > MAX_COMMENT:
        raise InputError(f"a comment must be 1 to {MAX_COMMENT:,} characters, got {len(body):,}", field="body")
    return body


def clean_line(value: Any, source: str) -> int | None:
    lines = max(1, len(source.splitlines()))
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= lines:
        raise InputError(f"the line must be a line of the run, 1 to {lines}, or none for the whole file",
                         field="line")
    return value


class Comments:
    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts
        self.tables = CommentStore(accounts.store)

    def _run(self, account: Account, run_id: int) -> tuple[int, str]:
        """(the run's learner, its source) if ``account`` may read and answer its comments."""
        owner = self.tables.run_owner(run_id) if 1 <= run_id <= 2**31 - 1 else None
        if owner is not None:
            if account.role in STAFF and account.class_id == owner.class_id or \
                    account.role == LEARNER and account.id == owner.learner_id:
                return int(owner.learner_id), owner.source
        raise ClassError(f"there is no run {run_id} of yours or of your class", kind="not-found")

    def add(self, account: Account, run_id: int, line: Any, body: Any) -> dict[str, Any]:
        learner_id, source = self._run(account, run_id)
        line, body = clean_line(line, source), clean_body(body)
        store = self.accounts.store
        now = store.now()
        at = now.isoformat()
        if account.role != LEARNER:
            comment_id = self.tables.add(learner_id, run_id, account.id, line, body, at)
        else:
            refuse_over_quota(store.database, account.id, row_cost(body, at), getattr(store, "quota", None),
                              "This comment")
            most, window = LEARNER_RATE
            try:
                comment_id = self.tables.add(learner_id, run_id, account.id, line, body, at, most=most,
                                             since=(now - window).isoformat())
            except TooManyComments as limit:
                wait = max(1.0, (datetime.fromisoformat(limit.oldest) + window - now).total_seconds())
                raise ClassError(f"you have written {count_text(most, 'comment')} in the last {count_text(window.seconds // 60, 'minute')}, "
                                 f"the most a learner may: try again in {count_text(int(wait + 0.999), 'second')}",
                                 kind="rate-limited", retry_after=wait) from None
        return {"id": comment_id, "run_id": run_id, "line": line, "body": body, "at": at, "author": account.name,
                "by_teacher": account.role in STAFF, "yours": True}

    def runs_of(self, teacher: Account, learner_id: int) -> dict[str, Any]:
        """A learner's latest runs with their comments, for a teacher of their class."""
        learner = self.accounts.learner_in_class(teacher, learner_id)
        return {"learner": {"id": learner.id, "name": learner.name},
                "runs": self._threads(teacher, learner.id, limit=TEACHER_RUNS)}

    def latest_answers(self, teacher: Account) -> list[dict[str, Any]]:
        """The latest answers of the class's learners (newest first), for a teacher of the class."""
        staff_only(teacher)
        return [{"id": int(row.id), "run_id": int(row.submission_id), "line": None if row.line is None else int(row.line),
                 "body": row.body, "at": row.at, "learner_id": int(row.learner_id), "author": row.name,
                 "exercise_id": row.exercise_id}
                for row in self.tables.latest_answers(teacher.class_id, LATEST_ANSWERS)]

    def threads(self, learner: Account, exercise_id: str | None = None) -> list[dict[str, Any]]:
        """The signed-in learner's own runs that have comments (of one exercise, if given), newest first."""
        if learner.role != LEARNER:
            return []
        return self._threads(learner, learner.id, limit=LEARNER_RUNS, commented_only=True, exercise_id=exercise_id)

    def earlier(self, account: Account, run_id: int, before: int) -> dict[str, Any]:
        """The SHOWN_COMMENTS comments on a run just before comment ``before``, and how many are earlier still."""
        learner_id, _ = self._run(account, run_id)
        comments, left = self.tables.earlier(learner_id, run_id, before, SHOWN_COMMENTS)
        return {"run_id": run_id, "comments": [_comment(row, account) for row in comments], "earlier_comments": left}

    def _threads(self, reader: Account, learner_id: int, **options: Any) -> list[dict[str, Any]]:
        runs, comments, counts = self.tables.runs(learner_id, shown=SHOWN_COMMENTS, **options)
        by_run: dict[int, list[dict[str, Any]]] = {}
        for row in comments:
            by_run.setdefault(int(row.submission_id), []).append(_comment(row, reader))
        return [{"id": int(run_id), "exercise_id": exercise, "language": language, "source": source,
                 "passed": status == "pass", "at": at, "imported": origin == "imported",
                 "comments": by_run.get(int(run_id), []),
                 "earlier_comments": counts.get(int(run_id), 0) - len(by_run.get(int(run_id), []))}
                for run_id, exercise, language, source, status, at, origin in runs]


def _comment(row: Record, reader: Account) -> dict[str, Any]:
    comment_id, run_id, line, body, at, author_id, author, role = row
    return {"id": int(comment_id), "run_id": int(run_id), "line": None if line is None else int(line),
            "body": body, "at": at, "author": author or "someone who has left the class",
            "by_teacher": role in STAFF, "yours": author_id == reader.id}
