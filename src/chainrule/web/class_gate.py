"""Class mode's door: who is signed in, and whether a state-changing request carries its CSRF token.

ClassGate is the gate layer of security.py's stack in class mode (where personal mode has TokenGate). It
reads the signed session cookie (classes/sessions.py), looks the account up (its session epoch must still
be current) and puts what it found in the request's state, the one place the rest of the app reads it:

    request.state.account          the signed-in Account, or None      (web/roles.py reads it)
    request.state.session_cookie   its cookie value, or None
    request.state.csrf_cookies     every CSRF cookie value sent
    request.state.device           (account id, nonce) of a valid device cookie, or None

Cookies are not tied to ports, so a page on another port of the host can plant a second session cookie
(the attacker's own, validly signed, at a longer path so that it is sent first). Several different
session cookies are therefore nobody's: the request is a stranger's, and the answer expires the cookie at
every path above the request's, so that the next sign-in starts clean. Whether a route needs a session
(and which role) the route declares (web/roles.py): the gate refuses no one for being a stranger.
"""

from __future__ import annotations

from typing import Any, Callable, cast

import anyio

from chainrule.classes.accounts import Account, Accounts
from chainrule.classes.people import refused_change
from chainrule.classes.sessions import CSRF_HEADER, cookie_header, cookie_names, csrf_ok, read_device, read_session
from chainrule.progress.connection import redact_secrets
from chainrule.progress.store_errors import StoreError
from chainrule.web.app_state import app_state
from chainrule.web.cookies import request_cookies
from chainrule.web.error_answers import CLASS_DATABASE_AWAY, is_api, log, refusal
from chainrule.web.store_access import StoreAccess, StoreUnavailable

# Why a middleware and not each route's declaration (web/roles.py declares who may call each route): these checks
# come before routing, for every request, to a route or not (one added later included): the session cookie read
# once (planted copies from another port drop the sign-in), the class database being away, the CSRF token of
# every change and a closed or archived class's refusal of changes (classes/people.refused_change). The gate
# decides by path only which changes carry their CSRF token in the form body instead of a header, which the
# route checks (routes_class's forms), or bring another proof: the LTI login and launch, and a provider's
# sign-in callback, carry a state, its cookie and a signed id_token (web/routes_lti.py, web/routes_sso.py).
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
        try:
            refused = await self._admit(scope, path, method)
        except StoreError as error:  # the class database is away: say so (the page tries again), never a 500
            log.error("class database failure on %s %s: %s", method, path, redact_secrets(str(error)))
            refused = refusal(503, CLASS_DATABASE_AWAY, as_json=is_api(path), headers={"retry-after": "5"})
        await (refused or self.app)(scope, receive, send)

    async def _admit(self, scope: dict, path: str, method: str) -> Any:
        """Who is signed in, into the request's state; the answer that refuses the request, or None."""
        cookies = request_cookies(scope)
        sessions = sorted(set(cookies.get(self.names.session, [])))
        session_cookie = sessions[0] if len(sessions) == 1 else None
        account = await anyio.to_thread.run_sync(self.signed_in, session_cookie) if session_cookie else None
        devices = {read_device(self.secret, value) for value in cookies.get(self.names.device, [])} - {None}
        state = scope.setdefault("state", {})
        state.update(account=account, session_cookie=session_cookie if account else None,
                     csrf_cookies=cookies.get(self.names.csrf, []),
                     device=next(iter(devices)) if len(devices) == 1 else None)
        if len(sessions) > 1:  # copies that disagree: one of them was planted from another port
            return self._start_clean(path)
        if method not in STATE_CHANGING or path.startswith(FORM_PREFIXES):
            return None
        sent = next((value.decode("latin-1") for key, value in scope.get("headers", [])
                     if key.lower() == CSRF_HEADER.encode()), None)
        if not csrf_ok(self.secret, state["csrf_cookies"], sent, state["session_cookie"]):
            return refusal(403, "missing or wrong CSRF token: reload the page and try again (a change is "
                           "accepted only from this server's own pages).", as_json=is_api(path))
        closed = refused_change(account, path)  # a closed class's learners, an archived class's everyone
        return None if closed is None else refusal(403, closed, as_json=is_api(path))

    def _start_clean(self, path: str) -> Any:
        expire = [("set-cookie", cookie_header(self.names.session, "", secure=self.secure, max_age=0, path=above))
                  for above in _paths_above(path)]
        response = refusal(401, "two different sign-ins arrived with this request (a page on another port of "
                           "this host may have set one): both are dropped. Sign in again at /sign-in.",
                           as_json=is_api(path))
        response.raw_headers.extend((name.encode(), value.encode("latin-1")) for name, value in expire)
        return response


class ClassServices(StoreAccess):
    """The lesson routes' services in class mode: each request gets the signed-in account's own store,
    and graded runs go through the class's runs (classes/graded_runs.py)."""

    def __init__(self, store: Any, runs: Any) -> None:
        super().__init__(None, store=store, runs=runs)
        self.class_store = store

    def store(self, request: Any = None) -> Any:
        account = None if request is None else request.scope.get("state", {}).get("account")
        if account is None:  # the gate admits no such request; refuse rather than show learner 0's data
            raise StoreUnavailable("not signed in")
        return self.class_store.for_learner(account.id)


def class_store(holder: Any) -> Any:
    """The class's store, from a request or the app of `chainrule serve` (whose services are ClassServices)."""
    return cast(ClassServices, app_state(holder).services).class_store
