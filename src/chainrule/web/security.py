"""What keeps a web page on another site from making this local server run code.

The server executes learners' code (through the grader's sandbox), so it treats every request as
possibly coming from a hostile page in the same browser. One ASGI middleware checks, in this order:

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

Every response also gets headers that forbid framing and sniffing; HTML pages get a Content Security
Policy that only allows this server's own scripts, styles, fonts and connections. Everything but the
static files (every API answer, every page, every refusal) is sent with `Cache-Control: no-store`:
they carry the learner's progress or the session, and no cache or back button should keep a copy.
"""

from __future__ import annotations

import html
import ipaddress
import json
import secrets
import socket
from typing import Any, Awaitable, Callable, Iterable
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

__all__ = [
    "COOKIE_NAME", "TOKEN_HEADER", "LOOPBACK_HOSTS", "DEFAULT_MAX_BODY", "SecurityMiddleware",
    "new_token", "split_host", "is_loopback_bind", "bind_addresses",
]

COOKIE_NAME = "chainrule_token"
TOKEN_HEADER = "x-chainrule-token"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
DEFAULT_MAX_BODY = 256 * 1024  # bytes; code is the biggest body, and 256 KB is far beyond any answer
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PUBLIC_PREFIXES = ("/static/",)  # the page's own scripts and styles: nothing secret, nothing executed

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

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def new_token() -> str:
    """A fresh random session token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def bind_addresses(host: str) -> list[str]:
    """Every address `host` (an IP address or a name) resolves to; [] when it does not resolve."""
    name = host.strip().strip("[]")
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):  # socket.gaierror is an OSError
        return []
    return sorted({str(info[4][0]) for info in infos})


def _loopback_address(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback  # 127.0.0.0/8 or ::1


def is_loopback_bind(host: str) -> bool:
    """True when every address `host` resolves to is loopback (127.0.0.0/8, ::1), so that only this
    machine can reach a server listening there. Judged by resolving, never by the name: a name such
    as "127.0.0.1.example.com" can resolve anywhere. A name that does not resolve is not loopback."""
    addresses = bind_addresses(host)
    return bool(addresses) and all(_loopback_address(address) for address in addresses)


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


def _cookie_values(header: str, name: str) -> list[str]:
    """Every value sent for cookie `name`. Cookies are not tied to ports, so a page on another port of
    this host can plant a same-named cookie that the browser sends first: look at all of them."""
    values = []
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            values.append(value.strip().strip('"'))
    return values


def _same(given: str | None, token: str) -> bool:
    if not given:
        return False
    return secrets.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


UNAUTHORIZED_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chainrule: open the link from your terminal</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5">
<h1>Open the link printed in your terminal</h1>
<p>{message}</p>
<p>When you ran <code>chainrule lesson</code>, it printed an address that ends in
<code>?token=...</code>. Open that exact address: the token proves the page was opened by you, and
keeps other web sites from using this local server.</p>
</body></html>
"""


class SecurityMiddleware:
    """ASGI middleware enforcing the Host, Origin, token and body-size rules described above.

    token: the session token. port: the port the server listens on (None: any port, for in-process
    tests). extra_hosts: host names allowed besides loopback (for --host on a network interface).
    max_body: the request body limit in bytes.
    """

    def __init__(
        self,
        app: Callable[[Scope, Receive, Send], Awaitable[None]],
        *,
        token: str,
        port: int | None = None,
        extra_hosts: Iterable[str] = (),
        max_body: int = DEFAULT_MAX_BODY,
        cookie_value: str | None = None,
        gate: Any = None,
        schemes: Iterable[str] = ("http",),
        body_limits: dict[str, int] | None = None,
    ) -> None:
        if not token and gate is None:
            raise ValueError("the session token must be a non-empty string")
        # Class mode (`chainrule serve`): `gate` (web/class_gate.py) signs accounts in instead of the token,
        # and `schemes` lets a server behind a TLS proxy accept its https:// Origin.
        self.gate = gate
        self.schemes = frozenset(schemes)
        self.app = app
        self.token = token
        # What the session cookie holds: by default the token; with a session secret kept in the data
        # folder (web/session.py), a value that outlives this start, so open tabs survive a restart.
        self.cookie_value = cookie_value or token
        self.port = port
        self.hosts = set(LOOPBACK_HOSTS) | {h.strip().lower() for h in extra_hosts if h.strip()}
        self.max_body = max_body
        self.body_limits = dict(body_limits or {})  # path -> a larger limit (class mode's progress import)
        # Cookies ignore ports: a second server on another port would overwrite `chainrule_token`. A
        # port-specific cookie as well keeps two servers from locking each other out.
        self.cookie_names = [COOKIE_NAME] + ([f"{COOKIE_NAME}_{port}"] if port else [])

    # ---------------------------------------------------------------- checks

    def host_allowed(self, value: str | None) -> bool:
        parsed = split_host(value or "")
        if parsed is None:
            return False
        name, port = parsed
        if name not in self.hosts:
            return False
        return self.port is None or port is None and self.port == 80 or port == self.port

    def origin_allowed(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in self.schemes or not parts.netloc or parts.path not in ("", "/"):
            return False
        return self.host_allowed(parts.netloc)

    # ---------------------------------------------------------------- ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for key, value in scope.get("headers", []):
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        path: str = scope.get("path", "/")
        is_api = path == "/api" or path.startswith("/api/")

        if scope["type"] == "websocket":  # the app has no websockets; refuse before anything else
            await send({"type": "websocket.close", "code": 1008})
            return

        host = headers.get("host")
        if not self.host_allowed(host):
            allowed = ", ".join(sorted(self.hosts))
            await self._refuse(
                send, 403, is_api,
                f"Host {host!r} is not allowed: this server answers only to {allowed}"
                + (f" on port {self.port}" if self.port else "")
                + " (a foreign Host header is how DNS rebinding attacks reach local servers).",
            )
            return

        method = scope.get("method", "GET").upper()
        origin = headers.get("origin")
        if method in STATE_CHANGING and origin is not None and not self.origin_allowed(origin):
            await self._refuse(
                send, 403, is_api,
                f"Origin {origin!r} is not this server: a {method} is accepted only from the lesson "
                "page itself (or from a client that sends no Origin).",
            )
            return

        declared = headers.get("content-length")
        if path.startswith(PUBLIC_PREFIXES) and (declared not in (None, "0") or "transfer-encoding" in headers):
            # Closed after the answer: the body it declared is never read.
            await self._refuse(send, 400, True, "a request for a static file takes no body.", close=True)
            return

        if self.gate is not None:
            if not await self.gate.admit(scope, headers, method, is_api, self._with_headers(send)):
                return
        elif not path.startswith(PUBLIC_PREFIXES):
            cookie_header = headers.get("cookie", "")
            cookies = [value for name in self.cookie_names for value in _cookie_values(cookie_header, name) if value]
            cookie_ok = any(_same(value, self.cookie_value) for value in cookies)
            if is_api:
                header = headers.get(TOKEN_HEADER)
                if not header and not cookies:
                    await self._refuse(
                        send, 401, True,
                        "missing session token: open the link that `chainrule lesson` printed (it sets a "
                        "cookie), or send the token in the X-Chainrule-Token header.",
                    )
                    return
                if not (_same(header, self.token) if header else cookie_ok):
                    await self._refuse(
                        send, 403, True,
                        "wrong session token: use the token from the link that `chainrule lesson` "
                        "printed when it started (every start makes a new one).",
                    )
                    return
            else:
                query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
                query_token = next((value for key, value in query if key == "token"), None)
                if query_token is not None:
                    if _same(query_token, self.token):
                        rest = [(key, value) for key, value in query if key != "token"]
                        await self._redirect_with_cookie(send, path, rest)
                        return
                    await self._refuse(send, 401, False, "The token in this address is not the current one.")
                    return
                if not cookie_ok:
                    await self._refuse(send, 401, False, "This page needs the session token.")
                    return

        body_messages: list[dict[str, Any]] | None = None
        if declared is not None:
            if not declared.strip().isdigit():
                await self._refuse(send, 400, is_api, "the Content-Length header must be a whole number.")
                return
            if int(declared) > self.body_limits.get(path, self.max_body):
                await self._too_large(send, is_api, int(declared), self.body_limits.get(path, self.max_body))
                return
        if path in self.body_limits:
            pass  # a large upload (class mode's progress file): its route reads and counts it as it comes
        elif method in STATE_CHANGING or declared not in (None, "0"):
            # Read the whole (small) body first, counting, so that a chunked upload cannot slip past.
            body_messages = []
            total = 0
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    body_messages.append(message)
                    break
                total += len(message.get("body", b""))
                if total > self.body_limits.get(path, self.max_body):
                    await self._too_large(send, is_api, total, self.body_limits.get(path, self.max_body))
                    return
                body_messages.append(message)
                if not message.get("more_body", False):
                    break

        await self.app(scope, self._replay(body_messages, receive) if body_messages is not None else receive,
                       self._with_headers(send, no_store=not path.startswith(PUBLIC_PREFIXES)))

    # ---------------------------------------------------------------- helpers

    @staticmethod
    def _replay(messages: list[dict[str, Any]], receive: Receive) -> Receive:
        queue = list(messages)

        async def replayed() -> dict[str, Any]:
            if queue:
                return queue.pop(0)
            return await receive()

        return replayed

    @staticmethod
    def _with_headers(send: Send, *, no_store: bool = True) -> Send:
        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if no_store:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                present = {key.lower() for key, _ in headers}
                headers += [(k, v) for k, v in COMMON_HEADERS if k not in present]
                content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if content_type.startswith(b"text/html") and b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
                message = dict(message, headers=headers)
            await send(message)

        return sending

    async def _too_large(self, send: Send, is_api: bool, size: int, limit: int) -> None:
        await self._refuse(
            send, 413, is_api,
            f"request body too large: {size} bytes, and the limit is {limit} bytes "
            f"({limit // 1024} KB). Shorten the code or text you are sending.",
        )

    async def _refuse(self, send: Send, status: int, as_json: bool, message: str, *, close: bool = False) -> None:
        if as_json:
            body = json.dumps({"detail": message}).encode("utf-8")
            content_type = b"application/json"
        else:
            body = UNAUTHORIZED_PAGE.format(message=html.escape(message)).encode("utf-8")
            content_type = b"text/html; charset=utf-8"
        headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
        headers += [(b"connection", b"close")] if close else []
        await self._with_headers(send)({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _redirect_with_cookie(self, send: Send, path: str, query: list[tuple[str, str]]) -> None:
        # Never "//host/...": that would redirect to another site. Keep the path percent-encoded.
        location = quote("/" + path.lstrip("/"), safe="/") + ("?" + urlencode(query) if query else "")
        headers = [(b"location", location.encode("latin-1", "replace"))]
        for name in self.cookie_names:
            cookie = f"{name}={self.cookie_value}; Path=/; HttpOnly; SameSite=Strict"
            headers.append((b"set-cookie", cookie.encode("latin-1")))
        headers.append((b"content-length", b"0"))
        await self._with_headers(send)({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
