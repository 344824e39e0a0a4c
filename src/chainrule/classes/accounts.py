"""Classes and their accounts: a teacher and learners, invite links, passwords, one-time links, sign-in limits.

Everything lives in the class store's database (tables of schema migration 3, their SQL in
progress/class_store.py), so that any number of web processes share it and keep no state of their own. Secrets are never stored as given: passwords as
argon2id hashes (argon2-cffi), invite and one-time link tokens as their SHA-256.

    roster = Accounts(store)                         # store: open_store(...) of the class database
    made = roster.create_class("Physics 2b")         # -> NewClass(class_id, teacher_token, invite_token)
    learner = roster.join(made.invite_token, "Ada", "a long password")
    account = roster.sign_in("Physics 2b", "Ada", "a long password", address="203.0.113.7")
"""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from chainrule.progress.class_store import ClassStore, SeatsTaken
from chainrule.text_safety import valid_text

TEACHER, LEARNER = "teacher", "learner"
SET_PASSWORD = "set-password"
TEACHER_LINK_LIFETIME = timedelta(days=7)
RESET_LINK_LIFETIME = timedelta(days=2)
MIN_PASSWORD, MAX_PASSWORD = 10, 200  # characters; argon2 hashes any length, the cap bounds the work
MAX_NAME = 60
# Failed sign-ins allowed in the window: per account name (guessing one password), per client address
# (trying many names). Past either, sign-in is refused without checking the password.
SIGN_IN_WINDOW = timedelta(minutes=15)
MAX_FAILURES_PER_NAME = 5
MAX_FAILURES_PER_ADDRESS = 30
LINK_NOT_VALID = "this link is not valid: it was used already, or it expired. Ask for a new one."


class ClassError(Exception):
    """A request about a class or an account that cannot be done; str() says why and what to do.

    kind: "invalid" (bad input), "not-found", "refused" (wrong password, used link), "conflict" (name
    taken), "rate-limited", "full" (every seat taken), "waiting" (not let in by the teacher yet).
    """

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Account:
    id: int
    class_id: int
    class_name: str
    role: str
    name: str
    session_epoch: int
    approved: bool = True  # False: joined a class that asks for approval, not let in by the teacher yet


@dataclass(frozen=True)
class Admission:
    """Who may join a class: at most ``seats`` learners (None: any number), and whether the teacher lets
    each one in (``approval``); ``taken``: learners in the class now, waiting ones included."""

    seats: int | None
    approval: bool
    taken: int


MAX_SEATS = 10_000
WAITING_FOR_TEACHER = ("your teacher has not let you in yet: they see that you joined, and once they approve "
                       "you, sign in here with your name and password")


def _account_of(row: tuple) -> Account:
    return Account(int(row[0]), int(row[1]), row[2], row[3], row[4], int(row[5]), bool(row[6]))


@dataclass(frozen=True)
class NewClass:
    class_id: int
    name: str
    teacher_token: str
    invite_token: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def clean_name(value: Any, what: str) -> str:
    """A display or class name: 1-60 printable characters, surrounding space removed, Unicode NFC."""
    if not isinstance(value, str):
        raise ClassError(f"the {what} must be text", kind="invalid")
    name = unicodedata.normalize("NFC", valid_text(value)).strip()
    if not name or len(name) > MAX_NAME:
        raise ClassError(f"the {what} must be 1 to {MAX_NAME} characters, got {len(name)}", kind="invalid")
    if any(unicodedata.category(char).startswith("C") for char in name):
        raise ClassError(f"the {what} may not hold control or invisible format characters", kind="invalid")
    return name


def check_password(value: Any) -> str:
    if not isinstance(value, str) or not MIN_PASSWORD <= len(value) <= MAX_PASSWORD:
        raise ClassError(
            f"a password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters (a few words make a good one)",
            kind="invalid",
        )
    return value


class Accounts:
    """Classes and accounts in a class store (a ProgressStore opened on the class database)."""

    def __init__(self, store: Any, hasher: PasswordHasher | None = None) -> None:
        self.store = store
        self.tables = ClassStore(store)
        self.hasher = hasher or PasswordHasher()  # argon2id, RFC 9106's low-memory profile by default

    def _now(self):
        return self.store.now()

    def account(self, account_id: int) -> Account | None:
        row = self.tables.account(account_id)
        return None if row is None else _account_of(row)

    def created_at(self, account_id: int) -> datetime:
        """When the account was made (the start of its life: no work of it is older)."""
        return datetime.fromisoformat(self.tables.created_at(account_id)).astimezone(timezone.utc)

    def class_id(self, name: str) -> int:
        name = clean_name(name, "class name")
        found = self.tables.class_id(name)
        if found is None:
            raise ClassError(f"there is no class named {name!r} (`chainrule class list` shows them)", kind="not-found")
        return found

    def classes(self) -> list[dict]:
        return [{"id": int(r[0]), "name": r[1], "created_at": r[2], "learners": int(r[3])} for r in self.tables.classes()]

    def learners(self, class_id: int) -> list[Account]:
        return [_account_of(row) for row in self.tables.learners(class_id)]

    def _new_link(self, lifetime: timedelta) -> tuple[str, str, float]:
        token = secrets.token_urlsafe(32)
        return token, token_hash(token), (self._now() + lifetime).timestamp()

    # ---------------------------------------------------------------- classes

    def create_class(self, name: str, teacher_name: str = "Teacher") -> NewClass:
        """A new class with its teacher account; returns the teacher's one-time link token and the invite token."""
        name = clean_name(name, "class name")
        teacher_name = clean_name(teacher_name, "teacher's name")
        invite = secrets.token_urlsafe(24)
        link, link_hash, expires = self._new_link(TEACHER_LINK_LIFETIME)
        class_id = self.tables.create_class(name, token_hash(invite), teacher_name, self._now().isoformat(),
                                            link_hash, expires)
        if class_id is None:
            raise ClassError(f"a class named {name!r} exists already: choose another name", kind="conflict")
        return NewClass(class_id, name, link, invite)

    def new_teacher_link(self, class_name: str) -> str:
        """A fresh one-time link for the class's teacher (to sign in the first time, or after losing the password)."""
        teacher_id = self.tables.teacher_id(self.class_id(class_name))
        link, link_hash, expires = self._new_link(TEACHER_LINK_LIFETIME)
        self.tables.add_link(teacher_id, link_hash, expires)
        return link

    def new_invite(self, class_name: str) -> str:
        """A new learner invite for the class; the previous one stops working."""
        class_id = self.class_id(class_name)
        invite = secrets.token_urlsafe(24)
        self.tables.set_invite(class_id, token_hash(invite))
        return invite

    def invited_class(self, invite_token: str) -> tuple[int, str]:
        found = self.tables.class_of_invite(token_hash(invite_token))
        if found is None:
            raise ClassError("this invite link is not (or no longer) valid: ask your teacher for the current one",
                             kind="not-found")
        return found

    # ---------------------------------------------------------------- accounts

    def join(self, invite_token: str, name: str, password: str) -> Account:
        """A learner joins the class of the invite with a display name and a password."""
        class_id, class_name = self.invited_class(invite_token)
        name = clean_name(name, "name")
        self._seat_left(class_id, class_name)  # a full class answers before the password is hashed
        password_hash = self.hasher.hash(check_password(password))
        try:
            account_id = self.tables.add_learner(class_id, name, password_hash, self._now().isoformat())
        except SeatsTaken:
            self._seat_left(class_id, class_name)
            raise
        if account_id is None:
            raise ClassError(f"someone in {class_name!r} already goes by {name!r}: choose another name",
                             kind="conflict")
        return self.account(account_id)

    # ---------------------------------------------------------------- who is in (the teacher decides)

    def admission(self, class_id: int) -> Admission:
        return Admission(*self.tables.admission(class_id))

    def _seat_left(self, class_id: int, class_name: str) -> None:
        admission = self.admission(class_id)
        if admission.seats is not None and admission.taken >= admission.seats:
            raise ClassError(f"{class_name!r} is full: all {admission.seats} seats are taken. Ask your teacher.",
                             kind="full")

    def set_admission(self, class_id: int, seats: Any = None, approval: Any = False) -> Admission:
        """Set how many learners the class takes (None: any number) and whether each waits for the teacher."""
        if seats is not None and (isinstance(seats, bool) or not isinstance(seats, int) or not 0 <= seats <= MAX_SEATS):
            raise ClassError(f"seats must be a whole number from 0 to {MAX_SEATS:,}, or none for no limit",
                             kind="invalid")
        if not isinstance(approval, bool):
            raise ClassError("approval must be true or false", kind="invalid")
        self.tables.set_admission(class_id, seats, approval)
        return self.admission(class_id)

    def _learner_of(self, teacher: Account, learner_id: int) -> Account:
        if teacher.role != TEACHER:
            raise ClassError("only the class's teacher can do this", kind="refused")
        learner = self.account(learner_id)
        if learner is None or learner.class_id != teacher.class_id or learner.role != LEARNER:
            raise ClassError(f"there is no learner {learner_id} in your class", kind="not-found")
        return learner

    def approve(self, teacher: Account, learner_id: int) -> Account:
        """Let a learner who joined in (their teacher only)."""
        self.tables.approve(self._learner_of(teacher, learner_id).id)
        return self.account(learner_id)

    def remove_learner(self, teacher: Account, learner_id: int) -> Account:
        """Remove a learner's account and everything it did (their teacher only): its seat is free again
        and every session of it ends. Its runs waiting for the grader go with the seam's forget_learner."""
        learner = self._learner_of(teacher, learner_id)
        self.tables.remove_learner(learner.id)
        return learner

    def sign_in(self, class_name: str, name: str, password: str, *, address: str = "") -> Account:
        """The account for this class, name and password; ClassError("refused") otherwise, or
        ClassError("rate-limited") after too many failures (then the password is not even checked)."""
        now = self._now().timestamp()
        texts = [value if isinstance(value, str) else "" for value in (class_name, name, password)]
        class_text, name_text = (unicodedata.normalize("NFC", value).strip() for value in texts[:2])
        scopes = (f"name:{class_text.casefold()}/{name_text.casefold()}", f"address:{address}")
        since = now - SIGN_IN_WINDOW.total_seconds()
        counts = self.tables.failures(scopes, since)
        if counts[0] >= MAX_FAILURES_PER_NAME or counts[1] >= MAX_FAILURES_PER_ADDRESS:
            minutes = int(SIGN_IN_WINDOW.total_seconds() // 60)
            raise ClassError(f"too many failed sign-ins: wait {minutes} minutes, or ask your teacher for a "
                             "reset link", kind="rate-limited")
        row = self.tables.password_hash(class_text, name_text)
        if row is None or row[1] is None:
            self._verify(self._dummy_hash(), texts[2])  # same time either way: the timing tells no names
        elif self._verify(row[1], texts[2]):
            self.tables.clear_failures(scopes[0])
            account = self.account(row[0])
            if not account.approved:  # the right password: not a failure, but not in the class yet
                raise ClassError(WAITING_FOR_TEACHER, kind="waiting")
            return account
        self.tables.record_failure(scopes, now, forget_before=since)
        raise ClassError("the class, name or password is not right", kind="refused")

    def _dummy_hash(self) -> str:
        if getattr(self, "_dummy", None) is None:
            self._dummy = self.hasher.hash(secrets.token_hex(16))
        return self._dummy

    def _verify(self, stored: str, password: str) -> bool:
        try:
            return self.hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def new_reset_link(self, teacher: Account, learner_id: int) -> str:
        """A one-time link with which the learner sets a new password (their teacher only)."""
        learner = self._learner_of(teacher, learner_id)
        link, link_hash, expires = self._new_link(RESET_LINK_LIFETIME)
        self.tables.add_link(learner.id, link_hash, expires)
        return link

    def link_account(self, token: str) -> Account:
        """The account a one-time link is for, if it is unused and not expired."""
        account_id = self.tables.link_account_id(token_hash(token), self._now().timestamp())
        account = None if account_id is None else self.account(account_id)
        if account is None:
            raise ClassError(LINK_NOT_VALID, kind="not-found")
        return account

    def use_link(self, token: str, password: str) -> Account:
        """Set the password through a one-time link (once); every earlier session of the account ends."""
        password_hash = self.hasher.hash(check_password(password))
        now = self._now()
        account_id = self.tables.use_link(token_hash(token), now.timestamp(), now.isoformat(), password_hash)
        if account_id is None:
            raise ClassError(LINK_NOT_VALID, kind="not-found")
        return self.account(account_id)

    def end_sessions(self, account_id: int) -> None:
        """Sign the account out everywhere: every session cookie made so far stops working."""
        self.tables.end_sessions(account_id)

    def secret(self) -> str:
        """The secret that signs session cookies (kept in the class database, shared by every web process)."""
        return self.tables.secret()
