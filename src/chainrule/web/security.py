"""What keeps a web page on another site from making this local server run code.

The server executes learners' code (through the grader's sandbox), so it treats every request as
possibly coming from a hostile page in the same browser. A stack of small ASGI middlewares, one job
each (Starlette's shape; ``add_security_layers`` puts them in order), checks:

1. Host header: must name this machine's loopback (localhost, 127.0.0.1, [::1]) with our port, or a
   name the operator allowed. A foreign Host means DNS rebinding: a hostile name resolving to 127.0.0.1.
2. Origin: a state-changing request (POST/PUT/PATCH/DELETE) whose Origin header is present must come
   from this server's own origin; browsers always send Origin on cross-site POSTs.
3. Session token: every /api call carries the random token, in the HttpOnly SameSite=Strict cookie
   set when the page is opened with ?token=..., or in the X-Chainrule-Token header. HTML pages opened
   with a valid ?token= set the cookie and redirect to the same address without it (so the token does
   not stay in the address bar or history); without a valid token or cookie they show a short page
   saying to open the link printed in the terminal (401).
4. Body size: a request body over the limit gets 413 before any route sees it; a request for a
   static file (public, no token) may carry no body at all, so that nobody without the token can
   make the server wait for one (connections.py bounds the wait for every other body).

In class mode (`chainrule serve`) step 3 is a gate's instead (web/class_gate.py): a signed-in account and a
CSRF token on every change take the token's place.

Hosts and Origins are checked with their port: a page served on another port of the same host is
another origin, and may not send changes here (cookies ignore ports; the port in Origin does not).

Every response also gets headers that forbid framing and sniffing; HTML pages get a Content Security
Policy that only allows this server's own scripts, styles, fonts and connections. Everything but the
static files (every API answer, every page, every refusal) is sent with `Cache-Control: no-store`:
they carry the learner's progress or the session, and no cache or back button should keep a copy.
"""

from __future__ import annotations

import secrets
from typing import Any, Iterable
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chainrule.web.cookies import request_cookies
from chainrule.web.error_answers import refusal
from chainrule.web.forms import FormLimits

__all__ = [
    "COOKIE_NAME", "TOKEN_HEADER", "LOOPBACK_HOSTS", "DEFAULT_MAX_BODY", "add_security_layers", "AllowedHosts",
    "new_token", "split_host",
]

COOKIE_NAME = "chainrule_token"
TOKEN_HEADER = "x-chainrule-token"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
DEFAULT_MAX_BODY = 256 * 1024  # bytes; code is the biggest body, and 256 KB is far beyond any answer
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PUBLIC_PREFIXES = ("/static/",)  # the page's own scripts and styles: nothing secret, nothing executed
# Class mode's LTI login and launch are POSTed by the LMS's pages, across sites, by design: their proof is the
# state, its cookie and the LMS's signed id_token (classes/lti.py), not the Origin. (Personal mode has no such
# pages: its token gate refuses them.)
CROSS_SITE_POSTS = ("/lti/login", "/lti/launch")

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'self'"
)
COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
]



def new_token() -> str:
    """A fresh random session token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def split_host(value: str) -> tuple[str, int | None] | None:
    """"localhost:8000" -> ("localhost", 8000); "[::1]:80" -> ("[::1]", 80); None if malformed."""
    value = value.strip().lower()
    if not value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text = value.partition(":")
        if not sep:
            port_text = None
        if ":" in (port_text or ""):
            return None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or len(port_text) > 5:
        return None
    return name, int(port_text)


def _same(given: str | None, token: str) -> bool:
    if not given:
        return False
    return secrets.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


OPEN_THE_LINK = """<p>When you ran <code>chainrule lesson</code>, it printed an address that ends in
<code>?token=...</code>. Open that exact address: the token proves the page was opened by you, and
keeps other web sites from using this local server.</p>"""

App = ASGIApp
DEFAULT_PORTS = {"http": 80, "https": 443}


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _is_api(scope: Scope) -> bool:
    path = scope.get("path", "/")
    return path == "/api" or path.startswith("/api/")


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, detail: str, *, page_title: str = "Refused",
                  more_html: str = "", headers: dict[str, str] | None = None) -> None:
    await refusal(status, detail, as_json=_is_api(scope), title=page_title, more_html=more_html,
                  headers=headers)(scope, receive, send)


class AllowedHosts:
    """The (name, port) pairs this server answers to. port None: any port (in-process tests)."""

    def __init__(self, names: Iterable[str], port: int | None, *, public: tuple[str, int] | None = None) -> None:
        self.pairs = {(name.strip().lower(), port) for name in names if name.strip()}
        if public is not None:
            self.pairs.add((public[0].lower(), public[1]))

    def allows(self, name: str, port: int | None, default_ports: Iterable[int] = (80, 443)) -> bool:
        candidates = [port] if port is not None else list(default_ports)
        return any((name, None) in self.pairs or (name, given) in self.pairs for given in candidates)

    def host_allowed(self, value: str | None) -> bool:
        parsed = split_host(value or "")
        return parsed is not None and self.allows(*parsed)

    def origin_allowed(self, origin: str, schemes: Iterable[str]) -> bool:
        try:
            parts = urlsplit(origin)
            port = parts.port  # a malformed port raises ValueError
        except ValueError:
            return False
        if parts.scheme not in schemes or not parts.hostname or parts.path not in ("", "/") or "@" in parts.netloc:
            return False
        name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return self.allows(name, port, [DEFAULT_PORTS[parts.scheme]])

    def describe(self) -> str:
        return ", ".join(sorted(f"{name}:{port}" if port else name for name, port in self.pairs))


def _framers(scope: Scope) -> tuple[str, ...]:
    """The origins that may frame this answer: none, unless class mode's LTI (web/routes_lti.py) installed a
    policy on the app (an LMS class's pages may be framed by its LMS)."""
    policy = getattr(getattr(scope.get("app"), "state", None), "frame_ancestors", None)
    return tuple(policy(scope) or ()) if policy is not None else ()


class SecurityHeaders:
    """Headers on every response: no framing (but by an LMS class's own LMS), no sniffing, no referrer, a CSP
    on pages, and no-store on everything but the static files."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        no_store = not scope.get("path", "/").startswith(PUBLIC_PREFIXES)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if no_store:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                present = {key.lower() for key, _ in headers}
                framers = _framers(scope)
                headers += [(k, v) for k, v in COMMON_HEADERS if k not in present
                            and not (framers and k == b"x-frame-options")]
                content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if content_type.startswith(b"text/html") and b"content-security-policy" not in present:
                    policy = CONTENT_SECURITY_POLICY if not framers else CONTENT_SECURITY_POLICY.replace(
                        "frame-ancestors 'none'", "frame-ancestors 'self' " + " ".join(framers))
                    headers.append((b"content-security-policy", policy.encode()))
                message = dict(message, headers=headers)
            await send(message)

        await self.app(scope, receive, sending)


class HostCheck:
    """Only our own host names, with our port: a foreign Host is DNS rebinding. No websockets at all."""

    def __init__(self, app: App, *, hosts: AllowedHosts) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the app has none; refuse before anything else
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if not self.hosts.host_allowed(host):
            await _refuse(scope, receive, send, 403,
                          f"Host {host!r} is not allowed: this server answers only to {self.hosts.describe()} "
                          "(a foreign Host header is how DNS rebinding attacks reach local servers).")
            return
        await self.app(scope, receive, send)


class OriginCheck:
    """A change (POST, PUT, PATCH, DELETE) whose Origin is present must be this server's own, port
    included: browsers send Origin with every cross-origin change."""

    def __init__(self, app: App, *, hosts: AllowedHosts, schemes: Iterable[str]) -> None:
        self.app, self.hosts, self.schemes = app, hosts, frozenset(schemes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "GET").upper() if scope["type"] == "http" else ""
        origin = _header(scope, b"origin")
        if method in STATE_CHANGING and origin is not None and not self.hosts.origin_allowed(origin, self.schemes) \
                and scope.get("path") not in CROSS_SITE_POSTS:
            await _refuse(scope, receive, send, 403,
                          f"Origin {origin!r} is not this server: a {method} is accepted only from this "
                          "server's own pages (or from a client that sends no Origin).")
            return
        await self.app(scope, receive, send)


class StaticTakesNoBody:
    """A request for a static file (public, no token) may carry no body, so that nobody without the
    token can make the server wait for one (connections.py bounds the wait for every other body)."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "/").startswith(PUBLIC_PREFIXES):
            declared = _header(scope, b"content-length")
            if declared not in (None, "0") or _header(scope, b"transfer-encoding") is not None:
                # Closed after the answer: the body it declared is never read.
                await refusal(400, "a request for a static file takes no body.", as_json=True,
                              headers={"connection": "close"})(scope, receive, send)
                return
        await self.app(scope, receive, send)


class TokenGate:
    """Personal mode's door: the session token, in its cookie or in the X-Chainrule-Token header (the
    API), or in ?token= on a page, which sets the cookie and redirects to the address without it."""

    def __init__(self, app: App, *, token: str, cookie_value: str | None = None, port: int | None = None) -> None:
        if not token:
            raise ValueError("the session token must be a non-empty string")
        self.app, self.token = app, token
        # What the session cookie holds: by default the token; with a session secret kept in the data
        # folder (web/session.py), a value that outlives this start, so open tabs survive a restart.
        self.cookie_value = cookie_value or token
        # Cookies ignore ports: a second server on another port would overwrite `chainrule_token`. A
        # port-specific cookie as well keeps two servers from locking each other out.
        self.cookie_names = [COOKIE_NAME] + ([f"{COOKIE_NAME}_{port}"] if port else [])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "/")
        if scope["type"] != "http" or path.startswith(PUBLIC_PREFIXES):
            await self.app(scope, receive, send)
            return
        sent = request_cookies(scope)
        cookies = [value for name in self.cookie_names for value in sent.get(name, []) if value]
        cookie_ok = any(_same(value, self.cookie_value) for value in cookies)  # a planted copy may come first
        if _is_api(scope):
            header = _header(scope, TOKEN_HEADER.encode())
            if not header and not cookies:
                await _refuse(scope, receive, send, 401,
                              "missing session token: open the link that `chainrule lesson` printed (it sets a "
                              "cookie), or send the token in the X-Chainrule-Token header.")
                return
            if not (_same(header, self.token) if header else cookie_ok):
                await _refuse(scope, receive, send, 403,
                              "wrong session token: use the token from the link that `chainrule lesson` "
                              "printed when it started (every start makes a new one).")
                return
        else:
            query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            query_token = next((value for key, value in query if key == "token"), None)
            if query_token is not None:
                if _same(query_token, self.token):
                    await self._redirect_with_cookie(send, path, [(k, v) for k, v in query if k != "token"])
                    return
                await self._unauthorized(scope, receive, send, "The token in this address is not the current one.")
                return
            if not cookie_ok:
                await self._unauthorized(scope, receive, send, "This page needs the session token.")
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _unauthorized(scope: Scope, receive: Receive, send: Send, message: str) -> None:
        await _refuse(scope, receive, send, 401, message, page_title="Open the link printed in your terminal",
                      more_html=OPEN_THE_LINK)

    async def _redirect_with_cookie(self, send: Send, path: str, query: list[tuple[str, str]]) -> None:
        # Never "//host/...": that would redirect to another site. Keep the path percent-encoded.
        location = quote("/" + path.lstrip("/"), safe="/") + ("?" + urlencode(query) if query else "")
        headers = [(b"location", location.encode("latin-1", "replace"))]
        for name in self.cookie_names:
            cookie = f"{name}={self.cookie_value}; Path=/; HttpOnly; SameSite=Strict"
            headers.append((b"set-cookie", cookie.encode("latin-1")))
        headers.append((b"content-length", b"0"))
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


class BodyLimit:
    """A body over the limit gets 413 before any route sees it: checked against Content-Length and
    while reading, so that a chunked upload cannot slip past. ``limits``: larger limits by path."""

    def __init__(self, app: App, *, max_body: int = DEFAULT_MAX_BODY, limits: dict[str, int] | None = None) -> None:
        self.app, self.max_body, self.limits = app, max_body, dict(limits or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.get(scope.get("path", "/"), self.max_body)
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                await _refuse(scope, receive, send, 400, "the Content-Length header must be a whole number.")
                return
            if int(declared) > limit:
                await self._too_large(scope, receive, send, int(declared), limit)
                return
        if scope.get("path", "/") in self.limits or \
                scope.get("method", "GET").upper() not in STATE_CHANGING and declared in (None, "0"):
            # A large upload (class mode's progress file): its route reads and counts it as it comes.
            await self.app(scope, receive, send)
            return
        # Read the whole (small) body first, counting, so that a chunked upload cannot slip past.
        messages: list[Message] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                messages.append(message)
                break
            total += len(message.get("body", b""))
            if total > limit:
                await self._too_large(scope, receive, send, total, limit)
                return
            messages.append(message)
            if not message.get("more_body", False):
                break

        async def replayed() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replayed, send)

    @staticmethod
    async def _too_large(scope: Scope, receive: Receive, send: Send, size: int, limit: int) -> None:
        await _refuse(scope, receive, send, 413,
                      f"request body too large: {size} bytes, and the limit is {limit} bytes "
                      f"({limit // 1024} KB). Shorten the code or text you are sending.")


def add_security_layers(app: Any, *, hosts: AllowedHosts, gate: tuple[type, dict[str, Any]],
                        schemes: Iterable[str] = ("http",), max_body: int = DEFAULT_MAX_BODY,
                        body_limits: dict[str, int] | None = None) -> None:
    """The layers in order, outermost first: headers on every answer, Host, Origin, no body for static
    files, the limits on every query string and form (web/forms.py), the gate (TokenGate, or class mode's
    ClassGate: ``(class, its keyword arguments)``), body size."""
    gate_class, gate_options = gate
    app.add_middleware(BodyLimit, max_body=max_body, limits=body_limits)  # Starlette: the last added is outermost
    app.add_middleware(gate_class, **gate_options)
    app.add_middleware(FormLimits, uploads=tuple(body_limits or ()))  # every query and form, before the gate
    app.add_middleware(StaticTakesNoBody)
    app.add_middleware(OriginCheck, hosts=hosts, schemes=schemes)
    app.add_middleware(HostCheck, hosts=hosts)
    app.add_middleware(SecurityHeaders)
