"""What an LTI launch (classes/lti.py) and a sign-in through a provider (classes/sso.py) share: a login in
progress bound to its browser, a refusal that names its cause, and a person who arrives with an identity made
elsewhere (an issuer and a subject), whose display name comes from their claims.

    state = new_state(); cookie = state_cookie("lti", state, secure)     # the cookie binds the state to the browser
    same_browser(cookies, cookie, state)                                  # the browser that comes back is that one
    display_name(claims)  /  free_display_name("Ada Lovelace", names)    # "Ada Lovelace", else "Ada Lovelace (2)"
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any, Callable, Mapping

from chainrule.classes.accounts import ClassError, clean_name
from chainrule.classes.names import look_alike_keys
from chainrule.errors import InputError

LOGIN_LIFETIME = 600  # seconds from the start of a login to its end


class Refused(Exception):
    """A login refused: ``cause`` (a key of the module's table of causes), the sentence of what happened (str),
    ``status`` and ``advice`` (what the person can do) from that table, and ``detail``: what came from outside
    (an LMS's or a provider's error text, a value it sent, an address such as its key set's URL). The refusal
    page shows the sentence and the advice, never the detail, which goes to the server's log only (issue 41,
    item 12): the sentence is this server's own words, with no value from outside in it."""

    CAUSES: dict[str, tuple[int, str]] = {}

    def __init__(self, cause: str, message: str, relaunch: dict | None = None, *, detail: str = "") -> None:
        super().__init__(message)
        self.cause = cause
        self.status, self.advice = self.CAUSES[cause]
        self.relaunch = relaunch
        self.detail = detail

    def logged(self) -> str:
        """The line the server's log keeps: the sentence and the detail."""
        return f"{self}" + (f" [{self.detail}]" if self.detail else "")


def new_state() -> str:
    return secrets.token_urlsafe(32)


def digest(state: str) -> str:
    """What the database keeps of a state (never the state itself)."""
    return hashlib.sha256(state.encode("utf-8", "replace")).hexdigest()


def state_cookie(kind: str, state: str, secure: bool) -> str:
    """The name of the cookie that binds one login's state to the browser (one per login: two may run at once).
    Behind TLS its name has the __Host- prefix: no other host or port can plant it."""
    return ("__Host-" if secure else "") + f"chainrule_{kind}_" + digest(state)[:16]


def same_browser(cookies: Mapping[str, list[str]], name: str, state: str) -> bool:
    return any(hmac.compare_digest(value.encode("utf-8", "replace"), state.encode()) for value in cookies.get(name, []))


def clean(value: Any, fallback: str) -> str:
    """A name fit for a class or an account (classes.accounts.clean_name), cut to length; else the fallback."""
    text = "".join(char for char in str(value or "") if char.isprintable())[:60].strip()
    try:
        return clean_name(text, "name")
    except (ClassError, InputError):
        return fallback


def display_name(claims: Mapping[str, Any]) -> str:
    """The name the class sees: the claims' name, else given and family names, else a username, else a
    name made from the subject (never the e-mail address)."""
    given = " ".join(str(claims.get(key) or "") for key in ("given_name", "family_name")).strip()
    fallback = "Learner " + hashlib.sha256(str(claims.get("sub")).encode()).hexdigest()[:6]
    return clean(claims.get("name") or given or claims.get("preferred_username"), fallback)


def free_name(name: str, taken: Callable[[str], bool], label: Any = None) -> str:
    """name, else "name (label)", else "name (2)", "name (3)", ...: the first not in use."""
    candidates = [name] + ([f"{name[:40]} ({clean(label, '')[:15]})"] if clean(label, "") else [])
    candidates += [f"{name[:52]} ({number})" for number in range(2, 1000)]
    return next(candidate for candidate in candidates if not taken(candidate))


def free_display_name(name: str, names: list[str]) -> str:
    """A display name for a newcomer to a class holding ``names``: none that looks like a classmate's (the rule
    of classes/names.py, which joining with a password keeps too)."""
    keys = [look_alike_keys(other) for other in names]
    return free_name(name, lambda candidate: any(not look_alike_keys(candidate).isdisjoint(other) for other in keys))
