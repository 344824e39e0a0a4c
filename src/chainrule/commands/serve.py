"""`chainrule serve`: one lesson server for a class (accounts instead of a token; see docs/classroom.md).

    chainrule serve [--host H] [--port P] [--url PUBLIC_URL] [--data-dir DIR | --database URL] [--workers N]
                    [--lessons DIR]

The class lives in class.sqlite in the data folder, or in PostgreSQL (--database or $CHAINRULE_DATABASE);
the web process keeps no state of its own, so several can serve one PostgreSQL class: --workers N runs N of
them on the one port (commands/serve_processes.py; one per core by default), a class in SQLite has one.
--url is the address learners open (a TLS proxy's https://... address makes the cookies Secure); its host
name, with loopback, is what the Host check accepts. Listening beyond loopback needs a strong grading
sandbox, or --allow-weak-sandbox, as `chainrule lesson` does. --lessons DIR: the class's own lessons (a copy
of the built-ins to edit, `chainrule lessons copy DIR`, or an author's folders), recorded in the class
database with their content hash for the workers and `chainrule class` (classes/class_lessons.py).
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from chainrule.classes import LMS_INTERVAL, LMS_RETRY
from chainrule.classes.addresses import DEFAULT_PORT as ADDRESS_PORT
from chainrule.commands.arguments import Refused
from chainrule.commands.class_ import add_database_options, secret_on_command_line
from chainrule.turns import MAX_OPEN_PER_LEARNER

if TYPE_CHECKING:
    from fastapi import FastAPI

    from chainrule.classes.accounts import Accounts
    from chainrule.classes.graded_runs import GradedRuns
    from chainrule.classes.lti_scores import ScoreSender
    from chainrule.progress.connection import PostgresDatabase
    from chainrule.progress.store import ProgressStore

DEFAULT_PORT = ADDRESS_PORT


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
    parser.add_argument("--runs-per-learner", type=int, default=MAX_OPEN_PER_LEARNER, metavar="N",
                        help="how many runs one learner may have waiting or running; one more is refused at once "
                        f"(default {MAX_OPEN_PER_LEARNER})")
    parser.add_argument("--learner-storage", type=float, default=None, metavar="MB",
                        help="how much one learner may keep, in millions of characters of code, results and answers: "
                        "a progress file that would pass it is refused (default 64)")
    parser.add_argument("--lms-retry", type=float, default=LMS_RETRY, metavar="SECONDS",
                        help="a score the LMS did not take is sent again after this long, then twice as long each "
                        f"time, at most hourly (default {LMS_RETRY:g})")
    parser.add_argument("--lms-interval", type=float, default=LMS_INTERVAL, metavar="SECONDS",
                        help="how often the LMS score sender looks for changed work and sends the scores that are "
                        f"due (default {LMS_INTERVAL:g})")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="web processes answering on the port (default: one per core with PostgreSQL; "
                        "a class in SQLite has one)")
    parser.add_argument("--max-connections", type=int, default=None, metavar="N",
                        help="connections one web process keeps open; past 3/4 of it answers close theirs, past "
                        "it newcomers wait (default 4096, lowered to fit the open-files limit)")
    parser.add_argument("--static-dir", default=None, metavar="DIR",
                        help="also write the pages' fingerprinted static files (with .br and .gz forms) into DIR at "
                        "start, for a proxy to serve at /static/ (docs/classroom.md)")
    parser.add_argument("--db-pool", type=int, default=None, metavar="N",
                        help="with PostgreSQL: connections one web process opens at most, given back when idle "
                        "(default 10)")
    parser.add_argument("--db-reserve", type=int, default=None, metavar="N",
                        help="with PostgreSQL: connections left free for `chainrule worker` and the teacher's tools; "
                        "serve refuses to start if its web processes' pools would not leave them (default: one "
                        "worker host like this one, 8 per core, + 3)")
    parser.add_argument("--lessons", action="append", default=[], metavar="DIR",
                        help="the class's own lessons: a lesson folder or a folder of them (`chainrule lessons copy "
                        "DIR` makes a copy of the built-in ones to edit); one named as a built-in lesson takes its "
                        "place. Give every `chainrule worker` the same folder (repeatable)")
    add_database_options(parser)
    parser.set_defaults(func=run)


def class_runs(store: ProgressStore, args: argparse.Namespace) -> GradedRuns:
    """Where runs are graded, decided here once: a class in PostgreSQL queues them for `chainrule worker`;
    a class in SQLite grades them in this process. Either way one learner has --runs-per-learner open."""
    from chainrule.classes.graded_runs import InProcessRuns, QueuedRuns
    from chainrule.progress.connection import PostgresDatabase

    database = store.database
    if not isinstance(database, PostgresDatabase):
        from chainrule.classes.graded_runs import CLASS_WAITING_ROOM
        from chainrule.grading import configure_concurrency, gate

        # A class's runs wait their turn in the event loop (no thread each, at most a minute); the waiting room
        # of 4 that serves one person's `chainrule lesson` would turn a class's busy minute into "busy" answers.
        configure_concurrency(queue=max(gate().queue, CLASS_WAITING_ROOM))
        return InProcessRuns.for_class(store, per_learner=args.runs_per_learner)
    return QueuedRuns(store, database.url, deadline_seconds=args.run_deadline,
                      max_open=args.runs_per_learner)


def _add_lti(app: FastAPI, store: ProgressStore, accounts: Accounts, url: str, args: argparse.Namespace) -> ScoreSender:
    """The LTI tool's pages on the app (classes/lti.py), the thread that sends scores to the LMS, and single
    sign-on's pages (classes/sso.py)."""
    from chainrule.classes.lti_scores import ScoreSender
    from chainrule.classes.lti_services import LtiServices
    from chainrule.classes.sso import Sso
    from chainrule.commands.lti import tool
    from chainrule.web.routes_lti import add_lti
    from chainrule.web.routes_sso import add_sso

    for option, seconds in (("--lms-retry", args.lms_retry), ("--lms-interval", args.lms_interval)):
        if not seconds > 0:
            raise ValueError(f"{option} must be more than 0 seconds")
    lti = tool(args.data_dir, store, accounts, url)
    sender = ScoreSender(lti, LtiServices(lti), interval=args.lms_interval, retry_base=args.lms_retry)
    add_lti(app, lti, sender)
    add_sso(app, Sso(store, accounts, url, remote=lti.remote))
    return sender


@dataclass(frozen=True)
class Site:
    """Where the class is served: the address bound, the --url learners open, the Host names accepted."""

    bind_host: str
    url: str
    secure: bool
    hosts: list[str]
    public: tuple[str, int]


def run(args: argparse.Namespace) -> int:
    """Check the arguments, open the class, build its app and listen; then serve in this process or in
    --workers processes. Everything opened is closed by one ExitStack, whichever way the start ends."""
    from chainrule.commands.malloc_arenas import limit_malloc_arenas

    try:
        _check_arguments(args)
        limit_malloc_arenas()  # before any thread starts, and inherited by the web processes it forks
        site = _site(args)
        with contextlib.ExitStack() as closing:
            code = _serve_class(args, site, closing)
    except Refused as refused:
        print(refused.text("serve"), file=sys.stderr)
        return refused.code
    if code == 0:
        print("chainrule serve stopped.", flush=True)
    return code


def _check_arguments(args: argparse.Namespace) -> None:
    """Refused (2) for an argument that cannot be, before anything is opened."""
    refusal = secret_on_command_line(args.database)
    checks = [
        (not 1 <= args.port <= 65535, f"--port must be between 1 and 65535, not {args.port}"),
        (bool(refusal), refusal),
        (args.runs_per_learner < 1, f"--runs-per-learner must be 1 or more, not {args.runs_per_learner}"),
        (args.db_pool is not None and args.db_pool < 1, f"--db-pool must be 1 or more, not {args.db_pool}"),
        (args.db_reserve is not None and args.db_reserve < 0,
         f"--db-reserve must be 0 or more, not {args.db_reserve}"),
        (args.max_connections is not None and args.max_connections < 1,
         f"--max-connections must be 1 or more, not {args.max_connections}"),
    ]
    for wrong, message in checks:
        if wrong:
            raise Refused(str(message))


def _site(args: argparse.Namespace) -> Site:
    """The addresses of the class, from --host, --port, --url and --allow-host; Refused (2) if one cannot be."""
    from chainrule.classes.addresses import check_address
    from chainrule.commands.lesson import url_host
    from chainrule.commands.sandbox_policy import weak_sandbox_refusal
    from chainrule.errors import InputError
    from chainrule.loopback import is_loopback_bind
    from chainrule.web.security import split_host

    bind_host = args.host.strip().strip("[]")
    try:
        url = check_address(args.url) if args.url is not None else f"http://{url_host(bind_host)}:{args.port}"
    except InputError as error:
        raise Refused(str(error)) from None
    parts = urlsplit(url)
    parsed = split_host(parts.netloc)
    if parsed is None:
        raise Refused(f"--url must be an address like https://class.example.org, not {args.url!r}")
    if not is_loopback_bind(bind_host):
        refusal = weak_sandbox_refusal("serve", f"listen on {args.host}", "learners' code runs on this machine",
                                       "Fix the sandbox (docs/grading.md)", allowed=args.allow_weak_sandbox)
        if refusal:
            raise Refused(refusal, whole=True)
    # Host and Origin are checked with their port (a page on another port of this host is another origin):
    # the names this process listens as, on its own port, and the --url's host on the --url's port.
    hosts = [url_host(bind_host).lower(), *(name.lower() for name in args.allow_host)]
    public = (parsed[0], parsed[1] or (443 if parts.scheme == "https" else 80))
    return Site(bind_host, url, parts.scheme == "https", hosts, public)


def _serve_class(args: argparse.Namespace, site: Site, closing: contextlib.ExitStack) -> int:
    """Open the class and its app (checked before any web process starts), listen, and serve until stopped;
    the exit code."""
    from chainrule.commands.serve_processes import run_processes

    held = closing.enter_context(contextlib.ExitStack())  # what this process's app holds
    lessons = _load_lessons(args)  # before the store: a folder with a problem opens nothing
    store = _open_store(args, held)
    said = _record_lessons(store, lessons, args.lessons)
    _remember_address(store, site.url, given=args.url is not None)
    processes = _processes(args, store)
    app, runs, sender = _class_app(store, args, site, held)
    _static_files(args, shared=processes > 1)
    sock = closing.enter_context(_listening(site.bind_host, args))
    _say_running(store.where, runs.queued, processes, args.port, site.url, said)
    if processes == 1:
        _serve_app(app, sender, sock, args, held)
        return 0
    held.close()  # the children open their own connections and threads: nothing of this one crosses the fork
    del app, runs, sender, store

    def serve_one() -> int:
        with contextlib.ExitStack() as child:
            child_app, _, child_sender = _class_app(_open_store(args, child), args, site, child)
            _serve_app(child_app, child_sender, sock, args, child)
        return 0

    return 1 if run_processes(processes, serve_one) else 0


def _serve_app(app: FastAPI, sender: ScoreSender, sock: socket.socket, args: argparse.Namespace, closing: contextlib.ExitStack) -> None:
    """Send LMS scores and answer on ``sock`` until stopped (the sender stopped by ``closing``)."""
    from chainrule.commands.serve_processes import serve_on

    sender.start()
    closing.callback(sender.stop)
    serve_on(app, sock, **_server_options(args))


def _processes(args: argparse.Namespace, store: ProgressStore) -> int:
    """How many web processes serve the class; Refused (2) if the number asked for cannot be."""
    from chainrule.progress.connection import PostgresDatabase

    processes = _process_count(args, store.database.dialect)
    database = store.database
    if isinstance(processes, int) and isinstance(database, PostgresDatabase):
        processes = _over_budget(database, processes, args) or processes
    if isinstance(processes, str):
        raise Refused(processes)
    return processes


def _load_lessons(args: argparse.Namespace) -> str:
    """The class's lessons added (--lessons), checked; their hash. Refused (2) for a folder with a problem."""
    from chainrule.classes.class_lessons import LessonsRefused, load_lessons

    try:
        return load_lessons(args.lessons)
    except LessonsRefused as error:
        raise Refused(str(error)) from error


def _record_lessons(store: ProgressStore, lessons: str, folders: list[str]) -> list[str]:
    """The class database records what this server serves; the lines that say so (and a change since the last
    start)."""
    from chainrule.classes.class_lessons import record_lessons
    from chainrule.lessons.fingerprint import short_hash
    from chainrule.progress import StoreError

    try:
        before = record_lessons(store, lessons, folders)
    except StoreError as error:
        raise Refused(str(error), code=1) from error
    where = ", ".join(folders) or "the built-in lessons"
    lines = [f"The class's lessons: {where} (lessons {short_hash(lessons)})."]
    if before is not None and before.hash != lessons:
        lines.append(f"They changed since the last start (lessons {short_hash(before.hash)} before): start every "
                     "`chainrule worker` with the same --lessons; a run is graded only with the lessons it was "
                     "accepted with.")
    return lines


def _remember_address(store: ProgressStore, url: str, *, given: bool) -> None:
    """The classes remember where they are served (classes/addresses.py), for `chainrule class`'s links."""
    from chainrule.classes.addresses import served_at
    from chainrule.progress import StoreError

    try:
        served_at(store, url, given=given)
    except StoreError as error:
        raise Refused(str(error), code=1) from error


def _open_store(args: argparse.Namespace, closing: contextlib.ExitStack) -> ProgressStore:
    from chainrule.classes import open_class_store
    from chainrule.progress import StoreError

    try:
        store = open_class_store(args.data_dir, args.database, pool_size=args.db_pool)
    except StoreError as error:
        raise Refused(str(error), code=1) from error
    closing.callback(store.close)
    return store


def _class_app(store: ProgressStore, args: argparse.Namespace, site: Site,
               closing: contextlib.ExitStack) -> tuple[FastAPI, GradedRuns, ScoreSender]:
    """The class app on ``store`` and its LTI score sender, their runs closed by ``closing``; Refused (1)
    if the store or an option refuses."""
    from chainrule.classes.accounts import Accounts
    from chainrule.progress import StoreError
    from chainrule.web.routes_class import create_class_app

    runs = class_runs(store, args)
    closing.callback(runs.close)
    try:
        quota = {} if args.learner_storage is None else {"learner_quota": int(args.learner_storage * 1_000_000)}
        if quota and quota["learner_quota"] <= 0:
            raise ValueError("--learner-storage must be more than 0 (millions of characters)")
        accounts = Accounts(store)
        app = create_class_app(store, accounts=accounts, runs=runs, secure=site.secure, hosts=site.hosts,
                               port=args.port, public=site.public, **quota)
        return app, runs, _add_lti(app, store, accounts, site.url, args)
    except (StoreError, ValueError) as error:
        raise Refused(str(error), code=1) from error


def _static_files(args: argparse.Namespace, shared: bool) -> None:
    """Compress the static files now when several web processes will share the result (they fork from this
    one); one web process compresses each file when it is first asked for."""
    from chainrule.web.static_files import static_bundle

    if shared:
        static_bundle().precompress()
    if args.static_dir:
        try:
            static_bundle().write(args.static_dir)
        except OSError as error:
            raise Refused(f"cannot write the static files into {args.static_dir}: {error.strerror or error}. "
                          "Give --static-dir a folder this user may write.", code=1) from error


def _listening(bind_host: str, args: argparse.Namespace) -> socket.socket:
    family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((bind_host, args.port))
        sock.listen(128)
    except OSError as error:
        sock.close()
        raise Refused(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}. "
                      "Choose another --port or --host.", code=1) from error
    return sock


def _say_running(where: str, queued: bool, processes: int, port: int, url: str, lessons: list[str]) -> None:
    print(f"chainrule serve is running for the classes in {where}.", flush=True)
    for line in lessons:
        print(f"    {line}", flush=True)
    if processes > 1:
        print(f"    {processes} web processes answer on port {port}.", flush=True)
    if queued:
        print("    Graded runs wait in the class database for `chainrule worker --database URL`.", flush=True)
    print(f"    Learners and teacher sign in at {url}/sign-in", flush=True)
    print("Press Ctrl+C to stop.", flush=True)


def _server_options(args: argparse.Namespace) -> dict:
    """uvicorn's options of a class's web process: behind a proxy on this machine, the client address (for
    sign-in limits) comes from X-Forwarded-For; --max-connections."""
    return {"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1,::1", "max_connections": args.max_connections}


def _process_count(args: argparse.Namespace, dialect: str) -> int | str:
    """How many web processes to run, or why the number asked for cannot be."""
    from chainrule.commands.serve_processes import default_process_count

    if args.workers is not None and args.workers < 1:
        return f"--workers must be 1 or more, not {args.workers}"
    if dialect == "postgresql":
        return args.workers or default_process_count()
    if (args.workers or 1) > 1:
        return (f"--workers {args.workers} needs the class in PostgreSQL (--database URL, docs/classroom.md). "
                "With SQLite, runs are graded inside the web process, at most as many at once as this machine "
                "has cores, and one process is what keeps that bound and SQLite's one writer at a time; the "
                "pages themselves (static files, sign-in in its own pool) already hold about 100 learners "
                "(docs/performance.md). Use --workers 1 here, or move the class to PostgreSQL with "
                "`chainrule worker` processes grading for it.")
    return 1


def _over_budget(database: PostgresDatabase, processes: int, args: argparse.Namespace) -> str | None:
    """Why the web processes' connection pools do not fit in what PostgreSQL allows (commands/connection_budget.py)."""
    from chainrule.commands.connection_budget import default_reserve, serve_budget, server_limit
    from chainrule.commands.serve_processes import default_process_count

    try:
        limit = server_limit(database.url)
    except Exception:  # the store opened a moment ago: an error here is said by the next step that needs it
        return None
    reserve = args.db_reserve if args.db_reserve is not None else default_reserve(default_process_count())
    return serve_budget(limit, processes, database.pool_size, reserve)
