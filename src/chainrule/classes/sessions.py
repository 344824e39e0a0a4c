"""Signed session cookies and CSRF tokens for class mode.

A session cookie is ``<account id>.<session epoch>.<issued, epoch seconds>.<signature>``, signed with
HMAC-SHA256 under the class database's secret: nothing to look up per request but the account (for its
current epoch: a password reset raises it, which ends every older session). It is HttpOnly, SameSite=Lax
(a link from elsewhere may open a page; only same-site requests carry it on a POST) and Secure behind TLS.

CSRF: the signed double-submit cookie pattern. The ``chainrule_csrf`` cookie (readable by the page's own
scripts, SameSite=Strict) holds ``<nonce>.<HMAC(secret, nonce, session)>``; every state-changing request
must send the same value in the X-CSRF-Token header or a ``csrf`` form field, and the HMAC must match the
session it comes with (or "none" before signing in). Another site can make the browser send the cookie but
can neither read it nor forge a value that matches.

Behind TLS every cookie's name carries the ``__Host-`` prefix (``__Host-chainrule_session``): browsers
accept such a cookie only with Secure, Path=/ and no Domain, and only from a secure page, so a plain-HTTP
page on another port of the host, or a sibling host name, can neither plant nor overwrite one.
(cookie_names(secure) gives the three names.) Plain HTTP, for a classroom LAN, keeps the bare names.

A device cookie (``chainrule_device``: ``<account id>.<nonce>.<signature>``, a year) marks a browser the
account has signed in on: sign-in failures from it count against that browser only, so a stranger's
failures on a name never keep its owner out of a browser they used before (classes/accounts.py).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

SESSION_COOKIE = "chainrule_session"
CSRF_COOKIE = "chainrule_csrf"
DEVICE_COOKIE = "chainrule_device"
SECURE_PREFIX = "__Host-"
CSRF_HEADER = "x-csrf-token"
SESSION_LIFETIME = 14 * 24 * 3600  # seconds; a school term's fortnight, then sign in again
DEVICE_LIFETIME = 365 * 24 * 3600  # seconds: a browser stays known for a year


@dataclass(frozen=True)
class CookieNames:
    session: str
    csrf: str
    device: str


def cookie_names(secure: bool) -> CookieNames:
    """The cookies' names: with the ``__Host-`` prefix behind TLS, bare on plain HTTP."""
    prefix = SECURE_PREFIX if secure else ""
    return CookieNames(prefix + SESSION_COOKIE, prefix + CSRF_COOKIE, prefix + DEVICE_COOKIE)


@dataclass(frozen=True)
class Session:
    account_id: int
    epoch: int
    issued: int
    cookie: str


def _sign(secret: str, message: str) -> str:
    return hmac.new(secret.encode("ascii"), message.encode("utf-8"), hashlib.sha256).hexdigest()


def session_cookie(secret: str, account_id: int, epoch: int, issued: int) -> str:
    body = f"{int(account_id)}.{int(epoch)}.{int(issued)}"
    return f"{body}.{_sign(secret, 'session:' + body)}"


def read_session(secret: str, value: str | None, now: float) -> Session | None:
    """The session a cookie value holds, or None if it is malformed, forged or too old."""
    if not value or len(value) > 200:
        return None
    parts = value.split(".")
    if len(parts) != 4 or not all(part.isdigit() for part in parts[:3]):
        return None
    body = ".".join(parts[:3])
    # As bytes: compare_digest refuses str with non-ASCII characters, and a cookie can hold any.
    if not hmac.compare_digest(parts[3].encode("utf-8", "replace"), _sign(secret, "session:" + body).encode()):
        return None
    account_id, epoch, issued = (int(part) for part in parts[:3])
    if not issued <= now + 60 or now - issued > SESSION_LIFETIME:
        return None
    return Session(account_id, epoch, issued, value)


def device_cookie(secret: str, account_id: int) -> str:
    body = f"{int(account_id)}.{secrets.token_urlsafe(16)}"
    return f"{body}.{_sign(secret, 'device:' + body)}"


def read_device(secret: str, value: str | None) -> tuple[int, str] | None:
    """(account id, nonce) of a device cookie, or None if it is malformed or forged."""
    if not value or len(value) > 200:
        return None
    parts = value.split(".")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1]:
        return None
    body = ".".join(parts[:2])
    if not hmac.compare_digest(parts[2].encode("utf-8", "replace"), _sign(secret, "device:" + body).encode()):
        return None
    return int(parts[0]), parts[1]


def csrf_token(secret: str, session_cookie_value: str | None) -> str:
    nonce = secrets.token_urlsafe(16)
    return f"{nonce}.{_csrf_signature(secret, nonce, session_cookie_value)}"


def _csrf_signature(secret: str, nonce: str, session_cookie_value: str | None) -> str:
    return _sign(secret, "csrf:" + nonce + ":" + (session_cookie_value or "none"))


def csrf_ok(secret: str, cookies: list[str], sent: str | None, session_cookie_value: str | None) -> bool:
    """The sent token equals one of the CSRF cookies sent (a page on another port of the host may have
    planted more) and was made for this session."""
    if not sent:
        return False
    return any(_csrf_matches(secret, cookie, sent, session_cookie_value) for cookie in cookies)


def _csrf_matches(secret: str, cookie: str, sent: str, session_cookie_value: str | None) -> bool:
    if not cookie or not hmac.compare_digest(cookie.encode(), sent.encode("utf-8", "replace")):
        return False
    nonce, _, signature = cookie.partition(".")
    return bool(nonce) and hmac.compare_digest(signature.encode("utf-8", "replace"),
                                               _csrf_signature(secret, nonce, session_cookie_value).encode())


def cookie_header(name: str, value: str, *, secure: bool, http_only: bool = True, same_site: str = "Lax",
                  max_age: int | None = SESSION_LIFETIME, path: str = "/") -> str:
    """A Set-Cookie value (Path=/ and no Domain, as a ``__Host-`` name requires; another ``path`` only to
    expire a copy planted there)."""
    parts = [f"{name}={value}", f"Path={path}", f"SameSite={same_site}"]
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    if http_only:
        parts.append("HttpOnly")
    if secure:
        parts.append("Secure")
    return "; ".join(parts)
