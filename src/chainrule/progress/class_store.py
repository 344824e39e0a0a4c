"""The class tables' SQL (schema migration 3): classes, accounts, one-time links, sign-in failures, the
session secret, and the class-wide reads of the teacher's view. classes/accounts.py and classes/report.py
hold the rules; every statement lives here, so that SQL stays in the progress package.

Secrets arrive already hashed (token hashes, argon2id password hashes); times as ISO text or epoch seconds.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, TypedDict, TypeVar

from chainrule.progress.audit_store import ACCOUNT_LOCK
from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record
from chainrule.progress.people_store import remove_account, remove_accounts
from chainrule.progress.roster_store import claim_entry
from chainrule.progress.rows import sound_rows

if TYPE_CHECKING:
    from chainrule.progress.finished import Work
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")

CLASS_LEARNERS = "learner_id IN (SELECT id FROM accounts WHERE class_id = ? AND role = 'learner')"
ACCOUNT_COLUMNS = ("SELECT a.id, a.class_id, c.name AS class_name, a.role, a.name, a.session_epoch, a.approved, "
                   "c.state AS class_state, a.section FROM accounts a JOIN classes c ON c.id = a.class_id ")

AccountRow = Record  # columns: id, class_id, class_name, role, name, session_epoch, approved, class_state, section
HELP_COLUMNS = ("lesson_id", "exercise_id", "kind", "number", "at")  # a hint opened or a solution shown


class HelpUsed(NamedTuple):
    """One learner's help on one exercise (help_by_exercise)."""

    learner_id: int
    exercise_id: str
    hints: int                   # hints opened: the highest number
    solution_at: str | None      # when the solution was first shown, or None


MAX_ID = 2**31 - 1  # learner_id is a 4-byte INTEGER in PostgreSQL; a larger id is no account


class ClassActivity(TypedDict):
    """What the teacher's view reads of a whole class (ClassStore.class_activity), every row checked."""

    submissions: list[Record]  # learner_id, exercise_id, status, result, at, origin
    answers: list[Record]  # learner_id, lesson_id, question_id, answer, correct, at, origin
    explanations: list[Record]  # learner_id, lesson_id, text, ticked, at
    help: list[HelpUsed]
    work: dict[int, Work]  # by learner: progress/finished.py
    last_active: dict[int, str]  # by learner: the time of their latest row of any kind


class SeatsTaken(Exception):
    """add_learner: the class has as many learners as its seats."""


class ClassClosed(Exception):
    """A newcomer to a class that is closed or archived: it takes no new learners."""


class _NotAll(Exception):
    """Inside a write that changes several accounts: one of them is not there, so the write rolls back."""


class ClassStore:
    """The class tables of a progress store's database (``store.database``)."""

    def __init__(self, store: ProgressStore) -> None:
        self.store = store
        self.database = store.database

    def _write(self, work: Callable[[Connection], T]) -> T:
        return self.database.write(work, lock=ACCOUNT_LOCK)

    # ---------------------------------------------------------------- classes and accounts

    def account(self, account_id: int) -> AccountRow | None:
        if not 0 <= int(account_id) <= MAX_ID:  # SQLite cannot even bind an integer past 2**63
            return None
        return self.database.read(
            lambda conn: conn.execute(ACCOUNT_COLUMNS + "WHERE a.id = ?", (int(account_id),)).fetchone())

    def created_at(self, account_id: int) -> str | None:
        row = self.database.read(lambda conn: conn.execute(
            "SELECT created_at FROM accounts WHERE id = ?", (int(account_id),)).fetchone())
        return None if row is None else row.created_at

    def learners(self, class_id: int) -> list[AccountRow]:
        return self.database.read(lambda conn: conn.execute(
            ACCOUNT_COLUMNS + "WHERE a.class_id = ? AND a.role = 'learner' ORDER BY a.name, a.id",
            (int(class_id),)).fetchall())

    def class_id(self, name: str) -> int | None:
        row = self.database.read(lambda conn: conn.execute("SELECT id FROM classes WHERE name = ?", (name,)).fetchone())
        return None if row is None else int(row.id)

    def classes(self) -> list[Record]:
        """Records (id, name, created_at, learners: how many) of every class, by name."""
        return self.database.read(lambda conn: conn.execute(
            "SELECT c.id, c.name, c.created_at, "
            "(SELECT COUNT(*) FROM accounts a WHERE a.class_id = c.id AND a.role = 'learner') AS learners "
            "FROM classes c ORDER BY c.name").fetchall())

    def create_class(self, name: str, invite_hash: str, teacher_name: str, at: str, link_hash: str,
                     link_expires: float) -> int | None:
        """The new class's id, with its teacher and the teacher's first link; None if the name is taken."""

        def work(conn: Connection) -> int | None:
            if conn.execute("SELECT 1 FROM classes WHERE name = ?", (name,)).fetchone() is not None:
                return None
            class_id = conn.one("INSERT INTO classes (name, invite_hash, created_at) VALUES (?, ?, ?) RETURNING id",
                                (name, invite_hash, at)).id
            teacher_id = conn.one(
                "INSERT INTO accounts (class_id, role, name, created_at) VALUES (?, 'teacher', ?, ?) RETURNING id",
                (class_id, teacher_name, at)).id
            _add_link(conn, teacher_id, link_hash, link_expires)
            return int(class_id)

        return self._write(work)

    def url(self, class_id: int) -> str | None:
        """The address the class remembers (None: none yet)."""
        row = self.database.read(lambda conn: conn.execute("SELECT url FROM classes WHERE id = ?",
                                                           (class_id,)).fetchone())
        return None if row is None else row.url

    def set_url(self, url: str, class_id: int | None = None, *, only_unset: bool = False) -> int:
        """Remember ``url`` for one class (``class_id``) or every class, only where none is remembered yet with
        ``only_unset``; how many classes changed."""
        where: list[tuple[str, int | None]] = [("id = ?", class_id)] if class_id is not None else []
        where += [("url IS NULL", None)] if only_unset else []
        sql = "UPDATE classes SET url = ?" + (" WHERE " + " AND ".join(text for text, _ in where) if where else "")
        values = (url, *(value for _, value in where if value is not None))
        return self._write(lambda conn: conn.execute(sql, values).rowcount)

    def teacher_id(self, class_id: int) -> int | None:
        """The class's first teacher (an LMS course's class may have several, or none before one launches)."""
        row = self.database.read(lambda conn: conn.execute(
            "SELECT id FROM accounts WHERE class_id = ? AND role = 'teacher' ORDER BY id", (class_id,)).fetchone())
        return None if row is None else int(row.id)

    def add_link(self, account_id: int, link_hash: str, expires: float) -> None:
        self._write(lambda conn: _add_link(conn, account_id, link_hash, expires))

    def names(self, class_id: int) -> list[str]:
        """The name of every account of the class, its teacher's included."""
        return [row.name for row in self.database.read(lambda conn: conn.execute(
            "SELECT name FROM accounts WHERE class_id = ?", (int(class_id),)).fetchall())]

    def add_learner(self, class_id: int, name: str, password_hash: str, at: str,
                    check_names: Callable[[list[str]], None], roster_key: str = "") -> int:
        """The new learner's id (waiting for the teacher if the class asks for approval). ``check_names``
        sees every name in the class, inside the same write (so two joins at once cannot both take a name),
        and raises to refuse this one; SeatsTaken if every seat is taken, ClassClosed if the class is not open
        (``admitted``). With a ``roster_key``, the learner takes that roster entry (progress/roster_store.py's
        claim_entry, in the same write): its section, and no wait for approval (a teacher listed them)."""

        def work(conn: Connection) -> int:
            check_names([row.name for row in conn.execute(
                "SELECT name FROM accounts WHERE class_id = ?", (class_id,)).fetchall()])
            approved = admitted(conn, class_id)
            entry = claim_entry(conn, class_id, roster_key) if roster_key else None
            account_id = int(conn.one(
                "INSERT INTO accounts (class_id, role, name, password_hash, created_at, approved, section) "
                "VALUES (?, 'learner', ?, ?, ?, ?, ?) RETURNING id",
                (class_id, name, password_hash, at, 1 if entry else approved, entry.section if entry else "")).id)
            if entry is not None:
                conn.execute("UPDATE roster_entries SET account_id = ? WHERE id = ?", (account_id, entry.id))
            return account_id

        return self._write(work)

    def admission(self, class_id: int) -> tuple[int | None, bool, int]:
        """(seats or None, whether joining needs the teacher's approval, learners in the class)."""
        seats, approval, learners = self.database.read(lambda conn: conn.one(
            "SELECT seats, approval, (SELECT COUNT(*) FROM accounts a WHERE a.class_id = c.id AND "
            "a.role = 'learner') FROM classes c WHERE c.id = ?", (class_id,)))
        return None if seats is None else int(seats), bool(approval), int(learners)

    def set_admission(self, class_id: int, seats: int | None, approval: bool) -> None:
        self._write(lambda conn: conn.execute("UPDATE classes SET seats = ?, approval = ? WHERE id = ?",
                                              (seats, int(bool(approval)), class_id)))

    def approve(self, account_id: int) -> None:
        self._write(lambda conn: conn.execute("UPDATE accounts SET approved = 1 WHERE id = ?", (account_id,)))

    def approve_learners(self, account_ids: list[int], class_id: int) -> bool:
        """Let several learners of the class in, in one transaction: all of them, or (False) none, when one is
        not (or no longer) a learner of the class."""

        def work(conn: Connection) -> bool:
            for account_id in account_ids:
                if not conn.execute("UPDATE accounts SET approved = 1 WHERE id = ? AND class_id = ? AND role = "
                                    "'learner'", (int(account_id), int(class_id))).rowcount:
                    raise _NotAll()
            return True

        try:
            return self._write(work)
        except _NotAll:
            return False

    def remove_learner(self, account_id: int, class_id: int, by: Any) -> None:
        """The account and everything of it, in one transaction (progress/people_store.py: remove_account)."""
        remove_account(self.store, account_id, class_id, "learner", by)

    def remove_learners(self, account_ids: list[int], class_id: int, by: Any) -> None:
        """Several learners and everything of theirs, all in one transaction: every one or none
        (progress/people_store.py: remove_accounts, NotRemoved)."""
        remove_accounts(self.store, account_ids, class_id, "learner", by)

    def password_hash(self, class_name: str, name: str) -> tuple[int, str | None] | None:
        row = self.database.read(lambda conn: conn.execute(
            "SELECT a.id, a.password_hash FROM accounts a JOIN classes c ON c.id = a.class_id "
            "WHERE c.name = ? AND a.name = ?", (class_name, name)).fetchone())
        return None if row is None else (int(row.id), row.password_hash)

    def renew_password_hash(self, account_id: int, old_hash: str, new_hash: str) -> bool:
        """The same password kept at today's cost; sessions go on. Only if the hash is still ``old_hash``
        (a reset meanwhile wins); True if it was renewed."""
        return self._write(lambda conn: conn.execute(
            "UPDATE accounts SET password_hash = ? WHERE id = ? AND password_hash = ?",
            (new_hash, int(account_id), old_hash)).rowcount == 1)

    # ---------------------------------------------------------------- sign-in failures

    def reserve_attempt(self, scope: str, now: float, since: float,
                        wait_after: Callable[[int], float]) -> tuple[int | None, float]:
        """Count a sign-in attempt as a failure before its password is checked, in one transaction (one
        writer at a time on both backends, so simultaneous attempts are counted one after another):
        (the reservation's id, 0), or (None, seconds still to wait) when the scope's ``wait_after(failures
        since ``since``)`` after its latest failure has not passed. Failures before ``since`` are dropped."""

        def work(conn: Connection) -> tuple[int | None, float]:
            conn.execute("DELETE FROM sign_in_failures WHERE at_ts < ?", (since,))
            count, latest = conn.one("SELECT COUNT(*) AS failures, MAX(at_ts) AS latest FROM sign_in_failures "
                                     "WHERE scope = ?", (scope,))
            wait = wait_after(int(count))
            # No wait owed, no refusal: a simultaneous attempt whose clock was read a moment later may have been
            # written first, so `latest` can be after `now` (two tabs signing in at once got "try again in 1 s").
            if latest is not None and wait > 0 and now < float(latest) + wait:
                return None, float(latest) + wait - now
            return int(conn.one("INSERT INTO sign_in_failures (scope, at_ts) VALUES (?, ?) RETURNING id",
                                (scope, now)).id), 0.0

        return self._write(work)

    def release_attempt(self, reservation: int) -> None:
        """The attempt was no failure (the right password, or it never got checked)."""
        self._write(lambda conn: conn.execute("DELETE FROM sign_in_failures WHERE id = ?", (reservation,)))

    def clear_failures(self, scope: str) -> None:
        self._write(lambda conn: conn.execute("DELETE FROM sign_in_failures WHERE scope = ?", (scope,)))

    # ---------------------------------------------------------------- one-time links

    def link_account_id(self, link_hash: str, now: float) -> int | None:
        row = self.database.read(lambda conn: conn.execute(
            "SELECT account_id FROM one_time_links WHERE token_hash = ? AND used_at IS NULL AND expires_ts > ?",
            (link_hash, now)).fetchone())
        return None if row is None else int(row.account_id)

    def use_link(self, link_hash: str, now: float, used_at: str, password_hash: str) -> int | None:
        """Mark the link used and set the password (its account's older sessions end); None if not valid."""

        def work(conn: Connection) -> int | None:
            row = conn.execute(
                "SELECT account_id FROM one_time_links WHERE token_hash = ? AND used_at IS NULL AND expires_ts > ?",
                (link_hash, now)).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE one_time_links SET used_at = ? WHERE token_hash = ?", (used_at, link_hash))
            conn.execute("UPDATE accounts SET password_hash = ?, session_epoch = session_epoch + 1 WHERE id = ?",
                         (password_hash, row.account_id))
            return int(row.account_id)

        return self._write(work)

    def end_sessions(self, account_id: int) -> None:
        self._write(lambda conn: conn.execute(
            "UPDATE accounts SET session_epoch = session_epoch + 1 WHERE id = ?", (account_id,)))

    def secret(self) -> str:
        """The secret that signs session cookies, made once and shared by every web process."""

        def work(conn: Connection) -> str:
            row = conn.execute("SELECT value FROM server_secrets WHERE name = 'session'").fetchone()
            if row is not None:
                return str(row.value)
            value = secrets.token_hex(32)
            conn.execute("INSERT INTO server_secrets (name, value) VALUES ('session', ?)", (value,))
            return value

        return self._write(work)

    # ---------------------------------------------------------------- the teacher's view

    def class_activity(self, class_id: int, exercises: tuple[str, ...] = ()) -> ClassActivity:
        """Every run and quiz answer of the class's learners (oldest first, each with its origin: '' for
        work done here, 'imported' for a learner's own file), each learner's work for "finished"
        (progress/finished.py), last activity, and the help they used on ``exercises`` (help_by_exercise).
        Rows no reader could use are reported and skipped."""
        from chainrule.progress.finished import learner_work

        def work(conn: Connection) -> ClassActivity:
            def rows(sql: str) -> list[Record]:
                return conn.execute(sql.format(learners=CLASS_LEARNERS), (class_id,)).fetchall()

            latest: dict[int, str] = {}
            for table in ("submissions", "quiz_answers", "predictions", "code", "explanations"):
                for learner, at in sound_rows(table, ("at",), rows(
                        f"SELECT learner_id, MAX(at) FROM {table} WHERE {{learners}} GROUP BY learner_id"), keep=1):
                    latest[learner] = max(latest.get(learner, at), at)
            # Help: each learner's latest row, by index (not every row: issue 41, item 1).
            helped = [row for row in rows(
                "SELECT a.id, (SELECT h.at FROM help_used h WHERE h.learner_id = a.id ORDER BY h.id DESC LIMIT 1) AS at "
                "FROM accounts a WHERE a.class_id = ? AND a.role = 'learner'") if row.at is not None]
            for learner, at in sound_rows("help_used", ("at",), helped, keep=1):
                latest[learner] = max(latest.get(learner, at), at)
            return {
                "submissions": sound_rows("submissions", ("exercise_id", "status", "result", "at", "origin"), rows(
                    "SELECT learner_id, exercise_id, status, result, at, origin FROM submissions "
                    "WHERE {learners} ORDER BY id"), keep=1),
                "answers": sound_rows("quiz_answers", ("lesson_id", "question_id", "answer", "correct", "at", "origin"),
                                      rows("SELECT learner_id, lesson_id, question_id, answer, correct, at, origin "
                                           "FROM quiz_answers WHERE {learners} ORDER BY id"), keep=1),
                "explanations": sound_rows("explanations", ("lesson_id", "text", "ticked", "at"), rows(
                    "SELECT learner_id, lesson_id, text, ticked, at FROM explanations WHERE {learners} "
                    "AND text != '' ORDER BY at"), keep=1),
                "help": help_by_exercise(conn, class_id, exercises),
                "work": learner_work(conn, CLASS_LEARNERS, (class_id,)),
                "last_active": latest,
            }

        return self.database.read(work, snapshot=True)

    def learner_activity(self, learner_id: int) -> dict[str, list[Record]]:
        """One learner's runs (at, exercise, language, status, result, source, origin), answers (at, lesson,
        question, answer, correct, origin), explanations (at, lesson, text, ticked) and help used (at, lesson,
        exercise, kind, number), oldest first; rows no reader could use are reported and skipped."""

        def work(conn: Connection) -> dict[str, list[Record]]:
            def rows(table: str, columns: tuple[str, ...], order: str = "id") -> list[Record]:
                found = conn.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE learner_id = ? ORDER BY {order}",
                                     (learner_id,)).fetchall()
                return sound_rows(table, columns, found)

            return {"runs": rows("submissions", ("at", "exercise_id", "language", "status", "result", "source", "origin")),
                    "answers": rows("quiz_answers", ("at", "lesson_id", "question_id", "answer", "correct", "origin")),
                    "explanations": rows("explanations", ("at", "lesson_id", "text", "ticked"), "at"),
                    "help": rows("help_used", ("at", "lesson_id", "exercise_id", "kind", "number"))}

        return self.database.read(work, snapshot=True)


def help_by_exercise(conn: Connection, class_id: int, exercises: tuple[str, ...]) -> list[HelpUsed]:
    """(learner, exercise, hints opened: the highest number, when the solution was first shown or None) of
    each of the class's learners who used help on one of ``exercises``. Read in the database by index
    (migration 16), a few index steps per learner and exercise: its cost and its answer do not grow with the
    rows one learner keeps (issue 41, item 1). A solution time no reader could use is reported and read as
    None."""
    rows: list[HelpUsed] = []
    for exercise in dict.fromkeys(exercises):
        found = conn.execute(
            "SELECT a.id, (SELECT MAX(h.number) FROM help_used h WHERE h.learner_id = a.id AND h.exercise_id = ? "
            "AND h.kind = 'hint'), (SELECT h.at FROM help_used h WHERE h.learner_id = a.id AND h.exercise_id = ? "
            "AND h.kind = 'solution' ORDER BY h.number, h.id LIMIT 1) FROM accounts a "
            "WHERE a.class_id = ? AND a.role = 'learner' ORDER BY a.id", (exercise, exercise, class_id)).fetchall()
        for row in found:
            learner, hints, at = row
            if hints is None and at is None:
                continue
            if at is not None and not sound_rows("help_used", ("at",), [row], keep=2):
                at = None
            rows.append(HelpUsed(int(learner), exercise, max(0, int(hints or 0)), at))
    return rows


def admitted(conn: Connection, class_id: int) -> int:
    """Inside the write that makes a learner of the class: 0 if they wait for the teacher's approval, else 1;
    SeatsTaken if every seat is taken (counted in the same transaction, so that learners joining at once, by
    password or through a sign-in provider, never pass the seats)."""
    seats, approval = conn.one("SELECT seats, approval FROM classes WHERE id = ?", (class_id,))
    refuse_if_closed(conn, class_id)
    if seats is not None and conn.one("SELECT COUNT(*) AS learners FROM accounts WHERE class_id = ? "
                                      "AND role = 'learner'", (class_id,)).learners >= seats:
        raise SeatsTaken(int(seats))
    return 0 if approval else 1


def refuse_if_closed(conn: Connection, class_id: int) -> None:
    """Inside the write that makes a learner of the class: ClassClosed unless the class is open (checked in the
    same transaction as the insert, so a class closed a moment before takes no one, whichever way they come)."""
    if conn.one("SELECT state FROM classes WHERE id = ?", (class_id,)).state != "open":
        raise ClassClosed()


def account_exists(account_id: int | None) -> Callable[[Connection, int], bool]:
    """A record_submission claim: keep a run only while its account exists (a run that ends after its
    account was removed keeps nothing)."""

    def claim(conn: Connection, submission_id: int) -> bool:
        return conn.execute("SELECT 1 FROM accounts WHERE id = ?", (account_id,)).fetchone() is not None

    return claim


def _add_link(conn: Connection, account_id: int, link_hash: str, expires: float) -> None:
    conn.execute("INSERT INTO one_time_links (token_hash, account_id, purpose, expires_ts) "
                 "VALUES (?, ?, 'set-password', ?)", (link_hash, account_id, expires))
