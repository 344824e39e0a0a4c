"""Class mode's door: who is signed in, and whether a state-changing request carries its CSRF token.

ClassGate is the gate layer of security.py's stack in class mode (where personal mode has TokenGate). It
reads the signed session cookie (classes/sessions.py), looks the account up (its session epoch must still
be current) and puts what it found in the request's state, the one place the rest of the app reads it:

    request.state.account          the signed-in Account, or None      (signed_in(request) or 401)
    request.state.session_cookie   its cookie value, or None
    request.state.csrf_cookies     every CSRF cookie value sent
    request.state.device           (account id, nonce) of a valid device cookie, or None

Cookies are not tied to ports, so a page on another port of the host can plant a second session cookie
(the attacker's own, validly signed, at a longer path so that it is sent first). Several different
session cookies are therefore nobody's: the request is a stranger's, and the answer expires the cookie at
every path above the request's, so that the next sign-in starts clean. A page without a session
redirects to /sign-in; an API call gets 401.
"""

from __future__ import annotations

from typing import Any, Callable
from urllib.parse import quote

import anyio
from fastapi import HTTPException, Request

from chainrule.classes.accounts import Account, Accounts
from chainrule.classes.people import refused_change
from chainrule.classes.sessions import CSRF_HEADER, cookie_header, cookie_names, csrf_ok, read_device, read_session
from chainrule.progress.errors import StoreError
from chainrule.web.cookies import request_cookies
from chainrule.web.errors import CLASS_DATABASE_AWAY, log, refusal
from chainrule.progress.connection import redact_secrets
from chainrule.web.store_access import StoreAccess, StoreUnavailable

PUBLIC_PREFIXES = ("/static/", "/sign-in", "/join/", "/set-password/", "/lti/", "/sso/")
# HTML forms: their CSRF token comes in the form body, which the route checks (routes_class.form_csrf); the LTI
# login and launch, and a provider's sign-in callback, carry a state, its cookie and a signed id_token instead
# (web/routes_lti.py, web/routes_sso.py).
FORM_PREFIXES = ("/sign-in", "/join/", "/set-password/", "/sign-out", "/lti/", "/sso/")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _paths_above(path: str) -> list[str]:
    """"/api/progress/x" -> ["/", "/api", "/api/", "/api/progress", "/api/progress/", "/api/progress/x"]:
    every Path a cookie sent with this request can have been set with."""
    parts = [part for part in path.split("/") if part][:8]
    paths = ["/"]
    for index in range(len(parts)):
        prefix = "/" + "/".join(parts[: index + 1])
        paths += [prefix, prefix + "/"]
    return paths


class ClassGate:
    """ASGI middleware: the signed-in account (request.state) and CSRF on every change."""

    def __init__(self, app: Any, *, accounts: Accounts, secret: str, clock: Callable[[], Any], secure: bool) -> None:
        self.app = app
        self.accounts = accounts
        self.secret = secret
        self.clock = clock
        self.names = cookie_names(secure)
        self.secure = secure

    def signed_in(self, cookie: str | None) -> Account | None:
        session = read_session(self.secret, cookie, self.clock().timestamp())
        if session is None:
            return None
        account = self.accounts.account(session.account_id)
        if account is None or account.session_epoch != session.epoch or not account.approved:
            return None  # signed out, or removed, or not let in by the teacher (yet)
        return account

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        path: str = scope.get("path", "/")
        method = scope.get("method", "GET").upper()
        if scope["type"] != "http" or path.startswith("/static/") and method in ("GET", "HEAD"):
            await self.app(scope, receive, send)  # the page's own scripts and styles: nothing to look up
            return
        is_api = path == "/api" or path.startswith("/api/")
        cookies = request_cookies(scope)
        sessions = sorted(set(cookies.get(self.names.session, [])))
        planted = len(sessions) > 1  # copies that disagree: one of them was planted from another port
        session_cookie = sessions[0] if len(sessions) == 1 else None
        try:
            account = await anyio.to_thread.run_sync(self.signed_in, session_cookie) if session_cookie else None
        except StoreError as error:  # the class database is away: say so (the page tries again), never a 500
            log.error("class database failure on %s %s: %s", method, path, redact_secrets(str(error)))
            await refusal(503, CLASS_DATABASE_AWAY, as_json=is_api, headers={"retry-after": "5"})(scope, receive, send)
            return
        devices = {read_device(self.secret, value) for value in cookies.get(self.names.device, [])} - {None}
        state = scope.setdefault("state", {})
        state.update(account=account, session_cookie=session_cookie if account else None,
                     csrf_cookies=cookies.get(self.names.csrf, []),
                     device=next(iter(devices)) if len(devices) == 1 else None)
        if planted:
            await self._start_clean(scope, receive, send, is_api)
            return
        if method in STATE_CHANGING and not path.startswith(FORM_PREFIXES):
            sent = next((value.decode("latin-1") for key, value in scope.get("headers", [])
                         if key.lower() == CSRF_HEADER.encode()), None)
            if not csrf_ok(self.secret, state["csrf_cookies"], sent, state["session_cookie"]):
                await refusal(403, "missing or wrong CSRF token: reload the page and try again (a change is "
                              "accepted only from this server's own pages).", as_json=is_api)(scope, receive, send)
                return
        if account is None and not path.startswith(PUBLIC_PREFIXES):
            if is_api:
                await refusal(401, "not signed in: sign in at /sign-in first.", as_json=True)(scope, receive, send)
            else:
                await _redirect(send, "/sign-in?next=" + quote(path, safe="/"))
            return
        closed = refused_change(account, path) if method in STATE_CHANGING and not path.startswith(FORM_PREFIXES) \
            else None
        if closed is not None:  # a closed class's learners, an archived class's everyone (classes/people.py)
            await refusal(403, closed, as_json=is_api)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _start_clean(self, scope: dict, receive: Any, send: Any, is_api: bool) -> None:
        expire = [("set-cookie", cookie_header(self.names.session, "", secure=self.secure, max_age=0, path=path))
                  for path in _paths_above(scope.get("path", "/"))]
        response = refusal(401, "two different sign-ins arrived with this request (a page on another port of "
                           "this host may have set one): both are dropped. Sign in again at /sign-in.",
                           as_json=is_api)
        response.raw_headers.extend((name.encode(), value.encode("latin-1")) for name, value in expire)
        await response(scope, receive, send)


async def _redirect(send: Any, location: str) -> None:
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode("latin-1", "replace")), (b"content-length", b"0")]})
    await send({"type": "http.response.body", "body": b""})


def signed_in(request: Request) -> Account:
    """The account this request was let in as (the gate put it in the request's state), or 401."""
    account = request.scope.get("state", {}).get("account")
    if account is None:
        raise HTTPException(status_code=401, detail="not signed in: sign in at /sign-in first.")
    return account


class ClassServices(StoreAccess):
    """The lesson routes' services in class mode: each request gets the signed-in account's own store,
    and graded runs go through the class's runs (classes/grading.py)."""

    def __init__(self, store: Any, runs: Any) -> None:
        super().__init__(None, store=store, runs=runs)
        self.class_store = store

    def store(self, request: Any = None) -> Any:
        account = None if request is None else request.scope.get("state", {}).get("account")
        if account is None:  # the gate admits no such request; refuse rather than show learner 0's data
            raise StoreUnavailable("not signed in")
        return self.class_store.for_learner(account.id)
