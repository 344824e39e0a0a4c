"""The one reader of a request's cookies (both modes, every check).

    request_cookies(scope)   -> {"chainrule_session": ["4.0.1767000000.ab12...", "..."], ...}

Every value of every cookie, in the order the browser sent them. Cookies are not tied to ports: a page on
another port of the same host can plant a cookie with our cookie's name (at a longer path, so that the
browser sends it first). Whoever reads a cookie here therefore sees every copy and decides what several
copies mean (the personal token: any copy that holds the token; class mode's session: none, when the
copies disagree). tests/test_web_request_state.py fails if a second parser appears.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["request_cookies", "parse_cookie_header"]


def parse_cookie_header(header: str) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            values.setdefault(name, []).append(value.strip().strip('"'))
    return values


def request_cookies(scope: Mapping[str, Any]) -> dict[str, list[str]]:
    """Every cookie of the request (HTTP/2 may split them over several Cookie headers)."""
    headers = [value.decode("latin-1") for key, value in scope.get("headers", []) if key.lower() == b"cookie"]
    return parse_cookie_header("; ".join(headers))
