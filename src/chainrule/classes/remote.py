"""Talking to the school's other systems (an LMS, a sign-in provider) over HTTP: bounded in time and size.

    client = Remote()
    answer = client.json("GET", "https://lms.example.edu/api/lti/security/jwks", what="the LMS's public keys")

Every call has a deadline (5 s to connect, 15 s in all, however slowly the answer drips) and reads at most
2 MB, so that a slow or hostile server can hold neither a thread nor memory for long. A failure is a RemoteError whose text names what was
asked for, where, and what happened (never a secret: tokens go in headers, which no message repeats).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping
from urllib.parse import urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

MAX_ANSWER = 2 * 1024 * 1024
CONNECT_SECONDS = 5.0  # to connect
PART_SECONDS = 15.0  # to wait for each part of the answer
WHOLE_ANSWER = 15.0  # seconds for the whole answer, however slowly it drips


class RemoteError(Exception):
    """A call to another system that failed. status: its HTTP status (0: no answer at all)."""

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Answer:
    status: int
    headers: Mapping[str, str]  # case-insensitive (httpx.Headers)
    body: Any  # the JSON document ({} for an empty body)


class Remote:
    """Its HTTP client (httpx, with its TLS context) is made on the first call: every class server has a Remote
    for single sign-on and the LMS, and most never call out, so they need not import httpx at start."""

    def __init__(self) -> None:
        self._client: httpx.Client | None = None
        self._making = threading.Lock()
        self._closed = False

    @property
    def client(self) -> httpx.Client:
        with self._making:
            if self._closed:
                raise RemoteError("this connection to other systems is closed")
            if self._client is None:
                import httpx

                self._client = httpx.Client(headers={"user-agent": "chainrule"}, follow_redirects=False,
                                            timeout=httpx.Timeout(PART_SECONDS, connect=CONNECT_SECONDS))
            return self._client

    def close(self) -> None:
        with self._making:
            self._closed = True
            if self._client is not None:
                self._client.close()

    def json(self, method: str, url: str, *, what: str, headers: dict | None = None, body: Any = None,
             content_type: str = "application/json", form: dict[str, str] | None = None,
             ok: tuple[int, ...] = (200, 201)) -> Answer:
        """The JSON answer of one call; RemoteError if it cannot be made, is not in ``ok``, or is not JSON.
        ``body`` is sent as JSON (with ``content_type``), ``form`` as an HTML form (an OAuth token request)."""
        sent = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            sent["content-type"] = content_type
        elif form is not None:
            data = urlencode(form).encode("ascii")
            sent["content-type"] = "application/x-www-form-urlencoded"
        import httpx

        started = time.monotonic()
        try:
            with self.client.stream(method, url, headers=sent, content=data) as response:
                raw = bytearray()
                for chunk in response.iter_bytes(64 * 1024):
                    raw += chunk
                    if len(raw) > MAX_ANSWER or time.monotonic() - started > WHOLE_ANSWER:
                        raise RemoteError(f"{what} at {url} answered with more than {MAX_ANSWER} bytes, or took "
                                          f"longer than {WHOLE_ANSWER:.0f} s", status=response.status_code)
        except httpx.HTTPError as error:
            raise RemoteError(f"{what} at {url} cannot be reached: {type(error).__name__}") from None
        if response.status_code not in ok:
            text = bytes(raw[:300]).decode("utf-8", "replace").strip()
            raise RemoteError(f"{what} at {url} answered HTTP {response.status_code}"
                              + (f": {text}" if text else ""), status=response.status_code)
        try:
            document = json.loads(bytes(raw)) if raw.strip() else {}
        except ValueError:
            raise RemoteError(f"{what} at {url} did not answer JSON", status=response.status_code) from None
        return Answer(response.status_code, response.headers, document)


def with_query(url: str, parameters: dict[str, str]) -> str:
    """``url`` with ``parameters`` added to whatever query it has (an authorization endpoint may carry one)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(query="&".join(filter(None, [parts.query, urlencode(parameters)]))))
