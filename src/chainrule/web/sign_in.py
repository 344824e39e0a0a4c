"""Signing an account in from another system's word (an LTI launch, a sign-in provider): the session and CSRF
cookies on an answer, as a password sign-in sets them (routes_class), or, in an LMS's frame, marked
``SameSite=None; Secure; Partitioned``: a frame on another site gets only such cookies, and Partitioned keeps
them in a jar of that LMS site's own (CHIPS), which browsers that block third-party cookies still allow.

    response = RedirectResponse("/lessons/backprop", status_code=303)
    csrf = add_session(request, response, account, framed=True)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from fastapi import Request

from chainrule.classes.sessions import SESSION_LIFETIME, cookie_header, csrf_token, session_cookie
from chainrule.web.app_state import app_state


def cookie(name: str, value: str, *, framed: bool, secure: bool, http_only: bool = True, same_site: str = "Lax",
           max_age: int | None = SESSION_LIFETIME, path: str = "/") -> str:
    """A Set-Cookie value; in an LMS's frame: SameSite=None, Secure and Partitioned."""
    if not framed:
        text = cookie_header(name, value, secure=secure, http_only=http_only, same_site=same_site, max_age=max_age)
    else:
        text = cookie_header(name, value, secure=True, http_only=http_only, same_site="None", max_age=max_age) \
            + "; Partitioned"
    return text.replace("Path=/", f"Path={path}", 1)


def new_session(request: Request, account: Any) -> tuple[str, str]:
    """(session cookie value, its CSRF token) for the account, signed with the class's secret."""
    state = app_state(request)
    value = session_cookie(state.secret, account.id, account.session_epoch, int(state.clock().timestamp()))
    return value, csrf_token(state.secret, value)


def add_session(request: Request, response: Any, account: Any, *, framed: bool = False,
                made: tuple[str, str] | None = None) -> str:
    """Put the account's session (made now, unless ``made`` gives it) on the response; returns its CSRF token."""
    secure, names = app_state(request).secure, app_state(request).cookie_names
    session, csrf = made or new_session(request, account)
    response.headers.append("set-cookie", cookie(names.session, session, framed=framed, secure=secure))
    response.headers.append("set-cookie", cookie(names.csrf, csrf, framed=framed, secure=secure, http_only=False,
                                                 same_site="Strict"))
    return csrf


def sealed(secret: str, purpose: str, data: dict) -> str:
    """``data`` as a form field the browser carries back unchanged: readable, but signed for one purpose."""
    body = base64.urlsafe_b64encode(json.dumps(data, sort_keys=True).encode()).decode()
    return body + "." + hmac.new(secret.encode(), f"{purpose}:{body}".encode(), hashlib.sha256).hexdigest()


def unsealed(secret: str, purpose: str, value: str) -> dict | None:
    """What sealed() put in ``value``, or None if it was changed or sealed for another purpose."""
    body, _, signature = (value or "").rpartition(".")
    expected = hmac.new(secret.encode(), f"{purpose}:{body}".encode(), hashlib.sha256).hexdigest()
    if not body or not hmac.compare_digest(signature.encode("utf-8", "replace"), expected.encode()):
        return None
    try:
        found = json.loads(base64.urlsafe_b64decode(body))
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
