"""Idle connections cannot lock learners out of the lesson server.

    config = uvicorn.Config(app, **server_options())

uvicorn closes a kept-alive connection after `timeout_keep_alive` seconds, but it has no deadline for
the headers of a request: a socket that connects and sends nothing (or a byte now and then) is kept
forever. A few hundred of them use up the process's open-files limit, after which the server accepts
nothing and every real request hangs. `GuardedH11Protocol` (uvicorn's h11 protocol, extended) adds:

- a request deadline: a connection that has not sent a whole request, head and body, within
  HEADER_TIMEOUT seconds of connecting (or of its previous response) is closed. The body counts: a
  head that declares `Content-Length: 1000` and never sends the body would otherwise hold the
  connection, and the app reading it, for ever. The clock counts only time the server waits on the
  client: it stops while the server has paused reading (uvicorn pauses once 64 KB of body wait for the
  app, or until the app asks for a body sent with `Expect: 100-continue`) and while bytes the client
  sent lie unread in the socket (a busy or starved server); a slow server is not charged to the client;
- a write deadline: a client that stops reading its answer (the server's send buffer stays full for
  WRITE_TIMEOUT seconds: an export it never downloads, say) is dropped, and what the answer held is
  freed;
- a cap on open connections, kept below the open-files limit (with a short listen backlog, so that
  accepting never overshoots it; `raise_open_files_limit()` lifts the soft limit to the hard one first):
  when a new connection would pass it, the connection that has waited longest for a whole request (a
  head, or the rest of a body), if it has waited at least IDLE_BEFORE_EVICTION, is closed to make room (a FIN, nothing unread: a browser sends its
  request again on a new connection), so a real request is served at once however many idle or
  half-sent sockets are held;
- keep-alive only while there is room: once KEEP_ALIVE_SHARE of the cap is open, answers say
  `Connection: close`, so idle kept-alive connections never fill the cap and a browser is not left
  holding one that will be closed under it;
- waiting instead of failing: if every open connection is busy with a request, the newcomer waits,
  unread (at most MAX_WAITING of them, fewer if the open-files limit leaves less room; each at most
  WAIT_TIMEOUT seconds), and is taken in as soon as
  another connection closes; only past those bounds is its request answered 503 with a JSON reason and
  `Retry-After`, and closed.

The arithmetic (docs/classroom.md, "Connections"): a browser opens up to 6 connections to a server and,
between a page's loads, keeps one or two; a learner thinking for 3 s between saves holds about one. With
the open-files limit raised (Debian's hard limit is 1,048,576), the cap is MAX_CONNECTIONS = 4,096 per web
process: about 3,000 learners kept alive (KEEP_ALIVE_SHARE) before answers start closing their
connections, and beyond that each request costs a new connection, not a failure.

uvicorn's own `limit_concurrency` is not used for the cap: it counts idle connections too, so idle
sockets would turn every real request into a 503, the same lockout in another form.
"""

from __future__ import annotations

import json
import time
import weakref
from typing import Any

import h11
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

__all__ = ["HEADER_TIMEOUT", "KEEP_ALIVE_TIMEOUT", "WRITE_TIMEOUT", "GuardedH11Protocol", "connection_cap",
           "raise_open_files_limit", "server_options", "waiting_cap"]

HEADER_TIMEOUT = 10.0  # seconds to send a whole request (head and body), from connecting or the previous response
WRITE_TIMEOUT = 30.0  # seconds an answer may wait for a client that reads none of it
KEEP_ALIVE_TIMEOUT = 5  # seconds an idle kept-alive connection stays open (uvicorn's timeout_keep_alive)
MAX_CONNECTIONS = 4096
KEEP_ALIVE_SHARE = 0.75  # past this share of the cap, answers close their connection instead of keeping it
IDLE_BEFORE_EVICTION = 1.0  # seconds a connection must have waited for a request before it may be closed for room
MAX_WAITING = 1024  # connections that may wait, unread, for a busy server to free a place
WAIT_TIMEOUT = 30.0  # seconds one may wait so; then its request is answered 503 with Retry-After
FILES_KEPT_FREE = 128  # open files left for the store, the grader's pipes, static files and logs
# asyncio accepts up to `backlog` connections each time the listening socket is ready, and a closed
# connection's file is released only a loop turn or two later: keep room for about three such batches.
LISTEN_BACKLOG = 64
MAX_HEAD_BYTES = 64 * 1024  # largest request head accepted (h11_max_incomplete_event_size)


def raise_open_files_limit(wanted: int = MAX_CONNECTIONS + MAX_WAITING + 1024) -> int:
    """Lift this process's soft open-files limit towards ``wanted`` (never past the hard limit); the limit now."""
    try:
        import resource
    except ImportError:  # not POSIX
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            pass
    return soft


def connection_cap(limit: int | None = None) -> int:
    """How many connections may be open at once: MAX_CONNECTIONS, lowered to stay well under the
    open-files limit (`limit`, default this process's RLIMIT_NOFILE soft limit)."""
    if limit is None:
        try:
            import resource  # POSIX only; elsewhere there is no open-files limit to stay under
        except ImportError:
            return MAX_CONNECTIONS
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if limit < 0:  # RLIM_INFINITY
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, _file_budget(limit)))


def _file_budget(limit: int) -> int:
    return limit - FILES_KEPT_FREE - 3 * LISTEN_BACKLOG


def waiting_cap(cap: int, limit: int | None = None) -> int:
    """How many newcomers may wait for a place beside ``cap`` open connections: what the open-files limit
    leaves, at most MAX_WAITING (none at a low limit: then a newcomer past the cap is answered 503)."""
    if limit is None:
        try:
            import resource
        except ImportError:
            return MAX_WAITING
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if limit < 0:
        return MAX_WAITING
    return max(0, min(MAX_WAITING, _file_budget(limit) - cap))


async def _too_many_connections(scope: Any, receive: Any, send: Any) -> None:
    body = json.dumps({"detail": "The lesson server has too many connections open, all of them busy; "
                                 "try again in a moment."}).encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"), (b"retry-after", b"1"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


def _unread_bytes(transport: Any) -> int:
    """Bytes the client has sent that lie in the socket, not yet read by the server (0 if unknown)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return 0
    try:
        import fcntl
        import termios

        return int.from_bytes(fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"), "little")
    except (ImportError, OSError, ValueError):  # not POSIX, or the socket is gone
        return 0


class _ClockedFlow(FlowControl):
    """uvicorn's read flow control, telling the protocol when the server pauses or resumes reading."""

    def __init__(self, transport: Any, protocol: "GuardedH11Protocol") -> None:
        super().__init__(transport)
        self._protocol = protocol

    def pause_reading(self) -> None:
        super().pause_reading()
        self._protocol._stop_clock()

    def resume_reading(self) -> None:
        super().resume_reading()
        self._protocol._restart_clock()


# The connections of each server that wait for a place (GuardedH11Protocol._waiting_room), kept beside
# uvicorn's ServerState rather than on it; gone with the server.
_WAITING_ROOMS: weakref.WeakKeyDictionary[ServerState, list[GuardedH11Protocol]] = weakref.WeakKeyDictionary()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline and a cap on open connections."""

    header_timeout = HEADER_TIMEOUT
    write_timeout = WRITE_TIMEOUT
    max_connections = MAX_CONNECTIONS
    max_waiting = MAX_WAITING

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self.flow = _ClockedFlow(transport, self)
        self._head_timer: Any = None
        self._budget = self.header_timeout  # seconds of waiting on the client left for this request
        self._clock_since: float | None = None  # when the clock last started; None while it is stopped
        self._write_timer: Any = None
        self._waiting_since: float | None = None
        self._parked = False
        self._room_timer: Any = None
        waiting = self._waiting_room()
        if len(self.connections) - len(waiting) > self.max_connections and not self._close_longest_waiting():
            if len(waiting) < self.max_waiting:  # every connection is busy: wait, unread, for one to close
                self._parked = True
                waiting.append(self)
                transport.pause_reading()
                self._head_timer = self.loop.call_later(WAIT_TIMEOUT, self._waited_too_long)
                self._room_timer = self.loop.call_later(IDLE_BEFORE_EVICTION, self._look_for_room)
                return
            self.app = _too_many_connections  # past every bound: this one's request gets a 503
        self._await_head()

    def _waiting_room(self) -> list[GuardedH11Protocol]:
        """The connections of this server waiting for a place, oldest first (one list per server_state)."""
        return _WAITING_ROOMS.setdefault(self.server_state, [])

    def _look_for_room(self) -> None:
        """While waiting: close a connection that has now been idle long enough (its loss takes us in)."""
        self._room_timer = None
        if self._parked and not self._close_longest_waiting():
            self._room_timer = self.loop.call_later(IDLE_BEFORE_EVICTION / 4, self._look_for_room)

    def _take_in(self) -> None:
        self._parked = False
        if self._room_timer is not None:
            self._room_timer.cancel()
            self._room_timer = None
        self._cancel_head_timer()
        self.transport.resume_reading()
        self._await_head()

    def _waited_too_long(self) -> None:
        self._head_timer = None
        if self._parked:
            self._waiting_room().remove(self)
            self.app = _too_many_connections
            self._take_in()

    def _make_room(self) -> None:
        """A connection closed: the longest waiting newcomer takes its place."""
        room = self._waiting_room()
        while room and len(self.connections) - len(room) <= self.max_connections:
            newcomer = room.pop(0)
            if not newcomer.transport.is_closing():
                newcomer._take_in()

    def _await_head(self) -> None:
        self._waiting_since = time.monotonic()
        self._cancel_head_timer()
        self._clock_since = None
        self._budget = self.header_timeout
        self._restart_clock()

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    # The request deadline's clock runs only while the server waits on the client: it has read all the client
    # sent, and it is reading. HEADER_TIMEOUT is the budget of such time for one request.

    def _server_behind(self) -> bool:
        """Is the client waiting on the server (reading paused, a 100 Continue not yet sent, bytes unread)?"""
        if not self.transport.is_reading() or (self.cycle is not None and self.cycle.waiting_for_100_continue
                                                and not self.cycle.response_complete):
            return True
        return _unread_bytes(self.transport) > 0

    def _stop_clock(self) -> None:
        if self._clock_since is not None:
            self._budget -= time.monotonic() - self._clock_since
            self._clock_since = None
            self._cancel_head_timer()

    def _restart_clock(self) -> None:
        """Start the clock again if the server is now waiting on the client (else a later read restarts it)."""
        if (self._clock_since is not None or self._waiting_since is None or self._parked
                or self.transport.is_closing() or self._server_behind()):
            return
        self._clock_since = time.monotonic()
        self._head_timer = self.loop.call_later(max(self._budget, 0.0), self._head_too_late)

    def _head_too_late(self) -> None:
        self._head_timer = None
        self._stop_clock()
        if self._waiting_since is None or self.transport.is_closing():
            return
        if self._server_behind():  # the time was the server's (it was starved, say): wait on, clock stopped
            return
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._clock_since is None:
            self._restart_clock()

    def _close_longest_waiting(self) -> bool:
        """Close the other connection that has waited longest for a request head; False if none waits."""
        # Only one idle for IDLE_BEFORE_EVICTION: a request's head follows its connection (or the previous
        # answer) within a round trip, and closing a socket whose request is in flight resets it.
        idle_since = time.monotonic() - IDLE_BEFORE_EVICTION
        waiting = [(c._waiting_since, c) for c in self.connections
                   if isinstance(c, GuardedH11Protocol) and c is not self and c._clock_since is not None
                   and c._waiting_since is not None and c._waiting_since <= idle_since and not c._parked
                   and not c.transport.is_closing()]
        if not waiting:
            return False
        _, oldest = min(waiting, key=lambda pair: pair[0])
        oldest._cancel_head_timer()
        oldest.transport.close()
        return True

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:
            if self.conn.their_state is h11.SEND_BODY:
                return  # the head arrived, the body has not: still waiting (deadline and eviction apply)
            self._waiting_since = None  # a whole request arrived: it is being answered
            self._clock_since = None
            self._cancel_head_timer()
            if len(self.connections) >= self.max_connections * KEEP_ALIVE_SHARE and self.app is not _too_many_connections:
                # Crowded: this answer closes its connection, so idle kept-alive ones never fill the cap.
                self.cycle.default_headers = [*self.cycle.default_headers, (b"connection", b"close")]

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._await_head()  # before the parent handles a pipelined request, which clears it again
        super().on_response_complete()
        if self._clock_since is None:
            self._restart_clock()  # uvicorn may have resumed reading without its flow control

    def pause_writing(self) -> None:
        """The send buffer is full: the client has this long to read some of it, or it is dropped."""
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(self.write_timeout, self._not_reading)

    def resume_writing(self) -> None:
        self._cancel_write_timer()
        super().resume_writing()

    def _cancel_write_timer(self) -> None:
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _not_reading(self) -> None:
        self._write_timer = None
        if not self.transport.is_closing():
            self.transport.abort()  # close() would wait for the unread buffer to be sent

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_write_timer()
        self._cancel_head_timer()
        self._waiting_since = None
        self._clock_since = None
        if self._parked:
            self._parked = False
            self._waiting_room().remove(self)
        if self._room_timer is not None:
            self._room_timer.cancel()
            self._room_timer = None
        super().connection_lost(exc)
        self._make_room()


def server_options(max_connections: int | None = None) -> dict[str, Any]:
    """uvicorn.Config keyword arguments for the lesson server's connection limits (``max_connections``:
    the cap, default connection_cap())."""
    cap = max_connections or connection_cap()
    protocol = type("LessonH11Protocol", (GuardedH11Protocol,), {"max_connections": cap, "max_waiting": waiting_cap(cap)})
    return {"http": protocol, "timeout_keep_alive": KEEP_ALIVE_TIMEOUT, "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
            "backlog": LISTEN_BACKLOG}
