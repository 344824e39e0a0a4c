"""`chainrule lesson`: start the local lesson server and open the lesson in the browser.

    chainrule lesson [--port P] [--no-browser] [--data-dir DIR] [--host H [--allow-weak-sandbox]]

The server listens on 127.0.0.1 (a free port unless --port), prints the address with the session
token, and opens it. Listening on another interface (--host 0.0.0.0) lets other machines submit code,
so it is refused unless the grader's sandbox is strong or --allow-weak-sandbox is given.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import threading
import webbrowser

DEFAULT_LESSON = "backprop"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lesson",
        help="take the lesson in your browser (starts a local server)",
        description="Start the local lesson server, print its address (with a session token) and open it "
        "in your browser. Everything runs on this machine; nothing is fetched from the internet.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free port)")
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
    parser.add_argument("--lesson", default=DEFAULT_LESSON, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def _sandbox_level() -> tuple[str, str]:
    """(level, detail) of the grader's sandbox: level is strong, partial, minimal or unknown."""
    try:
        from chainrule.grading import isolation_report
    except ImportError as error:
        return "unknown", f"the grader cannot be loaded ({error})"
    try:
        report = isolation_report()
    except Exception as error:  # a probe failure means we cannot vouch for the sandbox
        return "unknown", f"the sandbox probe failed ({error})"
    missing = "; ".join(f"{item.get('layer')}: {item.get('error')}" for item in report.get("missing", []))
    return str(report.get("level", "unknown")), missing


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


def run(args: argparse.Namespace) -> int:
    from chainrule.lessons import lesson_ids
    from chainrule.web.security import is_loopback_bind, new_token

    if not 0 <= args.port <= 65535:
        print(f"chainrule lesson: --port must be between 0 and 65535 (0 picks a free port), not {args.port}",
              file=sys.stderr)
        return 2
    if args.lesson not in lesson_ids():
        print(f"chainrule lesson: unknown lesson {args.lesson!r}; the lessons are {', '.join(lesson_ids())}",
              file=sys.stderr)
        return 2

    loopback = is_loopback_bind(args.host)
    if not loopback:
        level, detail = _sandbox_level()
        if level != "strong" and not args.allow_weak_sandbox:
            print(
                f"chainrule lesson: refusing to listen on {args.host}: other machines could then submit code, "
                f"and the grader's sandbox here is {level!r}, not 'strong'"
                + (f" ({detail})" if detail else "")
                + ". Listen on 127.0.0.1 (the default), or pass --allow-weak-sandbox if you accept the risk.",
                file=sys.stderr,
            )
            return 2

    bind_host = args.host.strip("[]")
    family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind_host, args.port))
        sock.listen(128)
    except OSError as error:
        sock.close()
        print(f"chainrule lesson: cannot listen on {args.host}:{args.port}: {error.strerror or error}. "
              "Choose another --port, or leave it out to get a free one.", file=sys.stderr)
        return 1
    sock.set_inheritable(True)
    port = sock.getsockname()[1]

    import uvicorn

    from chainrule.web import create_app

    token = new_token()
    extra_hosts = [] if loopback else _network_names(bind_host) + [h.lower() for h in args.allow_host]
    data_dir = args.data_dir or os.environ.get("CHAINRULE_DATA_DIR") or None
    app = create_app(token, data_dir, port=port, extra_hosts=extra_hosts)
    _, store_error = app.state.services.try_store()

    url_host = "127.0.0.1" if loopback or bind_host in ("0.0.0.0", "::") else (
        f"[{bind_host}]" if ":" in bind_host else bind_host)
    url = f"http://{url_host}:{port}/lessons/{args.lesson}?token={token}"
    print("chainrule lesson is running. Open this address in your browser:", flush=True)
    print(f"    {url}", flush=True)
    if store_error:
        print(f"Warning: your progress will not be saved: {store_error}", file=sys.stderr, flush=True)
    print("Press Ctrl+C to stop.", flush=True)

    if not args.no_browser:
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        app.state.services.close()
    print("chainrule lesson stopped.", flush=True)
    return 0
