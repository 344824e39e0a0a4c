"""A lean HTTP/1.1 client that keeps connections as a browser does, for load generators on the servers' own cores.

httpx spends several times the CPU a request (benchmarks/bench_http_clients.py: 1.57 ms against 0.20 here, its
cookie jar, its pool's bookkeeping, header objects): with httpx learners on the servers' own cores, the load
generator was what the class benchmark measured. This client does only what a
browser's network stack does for one site: at most ``MAX_CONNECTIONS`` kept-alive connections, cookies by name, a
request whose kept-alive connection the server closed as it was sent goes again once on a new connection (a run
carries its key, so that is safe), and bodies as sent (decoded only when a caller reads ``text``).
"""

from __future__ import annotations

import asyncio
import gzip
import json as jsonlib
from urllib.parse import urlencode, urlsplit

MAX_CONNECTIONS = 6  # what a browser keeps per host


class Dropped(Exception):
    """The connection failed before an answer came (refused, reset, closed, timed out)."""


class ClosedUnderIt(Dropped):
    """A kept-alive connection was closed by the server as this request was sent: the request may go again."""


class Response:
    __slots__ = ("status_code", "headers", "content", "url")

    def __init__(self, status_code: int, headers: dict[str, str], content: bytes, url: str) -> None:
        self.status_code, self.headers, self.content, self.url = status_code, headers, content, url

    @property
    def num_bytes_downloaded(self) -> int:
        return len(self.content)

    @property
    def text(self) -> str:
        encoding = self.headers.get("content-encoding", "")
        body = self.content
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "br":
            import brotli

            body = brotli.decompress(body)
        return body.decode("utf-8", "replace")

    def json(self):
        return jsonlib.loads(self.text)


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.used = reader, writer, False

    def close(self) -> None:
        self.writer.close()


class Browser:
    """One learner's browser for one site (``base``, http only): its connections and its cookies."""

    def __init__(self, base: str, timeout: float = 60.0) -> None:
        parts = urlsplit(base)
        self.base, self.host, self.port = base.rstrip("/"), parts.hostname, parts.port or 80
        self.authority = parts.netloc
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.idle: list[Connection] = []
        self.slots = asyncio.Semaphore(MAX_CONNECTIONS)
        self.resent = 0

    async def request(self, method: str, url: str, headers: dict[str, str] | None = None, json=None,
                      data: dict | None = None) -> Response:
        path = url[len(self.base):] if url.startswith(self.base) else url
        body = b""
        head = {"Host": self.authority, "Accept-Encoding": "gzip", **(headers or {})}
        if json is not None:
            body, head["Content-Type"] = jsonlib.dumps(json).encode(), "application/json"
        elif data is not None:
            body, head["Content-Type"] = urlencode(data).encode(), "application/x-www-form-urlencoded"
        if body or method in ("POST", "PUT", "PATCH"):
            head["Content-Length"] = str(len(body))
        if self.cookies:
            head["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        message = (f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items())
                   + "\r\n").encode("latin-1") + body
        async with self.slots:
            try:
                return await asyncio.wait_for(self._exchange(method, path, message), self.timeout)
            except ClosedUnderIt:
                self.resent += 1
                return await asyncio.wait_for(self._exchange(method, path, message, fresh=True), self.timeout)
            except asyncio.TimeoutError as error:
                raise Dropped("no answer in time") from error

    async def _exchange(self, method: str, path: str, message: bytes, fresh: bool = False) -> Response:
        connection = None
        while not fresh and self.idle and connection is None:
            connection = self.idle.pop()
            if connection.reader.at_eof():  # the server closed it while idle: a browser sees that and skips it
                connection.close()
                connection = None
        if connection is None:
            try:
                reader, writer = await asyncio.open_connection(self.host, self.port)
            except OSError as error:
                raise Dropped(f"cannot connect: {error}") from error
            connection = Connection(reader, writer)
        reused, connection.used = connection.used, True
        received = False
        try:
            connection.writer.write(message)
            await connection.writer.drain()
            line = await connection.reader.readline()
            if not line:
                raise ConnectionResetError("closed before an answer")
            received = True
            status, headers, cookies = _head(line, await connection.reader.readuntil(b"\r\n\r\n"))
            content = await _body(connection.reader, method, status, headers)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as error:
            connection.close()
            if reused and not received:
                raise ClosedUnderIt(str(error)) from error
            raise Dropped(f"{type(error).__name__}: {error}") from error
        except BaseException:
            connection.close()
            raise
        for name, value, gone in cookies:
            if gone:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        if headers.get("connection", "").lower() == "close":
            connection.close()
        else:
            self.idle.append(connection)
        return Response(status, headers, content, self.base + path)

    async def aclose(self) -> None:
        for connection in self.idle:
            connection.close()
        self.idle.clear()


def _head(status_line: bytes, rest: bytes) -> tuple[int, dict[str, str], list[tuple[str, str, bool]]]:
    status = int(status_line.split(b" ", 2)[1])
    headers: dict[str, str] = {}
    cookies = []
    for raw in rest.decode("latin-1").split("\r\n"):
        if not raw:
            continue
        name, _, value = raw.partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "set-cookie":
            pair, *attributes = value.split(";")
            key, _, content = pair.strip().partition("=")
            gone = any(item.strip().lower() in ("max-age=0", "max-age=-1") or
                       item.strip().lower().startswith("expires=thu, 01 jan 1970") for item in attributes)
            cookies.append((key, content.strip('"'), gone))
        else:
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return status, headers, cookies


async def _body(reader: asyncio.StreamReader, method: str, status: int, headers: dict[str, str]) -> bytes:
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return b""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        parts = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b""):  # trailers
                    pass
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    headers["connection"] = "close"  # the body runs to the end of the connection
    return await reader.read()
