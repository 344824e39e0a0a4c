"""`chainrule lesson`: start the local lesson server and open the lesson in the browser.

    chainrule lesson [--port P] [--no-browser] [--data-dir DIR] [--lessons DIR] [--host H [--allow-weak-sandbox]]

The server listens on 127.0.0.1, on the port it used last time (kept in the data folder; 8765 the
first time, any free port when that one is taken) unless --port is given, prints the address of the
path page (or of the first lesson added with --lessons) with the session token, and opens it. The same
port at every start lets an open tab reconnect by itself after a restart. Listening on another interface (--host 0.0.0.0) lets other machines submit code,
so it is refused unless the grader's sandbox is strong or --allow-weak-sandbox is given.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import socket
import sys
import threading
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chainrule.commands.arguments import Refused

if TYPE_CHECKING:
    from fastapi import FastAPI

    from chainrule.web.store_access import StoreAccess

DEFAULT_PORT = 8765
PORT_FILE = "lesson-port"  # in the data folder: the port of the last start, so open tabs find the server again


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lesson",
        help="take the lesson in your browser (starts a local server)",
        description="Start the local lesson server, print its address (with a session token) and open it "
        "in your browser. Everything runs on this machine; nothing is fetched from the internet.",
    )
    parser.add_argument(
        "--port", type=int, default=None,
        help=f"port to listen on (default: the port of the last start, else {DEFAULT_PORT}; a free one if that "
        "is taken; 0: any free port)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1",
        help="address to listen on (default 127.0.0.1, this machine only); any other address needs a "
        "strong grading sandbox or --allow-weak-sandbox",
    )
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser, just print the address")
    parser.add_argument(
        "--data-dir", default=None,
        help="directory of the progress store (default: $CHAINRULE_DATA_DIR, else your user data directory)",
    )
    parser.add_argument(
        "--allow-weak-sandbox", action="store_true",
        help="with --host on a network address: start even if the grader's sandbox is not strong",
    )
    parser.add_argument(
        "--allow-host", action="append", default=[], metavar="NAME",
        help="with --host: a further Host name that browsers may use to reach this server (repeatable)",
    )
    parser.add_argument(
        "--lessons", action="append", default=[], metavar="DIR",
        help="also offer the lessons found in DIR (a lesson folder, or a folder of them), after the built-in "
        "ones; their exercises are graded in the same sandbox (repeatable)",
    )
    parser.add_argument("--lesson", default=None, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def _network_names(host: str) -> list[str]:
    """Host names a remote browser may use for this machine when listening on `host`."""
    names = set()
    if host not in ("0.0.0.0", "::", ""):
        names.add(f"[{host}]" if ":" in host else host)
    try:
        hostname = socket.gethostname()
        names.update({hostname, socket.getfqdn()})
        names.update(socket.gethostbyname_ex(hostname)[2])
    except OSError:
        pass
    return sorted(n.lower() for n in names if n)


def url_host(bind_host: str) -> str:
    """The host part of the address to open for a server listening on `bind_host` (brackets removed).

    The wildcards 0.0.0.0 and :: (and "") listen on loopback too, so 127.0.0.1 reaches them; an IPv6
    literal needs brackets in a URL ([::1]); any other address or name is used as given.
    """
    if bind_host in ("", "0.0.0.0", "::"):
        return "127.0.0.1"
    if ":" in bind_host:
        return f"[{bind_host}]"
    return bind_host


def _host_problem(bind_host: str, family: socket.AddressFamily) -> str | None:
    """Why `bind_host` cannot be an address to listen on (a name that does not resolve), or None."""
    if bind_host in ("", "0.0.0.0", "::"):
        return None
    try:
        socket.getaddrinfo(bind_host, None, family, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        reason = error.strerror if isinstance(error, socket.gaierror) and error.strerror else str(error)
        return f"{bind_host!r} is neither an IP address nor a host name that resolves ({reason})"
    return None


def _prepare_typescript() -> None:
    """Build the TypeScript checker's snapshot while the learner reads (see grading/typescript_snapshot.py)."""
    try:
        from chainrule.grading import prepare_typescript

        prepare_typescript()
    except Exception:  # a missing node or cache: the first TypeScript grading reports or works around it
        pass


def _remembered_port(data_folder: Path) -> int:
    """The port of the last start (kept in the data folder), else DEFAULT_PORT."""
    try:
        port = int((data_folder / PORT_FILE).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return DEFAULT_PORT
    return port if 1 <= port <= 65535 else DEFAULT_PORT


def _remember_port(data_folder: Path, port: int) -> None:
    try:
        data_folder.mkdir(parents=True, exist_ok=True)
        (data_folder / PORT_FILE).write_text(f"{port}\n", encoding="ascii")
    except OSError:  # a read-only data folder: the next start may get another port, nothing else is lost
        pass


def _landing(lesson: str | None, added: list[str]) -> str:
    """The page to open: the lesson asked for, else the first lesson added with --lessons, else the path."""
    from urllib.parse import quote

    chosen = lesson or (added[0] if added else None)
    return f"/lessons/{quote(chosen, safe='')}" if chosen else "/"


@dataclass(frozen=True)
class Place:
    """Where the lesson server listens: the host as given, its family, whether it is loopback, and the
    address bound (a loopback name resolved once, so it cannot resolve differently a moment later)."""

    bind_host: str
    family: socket.AddressFamily
    loopback: bool
    address: str


def run(args: argparse.Namespace) -> int:
    """Check the arguments, listen, build the app and serve until stopped. What is opened (the socket, the
    app's services) is closed by one ExitStack, whichever way the start ends."""
    from chainrule.commands.serve_processes import serve_on

    try:
        added = _lessons_added(args)
        data_dir = args.data_dir or os.environ.get("CHAINRULE_DATA_DIR") or None
        place = _place(args)
        with contextlib.ExitStack() as closing:
            sock = closing.enter_context(_listening(args, place, _data_folder(data_dir)))
            app = _lesson_app(args, place, sock, data_dir, added)
            closing.callback(_services(app).close)
            serve_on(app, sock)
    except Refused as refused:
        print(refused.text("lesson"), file=sys.stderr)
        return refused.code
    print("chainrule lesson stopped.", flush=True)
    return 0


def _data_folder(data_dir: str | None) -> Path:
    from chainrule.progress.store import default_data_dir

    return Path(data_dir) if data_dir else default_data_dir()


def _lessons_added(args: argparse.Namespace) -> list[str]:
    """The lessons --lessons adds (checked), after --port and --lesson are checked; Refused (2) otherwise."""
    from chainrule.lessons import LessonDataError, lesson_ids
    from chainrule.lessons.validate import add_checked_lesson_dirs
    from chainrule.text_safety import terminal_text

    try:
        added = add_checked_lesson_dirs(args.lessons)
    except LessonDataError as error:
        raise Refused(terminal_text(f"chainrule lesson: cannot add the lessons in --lessons: {error}. "
                                    "`chainrule lessons check DIR` lists every problem."), whole=True) from error
    if args.port is not None and not 0 <= args.port <= 65535:
        raise Refused(f"--port must be between 0 and 65535 (0 picks a free port), not {args.port}")
    if args.lesson is not None and args.lesson not in lesson_ids():
        raise Refused(f"unknown lesson {args.lesson!r}; the lessons are {', '.join(lesson_ids())}")
    return added


def _place(args: argparse.Namespace) -> Place:
    """Where to listen, from --host; Refused (2) for a host that cannot be, or one beyond loopback without a
    strong sandbox (unless --allow-weak-sandbox)."""
    from chainrule.commands.sandbox_policy import weak_sandbox_refusal
    from chainrule.loopback import bind_addresses, is_loopback_bind

    bind_host = args.host.strip().strip("[]")
    family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
    problem = _host_problem(bind_host, family)
    if problem:
        raise Refused(f"cannot listen on --host {args.host}: {problem}. Give an IP address such as "
                      "127.0.0.1 (the default, this machine only), ::1, 0.0.0.0 (every network interface), or a "
                      "host name that resolves to one of this machine's addresses.")
    loopback = is_loopback_bind(bind_host)
    if not loopback and bind_host.startswith("127."):
        resolved = ", ".join(bind_addresses(bind_host)) or "nothing"
        raise Refused(f"refusing --host {args.host}: it looks like a loopback address but it is a name that "
                      f"resolves to {resolved}, not only to loopback addresses (127.0.0.0/8, ::1). Give "
                      "127.0.0.1 itself (the default) or ::1.")
    if not loopback:
        refusal = weak_sandbox_refusal("lesson", f"listen on {args.host}", "other machines could then submit code",
                                       "Listen on 127.0.0.1 (the default)", allowed=args.allow_weak_sandbox)
        if refusal:
            raise Refused(refusal, whole=True)
        return Place(bind_host, family, loopback, bind_host)
    # Listen on the address just checked, not on the name: it could resolve differently a moment later.
    address = next((found for found in bind_addresses(bind_host)
                    if (":" in found) == (family == socket.AF_INET6)), bind_host)
    return Place(bind_host, family, loopback, address)


def _listening(args: argparse.Namespace, place: Place, data_folder: Path) -> socket.socket:
    """The listening socket, on --port, else the port of the last start, else any free one; Refused (1)."""
    try:
        sock = socket.socket(place.family, socket.SOCK_STREAM)
    except OSError as error:
        raise Refused(f"cannot listen on --host {args.host}: this machine has no "
                      f"{'IPv6' if place.family == socket.AF_INET6 else 'IPv4'} networking "
                      f"({error.strerror or error}). Choose another --host.", code=1) from error
    wanted = args.port if args.port is not None else _remembered_port(data_folder)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((place.address, wanted))
        except OSError as error:
            if args.port is not None or error.errno != errno.EADDRINUSE:
                raise
            sock.bind((place.address, 0))  # the usual port is taken (another server?): any free one
        sock.listen(128)
    except OSError as error:
        sock.close()
        raise Refused(f"cannot listen on {args.host}:{args.port}: {error.strerror or str(error)}. "
                      f"{_listen_advice(error)}", code=1) from error
    sock.set_inheritable(True)
    _remember_port(data_folder, sock.getsockname()[1])
    return sock


def _listen_advice(error: OSError) -> str:
    if isinstance(error, socket.gaierror) or error.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        return ("--host must be one of this machine's addresses: 127.0.0.1 (the default), ::1, "
                "0.0.0.0 (every interface) or the address of one of its network interfaces.")
    return "Choose another --port, or leave it out to get a free one."


def _services(app: "FastAPI") -> "StoreAccess":
    """The app's store and graded runs (web/app_state.py: the one way to the app's state)."""
    from chainrule.web.app_state import app_state

    return app_state(app).services


def _lesson_app(args: argparse.Namespace, place: Place, sock: socket.socket, data_dir: str | None,
                added: list[str]) -> FastAPI:
    """The one learner's app, with a fresh link token; says where to open it (and opens the browser)."""
    from chainrule.web import create_app
    from chainrule.web.security import new_token
    from chainrule.web.session import SecretError, load_or_create_secret

    token, port = new_token(), sock.getsockname()[1]
    shown_host = url_host(place.bind_host)
    # On loopback (e.g. 127.0.0.2) the address we print must pass the server's Host check too.
    extra_hosts = [shown_host.lower()] if place.loopback else \
        _network_names(place.bind_host) + [h.lower() for h in args.allow_host]
    try:  # kept in the data folder, so a signed-in tab survives a restart (fresh link token each start)
        secret, secret_error = load_or_create_secret(_data_folder(data_dir)), None
    except SecretError as error:
        secret, secret_error = None, str(error)
    app = create_app(token, data_dir, port=port, extra_hosts=extra_hosts, session_secret=secret)
    _, store_error = _services(app).try_store()
    url = f"http://{shown_host}:{port}{_landing(args.lesson, added)}?token={token}"
    _say_running(url, store_error, secret_error)
    if not args.no_browser:
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    threading.Thread(target=_prepare_typescript, daemon=True).start()
    return app


def _say_running(url: str, store_error: str | None, secret_error: str | None) -> None:
    print("chainrule lesson is running. Open this address in your browser:", flush=True)
    print(f"    {url}", flush=True)
    if store_error:
        print(f"Warning: your progress will not be saved: {store_error}", file=sys.stderr, flush=True)
    if secret_error:
        print(f"Warning: open tabs will need the new link after a restart: {secret_error}", file=sys.stderr, flush=True)
    print("Press Ctrl+C to stop.", flush=True)
