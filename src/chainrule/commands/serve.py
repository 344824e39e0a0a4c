"""`chainrule serve`: one lesson server for a class (accounts instead of a token; see docs/classroom.md).

    chainrule serve [--host H] [--port P] [--url PUBLIC_URL] [--data-dir DIR | --database URL]

The class lives in class.sqlite in the data folder, or in PostgreSQL (--database or $CHAINRULE_DATABASE);
the web process keeps no state of its own, so several can serve one PostgreSQL class behind a proxy.
--url is the address learners open (a TLS proxy's https://... address makes the cookies Secure); its host
name, with loopback, is what the Host check accepts. Listening beyond loopback needs a strong grading
sandbox, or --allow-weak-sandbox, as `chainrule lesson` does.
"""

from __future__ import annotations

import argparse
import socket
import sys
from urllib.parse import urlsplit

from chainrule.commands.class_ import add_database_options

DEFAULT_PORT = 8000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve the lessons to a class: accounts, a teacher's view (see `chainrule class`)",
        description="Serve the lessons to a class: learners sign in, the teacher sees their progress. "
        "Make a class first with `chainrule class create NAME`.",
    )
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    parser.add_argument("--url", default=None,
                        help="the address learners open, e.g. https://class.example.org behind a TLS proxy "
                        "(default: http://HOST:PORT)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="a further Host name browsers may use to reach this server (repeatable)")
    parser.add_argument("--allow-weak-sandbox", action="store_true",
                        help="listen beyond loopback even if the grader's sandbox is not strong")
    parser.add_argument("--run-deadline", type=float, default=None, metavar="SECONDS",
                        help="with PostgreSQL: a run no worker has graded this long after it was sent ends "
                        "with the verdict 'expired' (default 600)")
    parser.add_argument("--runs-per-learner", type=int, default=None, metavar="N",
                        help="with PostgreSQL: how many runs one learner may have waiting or running (default 3)")
    parser.add_argument("--learner-storage", type=float, default=None, metavar="MB",
                        help="how much one learner may keep, in millions of characters of code, results and answers: "
                        "a progress file that would pass it is refused (default 64)")
    parser.add_argument("--lms-retry", type=float, default=5.0, metavar="SECONDS",
                        help="a score the LMS did not take is sent again after this long, then twice as long each "
                        "time, at most hourly (default 5)")
    add_database_options(parser)
    parser.set_defaults(func=run)


def class_grader(store, args: argparse.Namespace):
    """A class in PostgreSQL queues its runs for `chainrule worker`; a class in SQLite grades in process."""
    from chainrule.classes.grading import InProcessGrader, QueuedGrader

    if store.database.dialect != "postgresql":
        return InProcessGrader()
    return QueuedGrader(store, store.database.url, deadline_seconds=args.run_deadline,
                        max_open=args.runs_per_learner)


def _add_lti(app, store, accounts, url: str, args: argparse.Namespace):
    """The LTI tool's pages on the app (classes/lti.py), the thread that sends scores to the LMS, and single
    sign-on's pages (classes/sso.py)."""
    from chainrule.classes.lti_scores import ScoreSender
    from chainrule.classes.lti_services import LtiServices
    from chainrule.commands.lti import tool
    from chainrule.classes.sso import Sso
    from chainrule.web.routes_lti import add_lti
    from chainrule.web.routes_sso import add_sso

    if not args.lms_retry > 0:
        raise ValueError("--lms-retry must be more than 0 seconds")
    lti = tool(args.data_dir, store, accounts, url)
    sender = ScoreSender(lti, LtiServices(lti), retry_base=args.lms_retry)
    add_lti(app, lti, sender)
    add_sso(app, Sso(store, accounts, url, remote=lti.remote))
    return sender


def run(args: argparse.Namespace) -> int:
    from chainrule.commands.lesson import url_host
    from chainrule.commands.sandbox_policy import weak_sandbox_refusal
    from chainrule.progress import StoreError
    from chainrule.web.security import is_loopback_bind, split_host

    if not 1 <= args.port <= 65535:
        print(f"chainrule serve: --port must be between 1 and 65535, not {args.port}", file=sys.stderr)
        return 2
    bind_host = args.host.strip().strip("[]")
    url = (args.url or f"http://{url_host(bind_host)}:{args.port}").rstrip("/")
    parts = urlsplit(url)
    parsed = split_host(parts.netloc) if parts.scheme in ("http", "https") else None
    if parsed is None or parts.path not in ("", "/"):
        print(f"chainrule serve: --url must be an address like https://class.example.org, not {args.url!r}",
              file=sys.stderr)
        return 2
    if not is_loopback_bind(bind_host):
        refusal = weak_sandbox_refusal("serve", f"listen on {args.host}", "learners' code runs on this machine",
                                       "Fix the sandbox (docs/grading.md)", allowed=args.allow_weak_sandbox)
        if refusal:
            print(refusal, file=sys.stderr)
            return 2

    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts
    from chainrule.web.routes_class import create_class_app

    try:
        store = open_class_store(args.data_dir, args.database)
    except StoreError as error:
        print(f"chainrule serve: {error}", file=sys.stderr)
        return 1
    # Host and Origin are checked with their port (a page on another port of this host is another origin):
    # the names this process listens as, on its own port, and the --url's host on the --url's port.
    hosts = [url_host(bind_host).lower(), *(name.lower() for name in args.allow_host)]
    public = (parsed[0], parsed[1] or (443 if parts.scheme == "https" else 80))
    try:
        grader = class_grader(store, args)
        quota = {} if args.learner_storage is None else {"learner_quota": int(args.learner_storage * 1_000_000)}
        if quota and quota["learner_quota"] <= 0:
            raise ValueError("--learner-storage must be more than 0 (millions of characters)")
        accounts = Accounts(store)
        app = create_class_app(store, accounts=accounts, grader=grader,
                               secure=parts.scheme == "https", hosts=hosts, port=args.port, public=public, **quota)
        sender = _add_lti(app, store, accounts, url, args)
    except (StoreError, ValueError) as error:
        store.close()
        print(f"chainrule serve: {error}", file=sys.stderr)
        return 1

    import uvicorn

    from chainrule.web.connections import server_options

    family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind_host, args.port))
        sock.listen(128)
    except OSError as error:
        store.close()
        print(f"chainrule serve: cannot listen on {args.host}:{args.port}: {error.strerror or error}. "
              "Choose another --port or --host.", file=sys.stderr)
        return 1
    print(f"chainrule serve is running for the classes in {store.where}.", flush=True)
    if grader.queued:
        print("    Graded runs wait in the class database for `chainrule worker --database URL`.", flush=True)
    print(f"    Learners and teacher sign in at {url}/sign-in", flush=True)
    print("Press Ctrl+C to stop.", flush=True)
    # Behind a proxy on this machine, the client address (for sign-in limits) comes from X-Forwarded-For.
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", proxy_headers=True,
                            forwarded_allow_ips="127.0.0.1,::1", **server_options())
    sender.start()
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sender.stop()
        sock.close()
        if grader.queued:
            grader.close()
        store.close()
    print("chainrule serve stopped.", flush=True)
    return 0
