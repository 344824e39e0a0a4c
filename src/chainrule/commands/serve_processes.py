"""The one way a web process answers on its socket (serve_on: `chainrule lesson`, `chainrule serve`), and
`chainrule serve --workers N`: N web processes answering on one port, under one supervisor (run_processes).

The supervisor binds the listening socket once and forks N children that each build the app (their own
database connections, their own threads) and accept from that one socket, so the port is one and the
kernel hands each new connection to whichever process is free to accept it. The children share what the
supervisor loaded before the fork (the modules, the compressed static files) until they write to it.

Stopping: SIGINT or SIGTERM to the supervisor is passed on as SIGTERM to every child, which finishes the
requests in hand (uvicorn's graceful shutdown) and closes its connections; the supervisor waits for them.
A child that dies on its own is started again after a second; one that dies within STARTUP_GRACE seconds of
its start is a configuration problem, not bad luck, so everything stops with its exit code. Each child asks
the kernel for SIGTERM when the supervisor dies (even of kill -9), so no orphan keeps the port.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any, Callable

from chainrule import quiet_start

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["STARTUP_GRACE", "answer_without_delay", "default_process_count", "run_processes", "serve_on"]

STARTUP_GRACE = 10.0  # seconds: a child that ends sooner than this after its start stops the whole server
PR_SET_PDEATHSIG = 1


def default_process_count() -> int:
    """One web process per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def serve_on(app: ASGIApp, sock: socket.socket, *, max_connections: int | None = None, **options: Any) -> None:
    """Answer on ``sock`` with uvicorn until stopped (Ctrl+C, SIGTERM): the open-files limit raised first,
    then the connection bounds that fit it (web/connections.py), quiet logs, the app's lifespan run, and
    ``options`` (a proxy's headers) added."""
    import uvicorn

    from chainrule.web.connections import raise_open_files_limit, server_options

    raise_open_files_limit()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            **server_options(max_connections), **options)
    quiet_start.started()  # the start is over: the garbage collector back on for the requests (quiet_start.py)
    try:
        uvicorn.Server(config).run(sockets=[answer_without_delay(sock)])
    except KeyboardInterrupt:
        pass


def answer_without_delay(sock: socket.socket) -> socket.socket:
    """The listening socket ``sock`` as asyncio must see it to send each answer at once. asyncio turns Nagle's
    algorithm off (TCP_NODELAY) on every connection it accepts only when the listening socket's proto is
    IPPROTO_TCP, and a socket made as socket.socket(family, SOCK_STREAM) says 0. With the algorithm on, an
    answer's body, written after its head, waited for the client to acknowledge the head, which clients
    delay: every answer came about 40 ms late. So the socket is made again, on a duplicate of it (the caller
    keeps its own; socket.dup, which Windows has too), with proto IPPROTO_TCP."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.dup().detach())


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the supervisor's own stop still reaches the children
        pass


def _child(serve_one: Callable[[], int]) -> None:
    """Run one web process in the forked child; never returns to the supervisor's code."""
    code = 1
    try:
        _die_with_parent()
        if os.getppid() == 1:  # the supervisor died before the line above took effect
            os._exit(0)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # uvicorn re-raises it after its graceful stop
        code = serve_one()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0
    except KeyboardInterrupt:
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_processes(count: int, serve_one: Callable[[], int]) -> int:
    """Fork ``count`` children running ``serve_one()`` and supervise them until stopped; the exit code."""
    children: dict[int, float] = {}  # pid -> when it started
    stopping = False
    failure = 0
    quiet_start.started()  # before the fork: the children share the start's frozen objects (quiet_start.py)

    def start() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(serve_one)
        children[pid] = time.monotonic()

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for _ in range(count):
            start()
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            started = children.pop(pid, None)
            if started is None or stopping:
                continue
            code = os.waitstatus_to_exitcode(status)
            if time.monotonic() - started < STARTUP_GRACE:
                print(f"chainrule serve: a web process ended as it started (exit code {code}); stopping.",
                      file=sys.stderr, flush=True)
                failure = code if code > 0 else 1
                stop()
                continue
            print(f"chainrule serve: web process {pid} ended (exit code {code}); starting another.",
                  file=sys.stderr, flush=True)
            time.sleep(1)
            if not stopping:
                start()
    finally:
        stop()
        for pid in list(children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return failure
