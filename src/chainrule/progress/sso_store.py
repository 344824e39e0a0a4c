"""The SQL of OpenID Connect sign-in for a standalone class server (tables of schema migration 6): providers,
sign-ins in progress, accounts linked by the provider's issuer and subject, and each class's choice of whether
passwords stay possible. classes/sso.py holds the rules.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, TypeVar

from chainrule.progress.audit_store import ACCOUNT_LOCK
from chainrule.progress.connection import Connection
from chainrule.progress.dialect import Record
from chainrule.progress.lti_store import StrangerBudget, add_stranger_row, linked_account, take_seat, use_login

if TYPE_CHECKING:
    from chainrule.progress.store import ProgressStore

T = TypeVar("T")

PROVIDER_COLUMNS = "id, name, issuer, client_id, client_secret"


class SsoLogin(NamedTuple):
    """A sign-in in progress (sso_logins): the provider asked, its nonce and PKCE verifier, what the person
    meant to do, when it began and when it was used (None: not yet)."""

    provider_id: int
    nonce: str
    verifier: str
    intent: dict[str, Any]
    created_ts: float
    used_ts: float | None


class SsoStore:
    def __init__(self, store: ProgressStore) -> None:
        self.database = store.database

    def _read(self, work: Callable[[Connection], T]) -> T:
        return self.database.read(work)

    # ---------------------------------------------------------------- providers

    def save_provider(self, name: str, issuer: str, client_id: str, client_secret: str, at: str) -> int:
        def work(conn: Connection) -> int:
            row = conn.execute("SELECT id FROM sso_providers WHERE name = ?", (name,)).fetchone()
            if row is not None:
                conn.execute("UPDATE sso_providers SET issuer = ?, client_id = ?, client_secret = ? WHERE id = ?",
                             (issuer, client_id, client_secret, row.id))
                return int(row.id)
            return int(conn.one("INSERT INTO sso_providers (name, issuer, client_id, client_secret, created_at) "
                                "VALUES (?, ?, ?, ?, ?) RETURNING id",
                                (name, issuer, client_id, client_secret, at)).id)

        return self.database.write(work, lock=ACCOUNT_LOCK)

    def providers(self) -> list[Record]:
        """Records of PROVIDER_COLUMNS (provider.issuer, ...), by name."""
        return self._read(lambda conn: conn.execute(
            f"SELECT {PROVIDER_COLUMNS} FROM sso_providers ORDER BY name").fetchall())

    def provider(self, provider_id: int) -> Any | None:
        return self._read(lambda conn: conn.execute(
            f"SELECT {PROVIDER_COLUMNS} FROM sso_providers WHERE id = ?", (provider_id,)).fetchone())

    def remove_provider(self, name: str) -> bool:
        """Remove the provider and its sign-ins in progress (accounts linked to it keep their links)."""

        def work(conn: Connection) -> bool:
            row = conn.execute("SELECT id FROM sso_providers WHERE name = ?", (name,)).fetchone()
            if row is None:
                return False
            conn.execute("DELETE FROM sso_logins WHERE provider_id = ?", (row.id,))
            conn.execute("DELETE FROM sso_providers WHERE id = ?", (row.id,))
            return True

        return self.database.write(work, lock=ACCOUNT_LOCK)

    # ---------------------------------------------------------------- sign-ins in progress

    def add_login(self, state_hash: str, provider_id: int, nonce: str, verifier: str, intent: dict[str, Any], *,
                  client: str, now: float, budget: StrangerBudget) -> None:
        """Within the strangers' budget (lti_store.add_stranger_row): OverBudget when the login does not fit."""
        add_stranger_row(self.database, "sso_logins", {"state_hash": state_hash, "provider_id": provider_id,
                                                       "nonce": nonce, "verifier": verifier, "intent": intent},
                         client, now, budget)

    def login(self, state_hash: str) -> SsoLogin | None:
        """The sign-in in progress of this state, or None."""
        row = self._read(lambda conn: conn.execute(
            "SELECT provider_id, nonce, verifier, intent, created_ts, used_ts FROM sso_logins WHERE state_hash = ?",
            (state_hash,)).fetchone())
        return None if row is None else SsoLogin(int(row.provider_id), row.nonce, row.verifier, json.loads(row.intent),
                                                 float(row.created_ts), row.used_ts)

    def use_login(self, state_hash: str, now: float) -> bool:
        return use_login(self.database, "sso_logins", state_hash, now)

    # ---------------------------------------------------------------- linked accounts

    def linked_accounts(self, issuer: str, subject: str) -> list[int]:
        return [int(row.account_id) for row in self._read(lambda conn: conn.execute(
            "SELECT account_id FROM sso_users WHERE issuer = ? AND subject = ? ORDER BY account_id",
            (issuer, subject)).fetchall())]

    def link(self, issuer: str, subject: str, account_id: int, class_id: int) -> bool:
        """Link the account to the person (issuer, subject); False if the person has another account in that class
        or the account is linked to someone else already."""

        def work(conn: Connection) -> bool:
            taken = conn.execute("SELECT account_id FROM sso_users WHERE (issuer = ? AND subject = ? AND class_id = ?) "
                                 "OR account_id = ?", (issuer, subject, class_id, account_id)).fetchall()
            if taken:
                return all(int(row.account_id) == account_id for row in taken) and len(taken) == 1
            conn.execute("INSERT INTO sso_users (issuer, subject, class_id, account_id) VALUES (?, ?, ?, ?)",
                         (issuer, subject, class_id, account_id))
            return True

        return self.database.write(work, lock=ACCOUNT_LOCK)

    def join(self, issuer: str, subject: str, class_id: int, name: Callable[[list[str]], str], at: str,
             email: str = "") -> tuple[int, bool]:
        """(account id, made now) of the person in the class: their linked learner account, or a new one
        (within the class's seats and approval: SeatsTaken when every seat is taken). ``email``: their verified
        e-mail, which takes the roster's seat listed for it, if no one has (progress/lti_store.linked_account)."""
        return self.database.write(lambda conn: linked_account(conn, "sso_users", issuer, subject, class_id, "learner",
                                                               name, at, follow_role=False, by_invite=True,
                                                               roster_key=email),
                                   lock=ACCOUNT_LOCK)

    def take_seats(self, issuer: str, subject: str, email: str) -> None:
        """Each learner account linked to the person (issuer, subject) that holds no roster seat takes the seat
        its class's roster lists for ``email`` (their verified e-mail), if no one has taken it: a learner who
        joined before the roster was imported gets its section at their next sign-in."""

        def seats(conn: Connection) -> list[Any]:
            return conn.execute(
                "SELECT s.account_id, s.class_id FROM sso_users s JOIN accounts a ON a.id = s.account_id "
                "WHERE s.issuer = ? AND s.subject = ? AND a.role = 'learner' AND NOT EXISTS "
                "(SELECT 1 FROM roster_entries r WHERE r.account_id = s.account_id) AND EXISTS "
                "(SELECT 1 FROM roster_entries r WHERE r.class_id = s.class_id AND r.person_key = ? "
                "AND r.account_id IS NULL)", (issuer, subject, email)).fetchall()

        def work(conn: Connection) -> None:
            for row in seats(conn):  # again, inside the write: another sign-in may have taken one meanwhile
                take_seat(conn, int(row.class_id), email, int(row.account_id))

        if self._read(seats):  # most sign-ins have no seat to take: no write for them
            self.database.write(work, lock=ACCOUNT_LOCK)

    def unlinked_people(self, class_id: int) -> list[Record]:
        """Records (id, name, role) of everyone in the class who has no linked sign-in account (neither a
        provider's nor an LMS's): with passwords off they could not sign in. Teachers first, then by name."""
        return list(self._read(lambda conn: conn.execute(
            "SELECT a.id, a.name, a.role FROM accounts a WHERE a.class_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM sso_users s WHERE s.account_id = a.id) "
            "AND NOT EXISTS (SELECT 1 FROM lti_users l WHERE l.account_id = a.id) "
            "ORDER BY CASE WHEN a.role = 'teacher' THEN 0 ELSE 1 END, a.name, a.id", (class_id,)).fetchall()))

    def is_linked(self, account_id: int) -> bool:
        return self._read(lambda conn: conn.execute(
            "SELECT 1 FROM sso_users WHERE account_id = ?", (account_id,)).fetchone()) is not None

    # ---------------------------------------------------------------- passwords, class by class

    def passwords_allowed(self, class_id: int) -> bool:
        row = self._read(lambda conn: conn.execute(
            "SELECT passwords FROM class_sign_in WHERE class_id = ?", (class_id,)).fetchone())
        return row is None or bool(row.passwords)

    def set_passwords(self, class_id: int, allowed: bool) -> None:
        self.database.write(lambda conn: conn.execute(
            "INSERT INTO class_sign_in (class_id, passwords) VALUES (?, ?) ON CONFLICT (class_id) "
            "DO UPDATE SET passwords = excluded.passwords", (class_id, int(allowed))), lock=ACCOUNT_LOCK)
