"""The SQL of class mode inside the school's systems (tables of schema migration 6): LMS platforms, LTI logins,
one class per LMS course, accounts linked by issuer and subject, the LMS's gradebook columns, the outbox of
scores, and the OpenID Connect providers of a standalone server. classes/lti.py, classes/lti_scores.py and
classes/sso.py hold the rules; every statement lives here, so that SQL stays in the progress package.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Protocol, TypeVar

from chainrule.progress.audit_store import ACCOUNT_LOCK
from chainrule.progress.class_store import admitted, refuse_if_closed
from chainrule.progress.connection import Connection, Database
from chainrule.progress.credit_changes import scores_changed
from chainrule.progress.dialect import Record
from chainrule.progress.roster_store import AlreadyClaimed, NotOnRoster, claim_entry

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")

OUTBOX_LOCK = -3  # the advisory lock key of outbox claims (learners' keys are >= 0)
WORK_TABLES = ("submissions", "quiz_answers", "predictions", "code", "explanations")  # what a score is made of
PLATFORM_COLUMNS = ("id, issuer, client_id, name, auth_login_url, token_url, jwks_url, token_audience, lms_origins, "
                    "created_at")
CONTEXT_COLUMNS = "id, platform_id, context_id, class_id, title, lineitems_url, ags_scopes, memberships_url, frame_origin"


class StrangerBudget(Protocol):
    """What add_stranger_row asks of the strangers' budget (classes/stranger_budget.py: Budget)."""

    @property
    def keep(self) -> float: ...  # seconds a login in progress is kept

    def check_fields(self, row: Mapping[str, Any]) -> None: ...

    def admit(self, client_rows: int, all_rows: int) -> None: ...


class Login(NamedTuple):
    """An LTI login in progress (lti_logins): the platform that asked, its nonce, where to go, the launch to
    repeat, when it began and when it was used (None: not yet)."""

    platform_id: int
    nonce: str
    target: str
    relaunch: dict[str, Any]
    created_ts: float
    used_ts: float | None


def use_login(database: Database, table: str, state_hash: str, now: float) -> bool:
    """Mark a login in progress (LTI's or a sign-in provider's) used; False if it was already (a replay, or
    the same answer sent twice at once)."""
    assert table in ("lti_logins", "sso_logins")
    return database.write(lambda conn: conn.execute(
        f"UPDATE {table} SET used_ts = ? WHERE state_hash = ? AND used_ts IS NULL", (now, state_hash)).rowcount == 1,
        lock=OUTBOX_LOCK)


def add_stranger_row(database: Database, table: str, row: dict[str, Any], client: str, now: float,
                     budget: StrangerBudget) -> None:
    """Add a login in progress (``row``: its columns; a dict becomes a JSON column) for ``client``, within the
    strangers' budget (classes/stranger_budget.py): its fields checked, rows older than budget.keep deleted,
    then the client's and the server's logins in progress counted and budget.admit asked, in one transaction
    (under one lock, so simultaneous logins are counted one after another)."""
    assert table in ("lti_logins", "sso_logins")
    budget.check_fields(row)
    values = {name: json.dumps(value) if isinstance(value, dict) else value for name, value in row.items()}
    values.update(client=client, created_ts=now)

    def work(conn: Connection) -> None:
        conn.execute(f"DELETE FROM {table} WHERE created_ts < ?", (now - budget.keep,))
        counted = conn.one(
            f"SELECT COUNT(CASE WHEN client = ? THEN 1 END) AS mine, COUNT(*) AS everyone FROM {table} "
            "WHERE used_ts IS NULL", (client,))
        budget.admit(int(counted.mine), int(counted.everyone))
        conn.execute(f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join('?' for _ in values)})",
                     tuple(values.values()))

    database.write(work, lock=OUTBOX_LOCK)


def linked_account(conn: Connection, table: str, issuer: str, subject: str, class_id: int, role: str,
                   name: Callable[[list[str]], str], at: str, *, follow_role: bool,
                   by_invite: bool = False, roster_key: str = "") -> tuple[int, bool]:
    """(account id, made now) of the person (issuer, subject) in the class, linked in ``table`` (lti_users,
    sso_users): made with the name name(the class's names) gives, if none is linked yet. follow_role: the
    account's role becomes ``role`` (an LMS says what someone is in the course at every launch). by_invite:
    a newcomer joins as a password's learner does, within the class's seats and approval (class_store.admitted);
    an LMS's course roster says itself who is in. A newcomer learner to a class that is not open: ClassClosed
    (a teacher still comes in, to read it or open it again). roster_key: a learner's verified e-mail (a sign-in
    provider's): if the class's roster lists it and no one has taken it, the learner takes that seat, as a
    learner joining with it does (its section, let in at once), whether new or linked before the import."""
    assert table in ("lti_users", "sso_users")
    row = conn.execute(f"SELECT account_id FROM {table} WHERE issuer = ? AND subject = ? AND class_id = ?",
                       (issuer, subject, class_id)).fetchone()
    if row is not None:
        if follow_role:
            conn.execute("UPDATE accounts SET role = ? WHERE id = ? AND role != ?", (role, row.account_id, role))
        if roster_key and role == "learner" and conn.execute(
                "SELECT 1 FROM roster_entries WHERE account_id = ?", (row.account_id,)).fetchone() is None:
            take_seat(conn, class_id, roster_key, int(row.account_id))
        return int(row.account_id), False
    if role == "learner":
        refuse_if_closed(conn, class_id)
    names = [found.name for found in conn.execute("SELECT name FROM accounts WHERE class_id = ?", (class_id,))]
    approved = admitted(conn, class_id) if by_invite else 1
    account_id = int(conn.one("INSERT INTO accounts (class_id, role, name, created_at, approved) "
                              "VALUES (?, ?, ?, ?, ?) RETURNING id",
                              (class_id, role, name(names), at, approved)).id)
    conn.execute(f"INSERT INTO {table} (issuer, subject, class_id, account_id) VALUES (?, ?, ?, ?)",
                 (issuer, subject, class_id, account_id))
    if roster_key and role == "learner":
        take_seat(conn, class_id, roster_key, account_id)
    return account_id, True


def take_seat(conn: Connection, class_id: int, key: str, account_id: int) -> None:
    """The learner takes the class's roster entry for ``key`` (its section, let in), if there is one and no one
    has taken it (claim_entry, in the caller's write); else nothing changes."""
    try:
        entry = claim_entry(conn, class_id, key)
    except (NotOnRoster, AlreadyClaimed):
        return
    conn.execute("UPDATE roster_entries SET account_id = ? WHERE id = ?", (account_id, entry.id))
    conn.execute("UPDATE accounts SET section = ?, approved = 1 WHERE id = ?", (entry.section, account_id))


class LtiStore:
    """The LTI and single sign-on tables of a class store's database."""

    def __init__(self, store: ProgressStore) -> None:
        self.database = store.database

    def _write(self, work: Callable[[Connection], T], lock: int = ACCOUNT_LOCK) -> T:
        return self.database.write(work, lock=lock)

    def _read(self, work: Callable[[Connection], T]) -> T:
        return self.database.read(work)

    # ---------------------------------------------------------------- platforms

    def save_platform(self, values: dict[str, Any], deployments: list[str]) -> int:
        """Add the platform (issuer, client id) or replace what is known of it; deployments are added to its own."""

        def work(conn: Connection) -> int:
            row = conn.execute("SELECT id FROM lti_platforms WHERE issuer = ? AND client_id = ?",
                               (values["issuer"], values["client_id"])).fetchone()
            columns = ("name", "auth_login_url", "token_url", "jwks_url", "token_audience", "lms_origins")
            if row is None:
                platform_id = conn.one(
                    "INSERT INTO lti_platforms (issuer, client_id, created_at, " + ", ".join(columns) + ") VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (values["issuer"], values["client_id"], values["created_at"], *(values[c] for c in columns)),
                ).id
            else:
                platform_id = row.id
                conn.execute("UPDATE lti_platforms SET " + ", ".join(f"{c} = ?" for c in columns) + " WHERE id = ?",
                             (*(values[c] for c in columns), platform_id))
            for deployment in deployments:
                conn.execute("INSERT INTO lti_deployments (platform_id, deployment_id) VALUES (?, ?) "
                             "ON CONFLICT DO NOTHING", (platform_id, deployment))
            return int(platform_id)

        return self._write(work)

    def platforms(self, issuer: str | None = None, client_id: str | None = None) -> list[Record]:
        """The platforms (records of PLATFORM_COLUMNS), of one issuer (and client id) if given."""

        def work(conn: Connection) -> list[Record]:
            sql, params = f"SELECT {PLATFORM_COLUMNS} FROM lti_platforms", []
            if issuer is not None:
                sql += " WHERE issuer = ?" + (" AND client_id = ?" if client_id is not None else "")
                params = [issuer] + ([client_id] if client_id is not None else [])
            return conn.execute(sql + " ORDER BY id", params).fetchall()

        return self._read(work)

    def platform(self, platform_id: int) -> Any | None:
        """The platform's record (PLATFORM_COLUMNS: platform.issuer, platform.token_url, ...), or None."""
        return self._read(lambda conn: conn.execute(
            f"SELECT {PLATFORM_COLUMNS} FROM lti_platforms WHERE id = ?", (platform_id,)).fetchone())

    def deployments(self, platform_id: int) -> list[str]:
        return [row.deployment_id for row in self._read(lambda conn: conn.execute(
            "SELECT deployment_id FROM lti_deployments WHERE platform_id = ? ORDER BY deployment_id",
            (platform_id,)).fetchall())]

    # ---------------------------------------------------------------- logins in progress

    def add_login(self, state_hash: str, platform_id: int, nonce: str, target: str, relaunch: dict[str, Any], *,
                  client: str, now: float, budget: StrangerBudget) -> None:
        """Within the strangers' budget (add_stranger_row): OverBudget when the login does not fit."""
        add_stranger_row(self.database, "lti_logins", {"state_hash": state_hash, "platform_id": platform_id,
                                                       "nonce": nonce, "target": target, "relaunch": relaunch},
                         client, now, budget)

    def login(self, state_hash: str) -> Login | None:
        """The login in progress of this state, or None."""
        row = self._read(lambda conn: conn.execute(
            "SELECT platform_id, nonce, target, relaunch, created_ts, used_ts FROM lti_logins WHERE state_hash = ?",
            (state_hash,)).fetchone())
        return None if row is None else Login(int(row.platform_id), row.nonce, row.target, json.loads(row.relaunch),
                                              float(row.created_ts), row.used_ts)

    def use_login(self, state_hash: str, now: float) -> bool:
        return use_login(self.database, "lti_logins", state_hash, now)

    # ---------------------------------------------------------------- courses, classes and accounts

    def context_class(self, platform_id: int, context_id: str, title: str, class_name: Callable[[Callable[[str], bool]], str],
                      at: str) -> tuple[int, int, bool]:
        """(context row, class id, made now) of the course's class, made (with no account yet) on first use.
        class_name(taken) gives a free class name, taken(name) saying whether a name is in use."""

        def work(conn: Connection) -> tuple[int, int, bool]:
            row = conn.execute("SELECT id, class_id FROM lti_contexts WHERE platform_id = ? AND context_id = ?",
                               (platform_id, context_id)).fetchone()
            if row is not None:
                return int(row.id), int(row.class_id), False

            def taken(name: str) -> bool:
                return conn.execute("SELECT 1 FROM classes WHERE name = ?", (name,)).fetchone() is not None

            name = class_name(taken)
            class_id = conn.one("INSERT INTO classes (name, invite_hash, created_at) VALUES (?, ?, ?) RETURNING id",
                                (name, "lti:" + secrets.token_hex(32), at)).id
            context_row = conn.one("INSERT INTO lti_contexts (platform_id, context_id, class_id, title) "
                                   "VALUES (?, ?, ?, ?) RETURNING id",
                                   (platform_id, context_id, class_id, title)).id
            return int(context_row), int(class_id), True

        return self._write(work)

    def update_context(self, context_row: int, values: dict[str, Any]) -> None:
        """The course's service endpoints and the origin that frames it, as the latest launch gave them."""
        columns = [column for column in ("lineitems_url", "ags_scopes", "memberships_url", "frame_origin", "title")
                   if values.get(column)]
        if columns:
            self._write(lambda conn: conn.execute(
                "UPDATE lti_contexts SET " + ", ".join(f"{c} = ?" for c in columns) + " WHERE id = ?",
                (*(values[c] for c in columns), context_row)), lock=OUTBOX_LOCK)

    def context_of_class(self, class_id: int) -> Any | None:
        """The class's LMS course (a record of CONTEXT_COLUMNS: context.lineitems_url, ...), or None."""
        return self._read(lambda conn: conn.execute(
            f"SELECT {CONTEXT_COLUMNS} FROM lti_contexts WHERE class_id = ?", (class_id,)).fetchone())

    def context(self, context_row: int) -> Any | None:
        """The LMS course of this row (a record of CONTEXT_COLUMNS), or None."""
        return self._read(lambda conn: conn.execute(
            f"SELECT {CONTEXT_COLUMNS} FROM lti_contexts WHERE id = ?", (context_row,)).fetchone())

    def frame_origins(self) -> list[Record]:
        """(class_id, lms_origins: the platform's LMS origins as JSON, frame_origin: the course's) of every LMS
        class."""
        return self._read(lambda conn: conn.execute(
            "SELECT c.class_id, p.lms_origins, c.frame_origin FROM lti_contexts c "
            "JOIN lti_platforms p ON p.id = c.platform_id").fetchall())

    def linked_account(self, issuer: str, subject: str, class_id: int, role: str, name: Callable[[list[str]], str],
                       at: str) -> tuple[int, bool]:
        """(account id, made now) of the person (issuer, subject) in the class: made on first launch with a free
        display name (name(the class's names)); its role follows the LMS's."""
        return self._write(lambda conn: linked_account(conn, "lti_users", issuer, subject, class_id, role, name, at,
                                                       follow_role=True))

    def linked_people(self, class_id: int) -> dict[tuple[str, str], int]:
        """(issuer, subject) -> account id of everyone of the class who has launched."""
        rows = self._read(lambda conn: conn.execute(
            "SELECT issuer, subject, account_id FROM lti_users WHERE class_id = ?", (class_id,)).fetchall())
        return {(row.issuer, row.subject): int(row.account_id) for row in rows}

    def subject_of(self, account_id: int) -> Any | None:
        """The account's (issuer, subject) in its LMS (person.issuer, person.subject), or None."""
        return self._read(lambda conn: conn.execute(
            "SELECT issuer, subject FROM lti_users WHERE account_id = ?", (account_id,)).fetchone())

    # ---------------------------------------------------------------- gradebook columns
    # A row with url '' says the resource is linked in the course (a column is wanted); its claimed_ts is 0, or
    # the time a sender took the making of the column. A row with a url is a column the LMS has.

    def link_resource(self, context_row: int, resource: str) -> None:
        self._write(lambda conn: conn.execute(
            "INSERT INTO lti_line_items (context_row, resource, url, claimed_ts) VALUES (?, ?, '', 0) "
            "ON CONFLICT DO NOTHING", (context_row, resource)), lock=OUTBOX_LOCK)

    def resources(self, context_row: int) -> list[str]:
        """The lessons (and 'path') linked in the course."""
        return [row.resource for row in self._read(lambda conn: conn.execute(
            "SELECT DISTINCT resource FROM lti_line_items WHERE context_row = ? ORDER BY resource",
            (context_row,)).fetchall())]

    def path_column(self, context_row: int) -> bool:
        """Whether the teacher chose a gradebook column for the whole path in this course (off by default)."""
        row = self._read(lambda conn: conn.execute(
            "SELECT path_column FROM lti_contexts WHERE id = ?", (context_row,)).fetchone())
        return row is not None and bool(row.path_column)

    def set_path_column(self, context_row: int, class_id: int, path: str, on: bool) -> None:
        """The teacher's choice (path: the resource of the whole path), in one write: on, the path is linked in the course (its column is found or made
        by the score sender) and the scan looks at every learner again; off, the course forgets the path's
        columns and its scores waiting in the outbox (nothing more is sent to them)."""

        def work(conn: Connection) -> None:
            conn.execute("UPDATE lti_contexts SET path_column = ? WHERE id = ?", (int(on), context_row))
            if on:
                conn.execute("INSERT INTO lti_line_items (context_row, resource, url, claimed_ts) "
                             "VALUES (?, ?, '', 0) ON CONFLICT DO NOTHING", (context_row, path))
                scores_changed(conn, class_id=class_id)
            else:
                conn.execute("DELETE FROM lti_line_items WHERE context_row = ? AND resource = ?", (context_row, path))
                conn.execute("DELETE FROM lti_scores WHERE resource = ? AND account_id IN "
                             "(SELECT id FROM accounts WHERE class_id = ?)", (path, class_id))

        self._write(work, lock=OUTBOX_LOCK)

    def line_items(self, context_row: int, resource: str) -> list[str]:
        return [row.url for row in self._read(lambda conn: conn.execute(
            "SELECT url FROM lti_line_items WHERE context_row = ? AND resource = ? AND url != '' ORDER BY url",
            (context_row, resource)).fetchall())]

    def add_line_item(self, context_row: int, resource: str, url: str, now: float) -> None:
        def work(conn: Connection) -> None:
            for column in ("", url):
                conn.execute("INSERT INTO lti_line_items (context_row, resource, url, claimed_ts) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT DO NOTHING", (context_row, resource, column, 0 if not column else now))

        self._write(work, lock=OUTBOX_LOCK)

    def claim_line_item(self, context_row: int, resource: str, now: float, stale_before: float) -> bool:
        """Take the making of the resource's column (True), unless another sender took it since stale_before."""

        def work(conn: Connection) -> bool:
            conn.execute("INSERT INTO lti_line_items (context_row, resource, url, claimed_ts) VALUES (?, ?, '', 0) "
                         "ON CONFLICT DO NOTHING", (context_row, resource))
            return conn.execute("UPDATE lti_line_items SET claimed_ts = ? WHERE context_row = ? AND resource = ? "
                                "AND url = '' AND claimed_ts < ?", (now, context_row, resource, stale_before)).rowcount == 1

        return self._write(work, lock=OUTBOX_LOCK)

    def release_line_item(self, context_row: int, resource: str, url: str | None, now: float) -> None:
        """The column is made (url) or its making failed (None): the claim ends either way."""

        def work(conn: Connection) -> None:
            if url:
                conn.execute("INSERT INTO lti_line_items (context_row, resource, url, claimed_ts) VALUES (?, ?, ?, ?) "
                             "ON CONFLICT DO NOTHING", (context_row, resource, url, now))
            conn.execute("UPDATE lti_line_items SET claimed_ts = 0 WHERE context_row = ? AND resource = ? AND url = ''",
                         (context_row, resource))

        self._write(work, lock=OUTBOX_LOCK)

    def forget_line_item(self, context_row: int, url: str) -> None:
        """A column the LMS no longer has (deleted by the teacher): made again at the next score."""
        self._write(lambda conn: conn.execute("DELETE FROM lti_line_items WHERE context_row = ? AND url = ?",
                                              (context_row, url)), lock=OUTBOX_LOCK)

    # ---------------------------------------------------------------- the score outbox

    def linked_learners(self) -> list[tuple[int, int]]:
        """(account id, context row) of every learner who came through an LMS course."""
        return [(int(row.account_id), int(row.context_row)) for row in self._read(lambda conn: conn.execute(
            "SELECT u.account_id, c.id AS context_row FROM lti_users u JOIN accounts a ON a.id = u.account_id "
            "JOIN lti_contexts c ON c.class_id = u.class_id WHERE a.role = 'learner' ORDER BY u.account_id").fetchall())]

    def work_changes(self) -> dict[int, tuple[str, str]]:
        """account id -> (a signature of its work: rows and latest time per table, the latest time) of every
        learner who came through an LMS course and whose signature differs from the one last seen."""

        def work(conn: Connection) -> dict[int, tuple[str, str]]:
            parts: dict[int, list[str]] = {}
            latest: dict[int, str] = {}
            linked = "learner_id IN (SELECT account_id FROM lti_users)"
            for table in WORK_TABLES:
                rows = conn.execute(f"SELECT learner_id, COUNT(*) AS how_many, MAX(at) AS at FROM {table} WHERE {linked} "
                                    "GROUP BY learner_id").fetchall()
                for learner, count, at in rows:
                    parts.setdefault(int(learner), []).append(f"{table}:{count}:{at}")
                    if isinstance(at, str) and at > latest.get(int(learner), ""):
                        latest[int(learner)] = at
            seen = {row.account_id: row.signature
                    for row in conn.execute("SELECT account_id, signature FROM lti_work_seen").fetchall()}
            signatures = {learner: "|".join(items) for learner, items in parts.items()}
            return {learner: (signature, latest.get(learner, "")) for learner, signature in signatures.items()
                    if seen.get(learner) != signature}

        return self._read(work)

    def queue_scores(self, account_id: int, scores: dict[str, tuple[float, float, bool]], work_at: str,
                     signature: str, now: float) -> list[str]:
        """Keep each resource's score in the outbox when it differs from the one kept (a new version to send),
        and remember the work's signature; returns the resources whose score changed. A score of 0 with
        nothing kept before is not sent (the learner has not begun)."""

        def work(conn: Connection) -> list[str]:
            changed = []
            for resource, (given, maximum, completed) in scores.items():
                row = conn.execute("SELECT score_given, score_maximum, completed FROM lti_scores "
                                   "WHERE account_id = ? AND resource = ?", (account_id, resource)).fetchone()
                if row is None and given > 0:
                    conn.execute("INSERT INTO lti_scores (account_id, resource, score_given, score_maximum, completed, "
                                 "work_at, version, next_ts) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                                 (account_id, resource, given, maximum, int(completed), work_at, now))
                    changed.append(resource)
                elif row is not None and (float(row.score_given), float(row.score_maximum),
                                          bool(row.completed)) != (given, maximum, completed):
                    conn.execute("UPDATE lti_scores SET score_given = ?, score_maximum = ?, completed = ?, work_at = ?, "
                                 "version = version + 1, attempts = 0, next_ts = ? WHERE account_id = ? AND resource = ?",
                                 (given, maximum, int(completed), work_at, now, account_id, resource))
                    changed.append(resource)
            conn.execute("INSERT INTO lti_work_seen (account_id, signature) VALUES (?, ?) ON CONFLICT (account_id) "
                         "DO UPDATE SET signature = excluded.signature", (account_id, signature))
            return changed

        return self._write(work, lock=OUTBOX_LOCK)

    def claim_due_scores(self, now: float, stale_before: float, limit: int = 20) -> list[Record]:
        """Take up to ``limit`` scores due for sending (none another sender holds since stale_before), as records
        (account_id, resource, score_given, score_maximum, completed, work_at, version, attempts)."""

        def work(conn: Connection) -> list[Record]:
            rows = conn.execute(
                "SELECT account_id, resource, score_given, score_maximum, completed, work_at, version, attempts "
                "FROM lti_scores WHERE sent_version < version AND next_ts <= ? AND claimed_ts < ? "
                "ORDER BY next_ts LIMIT ?", (now, stale_before, limit)).fetchall()
            for row in rows:
                conn.execute("UPDATE lti_scores SET claimed_ts = ? WHERE account_id = ? AND resource = ?",
                             (now, row.account_id, row.resource))
            return rows

        return self._write(work, lock=OUTBOX_LOCK)

    def score_sent(self, account_id: int, resource: str, version: int) -> None:
        self._write(lambda conn: conn.execute(
            "UPDATE lti_scores SET sent_version = ?, attempts = 0, claimed_ts = 0, last_error = '' "
            "WHERE account_id = ? AND resource = ? AND sent_version < ?",
            (version, account_id, resource, version)), lock=OUTBOX_LOCK)

    def score_failed(self, account_id: int, resource: str, next_ts: float, error: str) -> None:
        self._write(lambda conn: conn.execute(
            "UPDATE lti_scores SET attempts = attempts + 1, next_ts = ?, claimed_ts = 0, last_error = ? "
            "WHERE account_id = ? AND resource = ?", (next_ts, error[:500], account_id, resource)), lock=OUTBOX_LOCK)

    def outbox(self, class_id: int | None = None) -> list[Record]:
        """Records (account_id, name, resource, score_given, score_maximum, sent, attempts, last_error) of the
        scores of a class (or of every class)."""
        where, params = ("WHERE a.class_id = ?", (class_id,)) if class_id is not None else ("", ())
        return self._read(lambda conn: conn.execute(
            "SELECT s.account_id, a.name, s.resource, s.score_given, s.score_maximum, s.sent_version >= s.version AS sent, "
            "s.attempts, s.last_error FROM lti_scores s JOIN accounts a ON a.id = s.account_id "
            f"{where} ORDER BY a.name, s.resource", params).fetchall())
