"""Classes and their accounts: a teacher and learners, invite links, passwords, one-time links, sign-in limits.

Everything lives in the class store's database (tables of schema migration 3, their SQL in
progress/class_store.py), so that any number of web processes share it and keep no state of their own. Secrets are never stored as given: passwords as
argon2id hashes (argon2-cffi, computed in classes/passwords.py's bounded pool), invite and one-time link
tokens as their SHA-256. Joining, signing in and setting a password are coroutines: their cheap checks
(the invite, the link, the name, the limits) run first, then the password's hash waits for its turn in
the pool, so a made-up link or a locked name costs no hashing at all.

    roster = Accounts(store)                         # store: open_store(...) of the class database
    made = roster.create_class("Physics 2b")         # -> NewClass(class_id, teacher_token, invite_token)
    learner = await roster.join(made.invite_token, "Ada", "a long password")
    account = await roster.sign_in("Physics 2b", "Ada", "a long password")

Sign-in limits slow a guesser without letting anyone lock another person out. Failures are counted per
name (whoever sends them; names with no account share UNKNOWN_SCOPES counters) or, from a browser the
account has signed in on before (a device cookie, classes/sessions.py), per that browser. Each name (or known browser) has FREE_FAILURES failures free;
after that each further attempt waits, after the latest failure, FIRST_WAIT doubled per failure beyond
the free ones, at most LONGEST_WAIT; failures are forgotten after FAILURE_MEMORY. A failure is counted
(reserved) before the password is checked, in one transaction, so simultaneous guesses cannot all pass.
No client address is counted: a school behind one address is many people, and its thirty mistakes lock
nobody out. The arithmetic is in docs/security.md ("Class mode").
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import math
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, ParamSpec, TypeVar

import anyio
from argon2 import PasswordHasher

from chainrule.classes.names import look_alike_keys
from chainrule.classes.passwords import PasswordPool, PasswordsBusy
from chainrule.errors import InputError
from chainrule.number_text import count_text
from chainrule.progress.audit_store import actor_of
from chainrule.progress.class_store import AccountRow, ClassClosed, ClassStore, SeatsTaken
from chainrule.progress.people_store import PeopleStore
from chainrule.progress.roster_store import AlreadyClaimed, NotOnRoster
from chainrule.progress.store import ProgressStore
from chainrule.text_safety import valid_text

TEACHER, LEARNER = "teacher", "learner"
# A teaching assistant reads everything a teacher reads and comments on runs, but changes no grade and no person
# (web/roles.py's "staff" role); STAFF: the roles that read the class's work.
ASSISTANT = "assistant"
STAFF = (TEACHER, ASSISTANT)
TEACHER_LINK_LIFETIME = timedelta(days=7)
RESET_LINK_LIFETIME = timedelta(days=2)
MIN_PASSWORD, MAX_PASSWORD = 10, 200  # characters; argon2 hashes any length, the cap bounds the work
MAX_NAME = 60
FREE_FAILURES = 5  # failed sign-ins per name (or known browser) before any wait
FIRST_WAIT = 30.0  # seconds after the first failure beyond the free ones; doubled per further failure
LONGEST_WAIT = 15 * 60.0  # seconds: the wait grows no further
FAILURE_MEMORY = timedelta(hours=24)  # failures older than this are forgotten
# Names with no account share this many failure counters (by a hash of the name): a stranger trying made-up
# names keeps at most (accounts + UNKNOWN_SCOPES) counters of failures, however many names it tries (issue 41,
# item 6), and a made-up name still slows down as a real one does, so the answers tell no name from another.
UNKNOWN_SCOPES = 256
LINK_NOT_VALID = "this link is not valid: it was used already, or it expired. Ask for a new one."
# Characters that show nothing, beyond the control and format characters (category C) that a name may not
# hold either: Unicode's default-ignorable code points of other categories (Hangul fillers, variation
# selectors, the combining grapheme joiner, Mongolian variation selectors, Khmer inherent vowels).
INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0") | frozenset(
    chr(code) for code in [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])


def wait_after(failures: int) -> float:
    """Seconds a further attempt waits after the latest of ``failures`` recent failures (0: none)."""
    if failures < FREE_FAILURES:
        return 0.0
    return min(FIRST_WAIT * 2.0 ** (failures - FREE_FAILURES), LONGEST_WAIT)


def _duration(seconds: float) -> str:
    whole = max(1, math.ceil(seconds))
    return count_text(whole, "second") if whole < 120 else count_text(math.ceil(whole / 60), "minute")


Params = ParamSpec("Params")
Result = TypeVar("Result")


async def in_thread(function: Callable[Params, Result], *args: Params.args, **kwargs: Params.kwargs) -> Result:
    """A blocking call (a database query, a big file read), off the event loop, in the server's shared pool."""
    return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs))


class ClassError(Exception):
    """A request about a class or an account that cannot be done; str() says why and what to do.

    kind: "not-found", "refused" (wrong password, used link), "conflict" (name taken), "rate-limited" (then
    retry_after: the seconds to wait), "full" (every seat taken), "waiting" (not let in by the teacher yet).
    Input that cannot be used at all is an InputError (chainrule.errors).
    """

    def __init__(self, message: str, *, kind: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


@dataclass(frozen=True)
class Account:
    id: int
    class_id: int
    class_name: str
    role: str
    name: str
    session_epoch: int
    approved: bool = True  # False: joined a class that asks for approval, not let in by the teacher yet
    class_state: str = "open"  # "closed": no one joins, learners only read; "archived": teachers only read too
    section: str = ""  # a learner's section ('': none), from the roster or set by a teacher


# The services' own check of a role, for the callers that are not routes (the command line, another service):
# a route declares its role (web/roles.py) and is refused before it reaches a service. One sentence for both.
ONLY_TEACHERS = "only the class's teachers can do this"


def teacher_only(account: Account) -> Account:
    """``account`` if it is a teacher (of its own class: every account belongs to one); else ClassError
    "refused"."""
    if account.role != TEACHER:
        raise ClassError(ONLY_TEACHERS, kind="refused")
    return account


def staff_only(account: Account) -> Account:
    """``account`` if it is a teacher or a teaching assistant (who read what a teacher reads); else ClassError
    "refused"."""
    if account.role not in STAFF:
        raise ClassError(ONLY_TEACHERS, kind="refused")
    return account


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


def _removed(account_id: int) -> ClassError:
    return ClassError(f"there is no account {account_id} any more", kind="not-found")


def _account_of(row: AccountRow) -> Account:
    return Account(int(row.id), int(row.class_id), row.class_name, row.role, row.name, int(row.session_epoch),
                   bool(row.approved), row.class_state, row.section or "")


@dataclass(frozen=True)
class NewClass:
    class_id: int
    name: str
    teacher_token: str
    invite_token: str


@dataclass(frozen=True)
class SignInAttempt:
    """A sign-in between its cheap checks and its password check: the failure it has reserved."""

    account_id: int | None
    stored_hash: str | None
    scope: str  # whose failures it counts under: "name:<class>/<name>" or "device:<nonce>"
    reservation: int


def roster_refusal(refusal: Exception) -> str:
    """What a learner joining with a roster key is told when it cannot be taken."""
    if isinstance(refusal, AlreadyClaimed):
        return ("someone has joined with that e-mail or school id already: if it is yours, sign in instead, or "
                "ask your teacher")
    return ("that e-mail or school id is not on this class's roster: check it, leave it empty to join without "
            "it, or ask your teacher")


def closed_to_newcomers(class_name: str) -> str:
    return f"{class_name!r} is closed: it takes no new learners. Ask your teacher."


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def invite_token(secret: str, salt: str) -> str:
    """A class's invite, derived from its salt and the server's secret: the teacher's page can show the
    current one again, while the database keeps its SHA-256 (a copy of the database, which holds the
    secret, gives no more than it gave before: the secret signs every session)."""
    digest = hmac.new(secret.encode(), b"invite:" + salt.encode(), hashlib.sha256).digest()[:24]
    return base64.urlsafe_b64encode(digest).decode("ascii")


def storable_text(value: Any, field: str) -> str:
    """Text a database can keep: an InputError for a NUL (PostgreSQL cannot store it); lone surrogates
    become U+FFFD."""
    if not isinstance(value, str):
        raise InputError(f"the {field.replace('_', ' ')} must be text", field=field)
    if "\x00" in value:
        raise InputError(f"the {field.replace('_', ' ')} may not hold a NUL character (U+0000)", field=field)
    return valid_text(value)


def clean_name(value: Any, what: str, field: str | None = None) -> str:
    """A display or class name: 1-60 printable characters, surrounding space removed, Unicode NFC."""
    field = field or what.replace(" ", "_")
    name = unicodedata.normalize("NFC", storable_text(value, field)).strip()
    if not name or len(name) > MAX_NAME:
        raise InputError(f"the {what} must be 1 to {MAX_NAME} characters, got {len(name)}", field=field)
    if any(unicodedata.category(char).startswith("C") or char in INVISIBLE for char in name):
        raise InputError(f"the {what} may not hold control or invisible characters", field=field)
    return name


def joining_key(value: Any) -> str:
    """The e-mail (in lower case) or school id a learner gives when joining, as classes/roster.py keeps a
    roster's keys ('' : none given)."""
    text = storable_text(value if value is not None else "", "roster_key").strip()
    return text.lower() if "@" in text else text


def check_password(value: Any) -> str:
    if not isinstance(value, str) or not MIN_PASSWORD <= len(value) <= MAX_PASSWORD:
        raise InputError(
            f"a password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters (a few words make a good one)",
            field="password",
        )
    return value


class Accounts:
    """Classes and accounts in a class store (a ProgressStore opened on the class database)."""

    def __init__(self, store: ProgressStore, hasher: PasswordHasher | None = None, *,
                 passwords: PasswordPool | None = None) -> None:
        self.store = store
        self.tables = ClassStore(store)
        self.people = PeopleStore(store)
        self.passwords = passwords or PasswordPool(hasher)
        self._dummy: str | None = None

    def _now(self) -> datetime:
        return self.store.now()

    def account(self, account_id: int) -> Account | None:
        row = self.tables.account(account_id)
        return None if row is None else _account_of(row)

    def written(self, account_id: int) -> Account:
        """An account just written (ClassError "not-found" if it was removed in the meantime)."""
        found = self.account(account_id)
        if found is None:
            raise _removed(account_id)
        return found

    def created_at(self, account_id: int) -> datetime:
        """When the account was made (the start of its life: no work of it is older)."""
        made = self.tables.created_at(account_id)
        if made is None:
            raise _removed(account_id)
        return datetime.fromisoformat(made).astimezone(timezone.utc)

    def class_id(self, name: str) -> int:
        name = clean_name(name, "class name")
        found = self.tables.class_id(name)
        if found is None:
            raise ClassError(f"there is no class named {name!r} (`chainrule class list` shows them)", kind="not-found")
        return found

    def classes(self) -> list[dict]:
        return [{"id": int(row.id), "name": row.name, "created_at": row.created_at, "learners": int(row.learners)}
                for row in self.tables.classes()]

    def learners(self, class_id: int) -> list[Account]:
        return [_account_of(row) for row in self.tables.learners(class_id)]

    def learner(self, class_id: int, learner_id: int) -> Account:
        """The learner ``learner_id`` of the class (ClassError "not-found" for anyone else, as for no one)."""
        learner = self.account(learner_id)
        if learner is None or learner.class_id != class_id or learner.role != LEARNER:
            raise ClassError(f"there is no learner {learner_id} in your class", kind="not-found")
        return learner

    def new_link(self, lifetime: timedelta) -> tuple[str, str, float]:
        """(a one-time link's token, its hash, when it expires)."""
        return self._new_link(lifetime)

    def _new_link(self, lifetime: timedelta) -> tuple[str, str, float]:
        token = secrets.token_urlsafe(32)
        return token, token_hash(token), (self._now() + lifetime).timestamp()

    # ---------------------------------------------------------------- classes

    def create_class(self, name: str, teacher_name: str = "Teacher") -> NewClass:
        """A new class with its teacher account; returns the teacher's one-time link token and the invite token."""
        name = clean_name(name, "class name")
        teacher_name = clean_name(teacher_name, "teacher's name", "teacher")
        invite, salt = self._fresh_invite()
        link, link_hash, expires = self._new_link(TEACHER_LINK_LIFETIME)
        class_id = self.tables.create_class(name, token_hash(invite), teacher_name, self._now().isoformat(),
                                            link_hash, expires)
        if class_id is None:
            raise ClassError(f"a class named {name!r} exists already: choose another name", kind="conflict")
        self.people.set_invite(class_id, token_hash(invite), salt)
        return NewClass(class_id, name, link, invite)

    def _fresh_invite(self) -> tuple[str, str]:
        salt = secrets.token_urlsafe(16)
        return invite_token(self.secret(), salt), salt

    def new_teacher_link(self, class_name: str) -> str:
        """A fresh one-time link for the class's teacher (to sign in the first time, or after losing the password)."""
        teacher_id = self.tables.teacher_id(self.class_id(class_name))
        if teacher_id is None:
            raise ClassError(f"{class_name!r} has no teacher account yet: an LMS course's class gets its teachers "
                             "when they first open chainrule from the course", kind="not-found")
        link, link_hash, expires = self._new_link(TEACHER_LINK_LIFETIME)
        self.tables.add_link(teacher_id, link_hash, expires)
        return link

    def new_invite(self, class_name: str) -> str:
        """A new learner invite for the class; the previous one stops working."""
        return self.rotate_invite(self.class_id(class_name))

    def rotate_invite(self, class_id: int) -> str:
        """A new invite for the class (the previous one stops working)."""
        invite, salt = self._fresh_invite()
        self.people.set_invite(class_id, token_hash(invite), salt)
        return invite

    def invited_class(self, invite_token: str) -> tuple[int, str]:
        found = self.people.class_of_invite(token_hash(invite_token))
        if found is None:
            raise ClassError("this invite link is not (or no longer) valid: ask your teacher for the current one",
                             kind="not-found")
        if found.state != "open":
            raise ClassError(closed_to_newcomers(found.name), kind="refused")
        return int(found.id), found.name

    # ---------------------------------------------------------------- accounts

    def check_join(self, invite_token: str, name: Any) -> tuple[int, str, str]:
        """The cheap checks of joining, before any hashing: (class id, class name, the cleaned name)."""
        class_id, class_name = self.invited_class(invite_token)
        name = clean_name(name, "name")
        self._refuse_look_alike(class_name, name, self.tables.names(class_id))
        self._seat_left(class_id, class_name)  # a full class answers before the password is hashed
        return class_id, class_name, name

    def refuse_look_alike(self, class_name: str, name: str, taken: list[str]) -> None:
        """ClassError "conflict" if ``name`` is, or looks like, one of ``taken``."""
        self._refuse_look_alike(class_name, name, taken)

    @staticmethod
    def _refuse_look_alike(class_name: str, name: str, taken: list[str]) -> None:
        keys = look_alike_keys(name)
        for other in taken:
            if not keys.isdisjoint(look_alike_keys(other)):
                same = "already goes by" if other == name else "goes by a name that looks the same:"
                raise ClassError(f"someone in {class_name!r} {same} {other!r}: choose another name", kind="conflict")

    async def join(self, invite_token: str, name: str, password: str, roster_key: Any = "") -> Account:
        """A learner joins the class of the invite with a display name and a password (waiting for the
        teacher if the class asks for approval). With the e-mail or school id a teacher listed on the class's
        roster (classes/roster.py), they take that entry: its section, and no wait for approval."""
        key = joining_key(roster_key)
        class_id, class_name, name = await in_thread(self.check_join, invite_token, name)
        password_hash = await self.passwords.hash(check_password(password))

        def taken(names: list[str]) -> None:  # checked again inside the write: two joins at once
            self._refuse_look_alike(class_name, name, names)

        try:
            account_id = await in_thread(self.tables.add_learner, class_id, name, password_hash,
                                          self._now().isoformat(), taken, key)
        except SeatsTaken:
            await in_thread(self._seat_left, class_id, class_name)
            raise
        except ClassClosed:  # closed between the invite's check and the write
            raise ClassError(closed_to_newcomers(class_name), kind="refused") from None
        except (NotOnRoster, AlreadyClaimed) as refusal:
            raise ClassError(roster_refusal(refusal), kind="refused") from None
        return await in_thread(self.written, account_id)

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
            raise InputError(f"seats must be a whole number from 0 to {MAX_SEATS:,}, or none for no limit",
                             field="seats")
        if not isinstance(approval, bool):
            raise InputError("approval must be true or false", field="approval")
        self.tables.set_admission(class_id, seats, approval)
        return self.admission(class_id)

    def _learner_of(self, teacher: Account, learner_id: int) -> Account:
        return self.learner(teacher_only(teacher).class_id, learner_id)

    def learner_in_class(self, reader: Account, learner_id: int) -> Account:
        """The learner of the class of ``reader`` (a teacher or a teaching assistant, who read the same; ClassError
        "not-found" for anyone else, as for no one)."""
        return self.learner(staff_only(reader).class_id, learner_id)

    def approve(self, teacher: Account, learner_id: int) -> Account:
        """Let a learner who joined in (their teacher only)."""
        self.tables.approve(self._learner_of(teacher, learner_id).id)
        return self.written(learner_id)

    def remove_learner(self, teacher: Account, learner_id: int) -> Account:
        """Remove a learner's account and everything it did (their teacher only): its seat is free again
        and every session of it ends. Its runs waiting for the grader go with the seam's forget_learner."""
        learner = self._learner_of(teacher, learner_id)
        self.tables.remove_learner(learner.id, learner.class_id, actor_of(teacher))
        return learner

    async def sign_in(self, class_name: str, name: str, password: str, *,
                      known_device: tuple[int, str] | None = None) -> Account:
        """The account for this class, name and password; ClassError("refused") otherwise, or
        ClassError("rate-limited") while the name (or this known browser) must wait: then the password is
        not even checked. known_device: (account id, nonce) of the browser's device cookie, if any."""
        if not isinstance(password, str):
            raise InputError("the password must be text", field="password")
        attempt = await in_thread(self.begin_sign_in, class_name, name, known_device)
        try:
            stored = attempt.stored_hash or await self._dummy_hash()  # same work either way: no names leak
            matched = await self.passwords.verify(stored, password) and attempt.stored_hash is not None
        except BaseException:  # busy or cancelled: the attempt never happened, so it is not a failure
            with anyio.CancelScope(shield=True):
                await in_thread(self.tables.release_attempt, attempt.reservation)
            raise
        account = await in_thread(self.end_sign_in, attempt, matched)
        if attempt.stored_hash is not None:  # always, once end_sign_in let the account in
            await self._renew_outdated_hash(account.id, attempt.stored_hash, password)
        return account

    async def _renew_outdated_hash(self, account_id: int, stored: str, password: str) -> None:
        """A hash made at an older cost (argon2-cffi's default before issue 31) is made again at today's, once;
        busy now, it waits for a later sign-in."""
        if not self.passwords.outdated(stored):
            return
        try:
            renewed = await self.passwords.hash(password)
        except PasswordsBusy:
            return
        await in_thread(self.tables.renew_password_hash, account_id, stored, renewed)

    def begin_sign_in(self, class_name: Any, name: Any, known_device: tuple[int, str] | None) -> SignInAttempt:
        """Look the account up and reserve this attempt as a failure (atomically: simultaneous guesses are
        counted one after another), unless the name or browser must wait."""
        class_text = unicodedata.normalize("NFC", storable_text(class_name, "class_name")).strip()
        name_text = unicodedata.normalize("NFC", storable_text(name, "name")).strip()
        row = self.tables.password_hash(class_text, name_text)
        account_id, stored = (None, None) if row is None else row
        named = f"{class_text.casefold()}/{name_text.casefold()}"
        if known_device is not None and account_id is not None and known_device[0] == account_id:
            scope = f"device:{known_device[1]}"  # only this browser's own mistakes slow it down
        elif account_id is None:
            scope = f"unknown:{int.from_bytes(hashlib.sha256(named.encode()).digest()[:4], 'big') % UNKNOWN_SCOPES}"
        else:
            scope = f"name:{named}"
        now = self._now().timestamp()
        reservation, wait = self.tables.reserve_attempt(scope, now, now - FAILURE_MEMORY.total_seconds(), wait_after)
        if reservation is None:
            raise ClassError(f"too many failed sign-ins for this name: try again in {_duration(wait)}. From a "
                             "browser you signed in on before, you can sign in at once; or ask your teacher "
                             "for a reset link.", kind="rate-limited", retry_after=wait)
        return SignInAttempt(account_id, stored, scope, reservation)

    def end_sign_in(self, attempt: SignInAttempt, matched: bool) -> Account:
        """The password was checked: a failure keeps its reservation; the right one takes it back."""
        if not matched or attempt.account_id is None:
            raise ClassError("the class, name or password is not right", kind="refused")
        self.tables.release_attempt(attempt.reservation)
        if attempt.scope.startswith("device:"):
            self.tables.clear_failures(attempt.scope)  # this browser's own earlier mistakes are forgiven
        account = self.account(attempt.account_id)
        if account is None:
            raise ClassError("the class, name or password is not right", kind="refused")
        if not account.approved:  # the right password: not a failure, but not in the class yet
            raise ClassError(WAITING_FOR_TEACHER, kind="waiting")
        return account

    async def _dummy_hash(self) -> str:
        if self._dummy is None:
            self._dummy = await self.passwords.hash(secrets.token_hex(16))
        return self._dummy

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

    async def use_link(self, token: str, password: str) -> Account:
        """Set the password through a one-time link (once); every earlier session of the account ends.
        The link is looked up before the password is hashed: a made-up link costs no hashing."""
        check_password(password)
        await in_thread(self.link_account, token)
        password_hash = await self.passwords.hash(password)
        now = self._now()
        account_id = await in_thread(self.tables.use_link, token_hash(token), now.timestamp(), now.isoformat(),
                                      password_hash)
        if account_id is None:
            raise ClassError(LINK_NOT_VALID, kind="not-found")
        return await in_thread(self.written, account_id)

    def end_sessions(self, account_id: int) -> None:
        """Sign the account out everywhere: every session cookie made so far stops working."""
        self.tables.end_sessions(account_id)

    def secret(self) -> str:
        """The secret that signs session cookies (kept in the class database, shared by every web process)."""
        return self.tables.secret()
