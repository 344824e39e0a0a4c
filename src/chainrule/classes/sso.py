"""Single sign-on for a standalone class server: OpenID Connect (authorization code flow with PKCE) with any
standard provider (Google, Microsoft Entra ID, Keycloak, a university's), through Authlib.

    sso = Sso(store, accounts, "https://class.example.org")
    sso.add_provider("School account", "https://login.school.example", client_id, client_secret)
    begun = sso.begin(provider_id, {"do": "sign-in"})     # where to send the browser, and its state's cookie
    done = sso.finish(provider_id, query, cookies)        # the code exchanged, the id_token checked: who it is

The provider's settings come from its discovery document, whose ``issuer`` must be the one registered. A
sign-in keeps a fresh state (its SHA-256), nonce and PKCE verifier in the class database and binds the state to
the browser with a cookie; each provider has a callback address of its own, and the authorization response's
``iss`` (RFC 9207) must be that provider's when it is sent (it must be when the provider says it sends it), so a
response from one provider cannot finish a sign-in begun with another (mix-up). The code is exchanged once, with
the verifier, at the provider's token endpoint (the client authenticates with its secret); the id_token is
checked as an LTI launch's is (classes/id_tokens.py), its at_hash against the access token. Accounts are linked by
the provider's issuer and subject, never by e-mail (a verified e-mail only takes the seat a class's roster lists
for it: sso_store's take_seats). What the person came to do (the intent) is kept with the
state: sign in, join a class through its invite, or link the signed-in account to the provider.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping
from urllib.parse import quote

from chainrule.classes.accounts import TEACHER, Account, Accounts, ClassError, closed_to_newcomers, joining_key
from chainrule.classes.federation import (
    LOGIN_LIFETIME,
    Refused,
    digest,
    new_state,
    same_browser,
    state_cookie,
)
from chainrule.classes.id_tokens import KeySets, TokenRefused, verify
from chainrule.classes.lti import origin_of
from chainrule.classes.remote import Remote, RemoteError, with_query
from chainrule.classes.stranger_budget import BUDGET, OverBudget
from chainrule.classes.stranger_budget import CAUSES as STRANGER_CAUSES
from chainrule.errors import InputError
from chainrule.progress.class_store import ClassClosed, SeatsTaken
from chainrule.progress.dialect import Record
from chainrule.progress.sso_store import SsoStore
from chainrule.progress.store import ProgressStore

log = logging.getLogger("chainrule.sso")
KEEP_METADATA = 3600.0  # seconds a provider's discovery document is used before it is read again

CAUSES: dict[str, tuple[int, str]] = {
    "unknown-provider": (404, "Choose one of the sign-in buttons of this server's sign-in page."),
    "provider-unreachable": (502, "The sign-in provider cannot be reached now: try again in a moment, or sign in "
                                  "with your password if your class allows it."),
    "provider-misconfigured": (502, "The administrator checks the provider's issuer registered with "
                                    "`chainrule sso add`."),
    "provider-error": (400, "The sign-in provider did not sign you in; start again from the sign-in page."),
    "missing-parameter": (400, "Start again from the sign-in page (a sign-in cannot be finished from a bookmark)."),
    "unknown-state": (400, "Start again from the sign-in page (this sign-in did not start here, or took longer "
                           "than 10 minutes)."),
    "replayed": (400, "This sign-in was finished already. Start again from the sign-in page."),
    "not-this-browser": (400, "This sign-in was started in another browser (or this one dropped its cookie): start "
                              "again from the sign-in page in this browser."),
    "wrong-provider": (400, "This answer comes from another provider than the one the sign-in started with: start "
                            "again from the sign-in page."),
    "wrong-issuer": (400, "The answer is not from the provider this sign-in started with: start again."),
    "token-refused": (502, "The provider did not exchange the sign-in for a token: start again; if it keeps "
                           "failing, the administrator checks the client ID and secret (`chainrule sso add`)."),
    "not-a-token": (400, "The provider's answer cannot be read: start again, or tell the administrator."),
    "algorithm": (400, "The provider's signature is not one this server accepts: tell the administrator."),
    "keys-unreachable": (502, "The provider's public keys could not be fetched: try again in a moment."),
    "keys-unreadable": (502, "The provider's public keys could not be read: tell the administrator."),
    "unknown-key": (400, "The token is signed with a key the provider does not publish: start again."),
    "bad-signature": (400, "The token is not signed by the provider: start again."),
    "wrong-audience": (400, "The provider's token is meant for another application: the administrator checks the "
                            "client ID registered with `chainrule sso add`."),
    "wrong-authorized-party": (400, "The provider's token is meant for another application (azp): the "
                                    "administrator checks the client ID."),
    "expired": (400, "The token expired on its way, or a clock is wrong: start again."),
    "issued-in-the-future": (400, "A clock is wrong: the server's and the provider's clocks must be set right."),
    "not-yet-valid": (400, "A clock is wrong: the server's and the provider's clocks must be set right."),
    "wrong-nonce": (400, "The token does not belong to this sign-in: start again."),
    "no-subject": (400, "The provider did not say who you are: tell the administrator."),
    "missing-claim": (400, "The provider's token lacks a claim: tell the administrator."),
    "bad-claim": (400, "The provider's token has a claim this server cannot read: tell the administrator."),
    "no-account": (403, "New to a class: join it with its invite link. Already in a class: sign in with your "
                        "password and link your school account on your account page. If your teacher turned "
                        "passwords off, ask them to turn passwords on for a moment while you link it."),
    "invite-not-valid": (404, "Ask your teacher for the class's current invite link."),
    "class-full": (409, "Ask your teacher: they can give the class more seats."),
    "waiting": (403, "Sign in again once your teacher has let you in."),
    "link-refused": (409, "That provider account is linked to another account of this class already."),
    "session-changed": (403, "You signed out or in as someone else meanwhile: sign in and link again."),
    **STRANGER_CAUSES,
}


class SignInRefused(Refused):
    CAUSES = CAUSES


@dataclass(frozen=True)
class Provider:
    id: int
    name: str
    issuer: str
    client_id: str
    client_secret: str


def _provider(row: Record) -> Provider:
    return Provider(int(row.id), row.name, row.issuer, row.client_id, row.client_secret)


@dataclass(frozen=True)
class Begun:
    redirect: str
    state: str
    cookie: str
    provider_name: str


@dataclass(frozen=True)
class Finished:
    provider: Provider
    claims: dict
    intent: dict


CALLBACK_KEY_CHARS = 60  # a callback key is at most as long as a provider's name


def callback_key(name: str) -> str:
    """The part of a provider's redirect URI that names it: its name in lower-case letters, digits and dashes
    ("School account" -> "school-account"). Known from the name alone, so the URI can be registered at the
    provider before it gives a client ID (a row id is known only after `chainrule sso add`)."""
    return re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")


def callback_uri(base_url: str, name: str) -> str:
    """The redirect URI to register at the provider named ``name``, for a server reached at ``base_url``;
    ClassError for a name that cannot name one (no letter: a key of digits alone is read as an old row id)."""
    key = callback_key(name)
    if not key or key.isdigit():
        raise ClassError(f"a provider's name needs a letter (its redirect URI is named after it), not {name!r}",
                         kind="invalid")
    return f"{base_url.rstrip('/')}/sso/callback/{key}"


def verified_email(claims: Mapping[str, Any]) -> str:
    """The person's e-mail as a roster keeps it (accounts.joining_key), if the provider says it verified it
    (``email_verified`` true; some providers send the text "true"); else ''. Only a verified e-mail takes a
    roster's seat: an address a person typed into their profile unchecked proves nothing."""
    email = claims.get("email")
    if claims.get("email_verified") not in (True, "true") or not isinstance(email, str) or "@" not in email:
        return ""
    try:
        return joining_key(email)
    except InputError:
        return ""


def pkce_challenge(verifier: str) -> str:
    """PKCE's S256 code challenge of ``verifier`` (RFC 7636): base64url of its SHA-256, without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode("ascii")


class Sso:
    def __init__(self, store: ProgressStore, accounts: Accounts, base_url: str, *, remote: Remote | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.accounts = accounts
        self.base_url = base_url.rstrip("/")
        self.secure = self.base_url.startswith("https://")
        self.tables = SsoStore(store)
        self.remote = remote or Remote()
        self.key_sets = KeySets(self.remote)
        self.clock = clock
        self._metadata: dict[int, tuple[float, dict]] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- providers

    def add_provider(self, name: str, issuer: str, client_id: str, client_secret: str) -> Provider:
        name, issuer = name.strip(), issuer.strip().rstrip("/")
        if not name or len(name) > 60:
            raise ClassError("a provider's name must be 1 to 60 characters (it is shown on the sign-in button)",
                             kind="invalid")
        callback_uri(self.base_url, name)  # refuses a name that cannot name a redirect URI
        key = callback_key(name)
        taken = [other.name for other in self.providers() if callback_key(other.name) == key and other.name != name]
        if taken:
            raise ClassError(f"the provider {taken[0]!r} has the same redirect URI (…/sso/callback/{key}): choose a "
                             "name that differs in more than case, spaces or punctuation", kind="conflict")
        if not origin_of(issuer):
            raise ClassError(f"the issuer must be an http(s):// address, not {issuer!r}", kind="invalid")
        if not client_id.strip() or not client_secret.strip():
            raise ClassError("the client ID and the client secret must not be empty", kind="invalid")
        provider_id = self.tables.save_provider(name, issuer, client_id.strip(), client_secret.strip(),
                                                self.store.now().isoformat())
        with self._lock:
            self._metadata.pop(provider_id, None)
        return self.provider(provider_id)

    def providers(self) -> list[Provider]:
        return [_provider(row) for row in self.tables.providers()]

    def provider(self, provider_id: int) -> Provider:
        row = self.tables.provider(provider_id)
        if row is None:
            raise SignInRefused("unknown-provider", f"there is no sign-in provider {provider_id} on this server")
        return _provider(row)

    def by_callback_key(self, key: str) -> Provider:
        """The provider a callback names: by its callback_key, or by its row id (the redirect URIs registered
        before keys were names keep working)."""
        if key.isdigit() and len(key) < 10:
            return self.provider(int(key))
        for provider in self.providers():
            if callback_key(provider.name) == key:
                return provider
        raise SignInRefused("unknown-provider", "there is no sign-in provider with that redirect URI on this server")

    def callback(self, provider: Provider) -> str:
        """The redirect URI to register at the provider (one per provider: a response names its provider)."""
        return callback_uri(self.base_url, provider.name)

    def metadata(self, provider: Provider) -> dict:
        with self._lock:
            fetched, document = self._metadata.get(provider.id, (0.0, {}))
        if document and time.monotonic() - fetched < KEEP_METADATA:
            return document
        url = provider.issuer + "/.well-known/openid-configuration"
        try:
            document = self.remote.json("GET", url, what=f"the discovery document of {provider.name}").body
        except RemoteError as error:
            raise SignInRefused("provider-unreachable", f"{provider.name} cannot be reached", detail=str(error)) from None
        if not isinstance(document, dict) or document.get("issuer") != provider.issuer:
            raise SignInRefused("provider-misconfigured", f"the discovery document of {provider.name} names "
                                "another issuer", detail=f"{url} names "
                                f"{str(document.get('issuer') if isinstance(document, dict) else None)[:200]!r}, not "
                                f"{provider.issuer!r}")
        for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not origin_of(str(document.get(key) or "")):
                raise SignInRefused("provider-misconfigured", f"the discovery document of {provider.name} lacks "
                                    f"{key}", detail=url)
        with self._lock:
            self._metadata[provider.id] = (time.monotonic(), document)
        return document

    # ---------------------------------------------------------------- the sign-in

    def begin(self, provider_id: int, intent: dict, *, client: str = "") -> Begun:
        """The sign-in's state kept (within the strangers' budget, for ``client``: classes/stranger_budget.py)
        and where to send the browser; SignInRefused otherwise."""
        provider = self.provider(provider_id)
        metadata = self.metadata(provider)
        state, nonce, verifier, now = new_state(), new_state(), new_state() + new_state(), self.clock()
        try:
            self.tables.add_login(digest(state), provider.id, nonce, verifier, intent, client=client, now=now,
                                  budget=BUDGET)
        except OverBudget as over:
            raise SignInRefused(over.cause, str(over)) from None
        url = with_query(metadata["authorization_endpoint"], {
            "response_type": "code", "client_id": provider.client_id, "redirect_uri": self.callback(provider),
            "scope": "openid profile email", "state": state, "nonce": nonce,
            "code_challenge": pkce_challenge(verifier), "code_challenge_method": "S256"})
        return Begun(url, state, state_cookie("sso", state, self.secure), provider.name)

    def finish(self, provider_id: int, query: Mapping[str, str], cookies: Mapping[str, list[str]]) -> Finished:
        provider = self.provider(provider_id)
        state = str(query.get("state") or "")
        if query.get("error"):
            raise SignInRefused("provider-error", f"{provider.name} did not sign you in",
                                detail=f"{str(query['error'])[:80]!r}" + (f": {str(query.get('error_description'))[:200]}"
                                                                          if query.get("error_description") else ""))
        if not state or not query.get("code"):
            raise SignInRefused("missing-parameter", "the answer lacks its " + ("state" if not state else "code"))
        login = self.tables.login(digest(state))
        now = self.clock()
        if login is None or now - login.created_ts > LOGIN_LIFETIME and login.used_ts is None:
            raise SignInRefused("unknown-state", "no sign-in of this server has this answer's state (or it is "
                                "older than 10 minutes)")
        started_with, nonce, verifier, intent = login.provider_id, login.nonce, login.verifier, login.intent
        if login.used_ts is not None:
            raise SignInRefused("replayed", "this sign-in was finished already: an answer works once")
        if started_with != provider.id:
            raise SignInRefused("wrong-provider", f"this sign-in started with provider {started_with}, and the answer "
                                f"came to the address of {provider.name}")
        if not same_browser(cookies, state_cookie("sso", state, self.secure), state):
            raise SignInRefused("not-this-browser", "the answer came without the cookie its sign-in set in this "
                                "browser")
        metadata = self.metadata(provider)
        if ("iss" in query or metadata.get("authorization_response_iss_parameter_supported")) \
                and query.get("iss") != provider.issuer:
            raise SignInRefused("wrong-issuer", f"the answer's iss is not {provider.name}'s issuer",
                                detail=f"{str(query.get('iss'))[:200]!r}, not {provider.issuer!r}")
        if not self.tables.use_login(digest(state), now):
            raise SignInRefused("replayed", "this sign-in was finished already: an answer works once")
        tokens = self._exchange(provider, metadata, str(query["code"]), verifier)
        try:
            claims = verify(str(tokens.get("id_token") or ""), self.key_sets, metadata["jwks_uri"],
                            issuer=provider.issuer, client_id=provider.client_id, nonce=nonce, now=now,
                            access_token=str(tokens.get("access_token") or "") or None)
        except TokenRefused as refused:
            raise SignInRefused(refused.cause, str(refused), detail=refused.detail) from None
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise SignInRefused("no-subject", "the token names nobody (no sub claim)")
        return Finished(provider, claims, intent)

    def _exchange(self, provider: Provider, metadata: dict, code: str, verifier: str) -> dict:
        """The code exchanged for the tokens (OAuth 2's authorization code with PKCE; the client authenticates
        with HTTP Basic, its id and secret form-encoded first as RFC 6749 section 2.3.1 asks)."""
        secret = base64.b64encode(f"{quote(provider.client_id, safe='')}:{quote(provider.client_secret, safe='')}"
                                  .encode()).decode("ascii")
        try:
            answer = self.remote.json("POST", metadata["token_endpoint"], what=f"the token endpoint of {provider.name}",
                                      headers={"authorization": f"Basic {secret}"}, ok=(200,), form={
                                          "grant_type": "authorization_code", "code": code,
                                          "redirect_uri": self.callback(provider), "code_verifier": verifier}).body
        except RemoteError as error:
            raise SignInRefused("token-refused", f"the token endpoint of {provider.name} did not give a token",
                                detail=str(error)) from None
        if not isinstance(answer, dict):
            raise SignInRefused("token-refused", f"the token endpoint of {provider.name} did not give a token",
                                detail="its answer is not a JSON object")
        return answer

    # ---------------------------------------------------------------- who it is here

    def accounts_of(self, finished: Finished) -> list[Account]:
        """The accounts linked to the person (one per class they are in). A learner among them whose class's
        roster lists their verified e-mail, untaken, takes that seat first (its section; let in)."""
        email = verified_email(finished.claims)
        if email:
            self.tables.take_seats(finished.provider.issuer, finished.claims["sub"], email)
        linked = [self.accounts.account(account_id)
                  for account_id in self.tables.linked_accounts(finished.provider.issuer, finished.claims["sub"])]
        found = [account for account in linked if account is not None]
        if found and not any(account.approved for account in found):
            raise SignInRefused("waiting", "your teacher has not let you in yet: they see that you joined")
        return [account for account in found if account.approved]

    def join(self, finished: Finished, invite: str, name: Callable[[list[str]], str]) -> Account:
        """The person's learner account in the invite's class (made with their claims' name on the first join)."""
        try:
            class_id, class_name = self.accounts.invited_class(invite)
        except ClassError as error:
            raise SignInRefused("invite-not-valid", str(error)) from None
        try:
            account_id, made = self.tables.join(finished.provider.issuer, finished.claims["sub"], class_id, name,
                                                self.store.now().isoformat(), verified_email(finished.claims))
        except SeatsTaken as full:
            raise SignInRefused("class-full", f"{class_name!r} is full: all {full.args[0]} seats are taken") from None
        except ClassClosed:  # closed between the invite's check and the write
            raise SignInRefused("invite-not-valid", closed_to_newcomers(class_name)) from None
        if made:
            log.info("account %d joined class %d through %s", account_id, class_id, finished.provider.name)
        account = self.accounts.written(account_id)
        if not account.approved:  # the class asks for the teacher's approval: no session until then
            raise SignInRefused("waiting", f"you joined {class_name!r} as {account.name}; your teacher lets each "
                                "learner in, and has not let you in yet")
        return account

    def link(self, finished: Finished, account: Account) -> None:
        if not self.tables.link(finished.provider.issuer, finished.claims["sub"], account.id, account.class_id):
            raise SignInRefused("link-refused", f"the account you signed in with at {finished.provider.name} is linked "
                                "to another account (in this class), or yours to another person")

    def passwords_allowed(self, class_id: int) -> bool:
        return self.tables.passwords_allowed(class_id)

    def locked_out(self, class_id: int) -> list[dict[str, Any]]:
        """Who could not sign in if passwords went off: everyone of the class with no linked sign-in account
        (a provider's or an LMS's), teachers first: [{"id", "name", "role"}]."""
        return [{"id": int(person.id), "name": person.name, "role": person.role}
                for person in self.tables.unlinked_people(class_id)]

    def set_passwords(self, class_id: int, allowed: bool, *, asked_by: Account | None = None, lock_out: bool = False) -> None:
        """Passwords on or off in a class (asked_by: the teacher who asks on the page; None: the administrator's
        `chainrule sso passwords`). The one rule of turning them off: never while a teacher of the class has no
        linked sign-in account (they could not sign in: refused, naming them), and while learners have none only
        with lock_out, once the caller has said who they are (else LockOut, naming them and their number)."""
        if not allowed:
            people = self.locked_out(class_id)
            teachers = [person for person in people if person["role"] == TEACHER]
            if asked_by is not None and any(person["id"] == asked_by.id for person in teachers):
                raise ClassError("link your own account to a sign-in provider first (your account page): with passwords "
                                 "off, you sign in through it too", kind="conflict")
            if teachers:
                raise ClassError(f"passwords stay on: {count(teachers, 'teacher')} of the class with no linked sign-in "
                                 f"account could not sign in without a password ({names(teachers)}); each teacher "
                                 "links their account on their account page first", kind="conflict")
            if people and not lock_out:
                raise LockOut(people)
        self.tables.set_passwords(class_id, allowed)


NAMES_SHOWN = 30  # names a lock-out's sentence lists (the page's list has them all)


def count(people: list[dict[str, Any]], noun: str = "person") -> str:
    """'1 person', '2 people', '2 teachers'."""
    return f"{len(people)} {noun if len(people) == 1 else 'people' if noun == 'person' else noun + 's'}"


def names(people: list[dict[str, Any]]) -> str:
    """'Ada (learner), Cyd (learner)': at most NAMES_SHOWN names, then how many more."""
    shown = ", ".join(f"{person['name']} ({person['role']})" for person in people[:NAMES_SHOWN])
    return shown + (f" and {len(people) - NAMES_SHOWN} more" if len(people) > NAMES_SHOWN else "")


class LockOut(ClassError):
    """Turning passwords off would lock out learners with no linked sign-in account: ``people`` says who."""

    def __init__(self, people: list[dict[str, Any]]) -> None:
        super().__init__(f"turning passwords off would lock out {count(people)} with no linked sign-in account "
                         f"({names(people)}): they could not sign in until passwords are on again", kind="conflict")
        self.people = people
