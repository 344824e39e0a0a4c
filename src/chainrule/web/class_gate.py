"""Class mode's door: who is signed in, and whether a state-changing request carries its CSRF token.

SecurityMiddleware (security.py) checks Host, Origin and body size in both modes; in class mode it asks
this gate instead of checking the personal token. The gate reads the signed session cookie
(classes/sessions.py), looks the account up (its session epoch must still be current), and puts it in
``scope["state"]["account"]`` and in CURRENT_ACCOUNT, which ClassServices reads to hand each request the
signed-in learner's own store. A page without a session redirects to /sign-in; an API call gets 401.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any, Callable
from urllib.parse import quote

import anyio
from fastapi import HTTPException, Request

from chainrule.classes.accounts import Account, Accounts
from chainrule.classes.sessions import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, csrf_ok, read_session
from chainrule.progress.errors import StoreError
from chainrule.web.store_access import StoreAccess, StoreUnavailable

CURRENT_ACCOUNT: ContextVar[Account | None] = ContextVar("chainrule_account", default=None)

PUBLIC_PREFIXES = ("/static/", "/sign-in", "/join/", "/set-password/")
# HTML forms: their CSRF token comes in the form body, which the route checks (routes_class.form_csrf).
FORM_PREFIXES = ("/sign-in", "/join/", "/set-password/", "/sign-out")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def cookies_of(header: str) -> dict[str, str]:
    """The first value of each cookie (a cookie planted by another port of the host comes later)."""
    values: dict[str, str] = {}
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key not in values:
            values[key] = value.strip().strip('"')
    return values


class ClassGate:
    def __init__(self, accounts: Accounts, secret: str, *, clock: Callable[[], Any]) -> None:
        self.accounts = accounts
        self.secret = secret
        self.clock = clock

    def signed_in(self, cookie: str | None) -> Account | None:
        session = read_session(self.secret, cookie, self.clock().timestamp())
        if session is None:
            return None
        account = self.accounts.account(session.account_id)
        if account is None or account.session_epoch != session.epoch or not account.approved:
            return None  # signed out, or removed, or not let in by the teacher (yet)
        return account

    async def admit(self, scope: dict, headers: dict[str, str], method: str, is_api: bool, send: Any) -> bool:
        path: str = scope.get("path", "/")
        if path.startswith("/static/") and method in ("GET", "HEAD"):
            return True  # the page's own scripts and styles: nothing to look up
        cookies = cookies_of(headers.get("cookie", ""))
        session_cookie = cookies.get(SESSION_COOKIE)
        try:
            account = await anyio.to_thread.run_sync(self.signed_in, session_cookie) if session_cookie else None
        except StoreError as error:  # the class database is away: say so (the page tries again), never a 500
            await _answer(send, 503, is_api, str(error))
            return False
        state = scope.setdefault("state", {})
        state.update(account=account, session_cookie=session_cookie if account else None,
                     csrf_cookie=cookies.get(CSRF_COOKIE))
        CURRENT_ACCOUNT.set(account)
        if method in STATE_CHANGING and not path.startswith(FORM_PREFIXES):
            if not csrf_ok(self.secret, cookies.get(CSRF_COOKIE), headers.get(CSRF_HEADER), state["session_cookie"]):
                await _answer(send, 403, is_api, "missing or wrong CSRF token: reload the page and try again "
                              "(a change is accepted only from this server's own pages).")
                return False
        if account is None and not path.startswith(PUBLIC_PREFIXES):
            if is_api:
                await _answer(send, 401, True, "not signed in: sign in at /sign-in first.")
            else:
                await _redirect(send, "/sign-in?next=" + quote(path, safe="/"))
            return False
        return True


async def _answer(send: Any, status: int, as_json: bool, message: str) -> None:
    if as_json:
        body, content_type = json.dumps({"detail": message}).encode(), b"application/json"
    else:
        import html

        body = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Refused · chainrule</title>'
                f'</head><body><main><h1>Refused</h1><p>{html.escape(message)}</p>'
                '<p><a href="/">Back to the path</a></p></main></body></html>').encode()
        content_type = b"text/html; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Any, location: str) -> None:
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode("latin-1", "replace")), (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


class ClassServices(StoreAccess):
    """The lesson routes' services in class mode: each request gets the signed-in account's own store,
    and graded runs go through the class's runs (classes/grading.py)."""

    def __init__(self, store: Any, runs: Any) -> None:
        super().__init__(None, store=store, runs=runs)
        self.class_store = store

    def store(self) -> Any:
        account = CURRENT_ACCOUNT.get()
        if account is None:  # the gate admits no such request; refuse rather than show learner 0's data
            raise StoreUnavailable("not signed in")
        return self.class_store.for_learner(account.id)


def signed_in(request: Request) -> Account:
    """The account this request was let in as (the gate put it in the scope), or 401."""
    account = request.scope.get("state", {}).get("account")
    if account is None:
        raise HTTPException(status_code=401, detail="not signed in: sign in at /sign-in first.")
    return account
