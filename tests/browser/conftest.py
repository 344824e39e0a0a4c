"""Fixtures for the real-browser tests: the real `chainrule lesson` server and a real Chromium.

The server runs as `python -m chainrule lesson --no-browser --port P --data-dir D` in a subprocess with a
temporary data dir; the token comes from the URL it prints. Chromium is driven by Playwright for Python;
the tests skip (with the reason) only when no `chromium` executable is on PATH. The `browser` and
`chromium_path` fixtures live in tests/conftest.py, shared with the other tests that need Chromium.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import pytest

from reaper import spawn

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
URL_PATTERN = re.compile(r"(http://(?:127\.0\.0\.1|localhost):\d+/\S*token=[\w\-.~%]+)")
STARTUP_SECONDS = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LessonServer:
    """A running `chainrule lesson` process."""

    process: subprocess.Popen
    url: str  # the printed URL, token included
    data_dir: Path
    output: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def token(self) -> str:
        match = re.search(r"token=([^&#]+)", self.url)
        assert match, self.url
        return match.group(1)


def start_lesson_server(data_dir: Path, port: int | None = None, *, remembered_port: bool = False,
                        extra_args: tuple[str, ...] | list[str] = ()) -> LessonServer:
    """Start the real server (on `port`, else a free one) and wait until it prints its URL (with the token).
    remembered_port: start it as a learner does, without --port (the data folder's port, or the default)."""
    command = [sys.executable, "-m", "chainrule", "lesson", "--no-browser", "--data-dir", str(data_dir)]
    if not remembered_port:
        command += ["--port", str(port or free_port())]
    command += list(extra_args)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = spawn(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO)
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read_output() -> None:  # keep draining the pipe so the server never blocks on a full pipe
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            match = URL_PATTERN.search(line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read_output, daemon=True).start()
    if not ready.wait(STARTUP_SECONDS) or not found:
        stop_lesson_server(process)
        raise RuntimeError(f"`{' '.join(command)}` printed no URL with a token:\n{''.join(lines)}")
    server = LessonServer(process=process, url=found[0], data_dir=data_dir, output=lines)
    wait_until_listening(server)
    return server


def wait_until_listening(server: LessonServer) -> None:
    parts = urlsplit(server.url)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((parts.hostname, parts.port), timeout=1):
                return
        except OSError:
            if server.process.poll() is not None:
                raise RuntimeError("the lesson server exited:\n" + "".join(server.output)) from None
            time.sleep(0.1)
    raise RuntimeError("the lesson server did not start listening in time")


def kill_lesson_server(server: LessonServer) -> None:
    """Kill the server at once by its process id (no clean shutdown), as a crash or a closed terminal would."""
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=10)


def stop_lesson_server(process: subprocess.Popen) -> None:
    """Stop the server we started (its own process group, by id)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def answered_days_ago(data_dir: Path, days: int, *answers: tuple[str, str, str, bool]) -> None:
    """Store answers (lesson, question, answer, right) as given `days` ago, in the data folder a server is then
    started on: a question answered ten days ago or more is due in review."""
    from datetime import datetime, timedelta, timezone

    from chainrule.progress import open_store

    past = datetime.now(timezone.utc) - timedelta(days=days)
    store = open_store(data_dir=data_dir, clock=lambda: past)
    try:
        for answer in answers:
            store.answer_question(*answer)
    finally:
        store.close()


@pytest.fixture(scope="session")
def lesson_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LessonServer]:
    data_dir = tmp_path_factory.mktemp("chainrule-data")
    server = start_lesson_server(data_dir)
    try:
        yield server
    finally:
        stop_lesson_server(server.process)


@pytest.fixture(scope="module")
def due_review_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LessonServer]:
    """A server for a module's tests whose store has one question due for review (backprop's product-gradient,
    answered ten days ago: its first interval is a few days) and nothing else."""
    data_dir = tmp_path_factory.mktemp("due-review")
    answered_days_ago(data_dir, 10, ("backprop", "product-gradient", "6", True))
    server = start_lesson_server(data_dir)
    try:
        yield server
    finally:
        stop_lesson_server(server.process)


@pytest.fixture(scope="session")
def walk_server(tmp_path_factory: pytest.TempPathFactory):
    """walk_server(size): the server the walks of every step and gate at one size (lesson_walk.py) share on this
    worker, started when the first of them asks (about 1.5 s of CPU each): each walk file walks lessons of its own
    (a fifth of them), so no lesson is walked twice on one server, as one file already walks several in turn."""
    started: dict[str, LessonServer] = {}

    def server_for(size: str) -> LessonServer:
        if size not in started:
            started[size] = start_lesson_server(tmp_path_factory.mktemp(f"walk-{size}"))
        return started[size]

    yield server_for
    for server in started.values():
        stop_lesson_server(server.process)


@pytest.fixture(scope="session")
def audited_states(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the parts' states axe-core has audited and passed in this test run (path_walk.AuditedStates),
    one for all the workers (parallel.run_folder)."""
    from parallel import run_folder

    folder = run_folder(tmp_path_factory) / "axe-audited"
    folder.mkdir(exist_ok=True)
    return folder


class RequestLog:
    """Every URL the page requested, to check that nothing leaves the local server."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.page_errors: list[str] = []  # uncaught exceptions in the page's scripts

    def outside(self, origin: str) -> list[str]:
        return [url for url in self.urls if not (url.startswith(origin + "/") or url == origin or url.startswith("data:"))]


def new_page(browser, server: LessonServer, *, width: int = 1280, height: int = 900, bypass_csp: bool = False,
             wait_until: str = "load", **context_options):
    """A fresh context (cookies empty) holding the session cookie, and its request log.
    bypass_csp lets a test inject a script (axe-core) that the page's Content Security Policy blocks;
    wait_until is Playwright's goto option for the sign-in page: "commit" when the test goes on to a page of
    its own and waits for what it needs there (the cookie is set by the response's headers, so it is there at
    "commit"); context_options go to Playwright's new_context (reduced_motion="reduce", say)."""
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=bypass_csp, **context_options)
    context.set_default_timeout(20_000)
    log = RequestLog()
    context.on("request", lambda request: log.urls.append(request.url))
    page = context.new_page()
    page.on("pageerror", lambda error: log.page_errors.append(str(error)))
    page.goto(server.url, wait_until=wait_until)  # the printed URL sets the `chainrule_token` cookie
    return context, page, log


@pytest.fixture()
def open_page(browser):
    """open_page(server, width=..., height=..., wait_until=...) -> (context, page, request log); contexts close
    after the test."""
    contexts = []

    def open_(server: LessonServer, **options):
        context, page, log = new_page(browser, server, **options)
        contexts.append(context)
        return context, page, log

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture(scope="module")
def page_per_size(browser):
    """page_per_size(server, size, **options) -> (context, page, request log): one signed-in page per server, size
    (of WIDTHS) and options for the module's tests, instead of a page per test: a new page costs Chromium a
    renderer of its own (about 1 s of CPU). Each test loads its own address afresh (an address that differs only
    after `#` is not a new load); the page is given back at its size, the mouse off every element, its request
    log emptied. Contexts close after the module."""
    opened: dict[tuple, tuple] = {}

    def open_(server: LessonServer, size: str, **options):
        key = (server.url, size, tuple(sorted(options.items())))
        width, height = WIDTHS[size]
        if key not in opened:
            opened[key] = new_page(browser, server, width=width, height=height, wait_until="commit", **options)
        context, page, log = opened[key]
        page.set_viewport_size({"width": width, "height": height})
        page.mouse.move(0, 0)
        log.urls.clear()
        log.page_errors.clear()
        return context, page, log

    yield open_
    for context, _page, _log in opened.values():
        context.close()


@pytest.fixture()
def server_factory(tmp_path_factory: pytest.TempPathFactory):
    """server_factory(data_dir) starts one more real server (stopped after the test)."""
    started: list[LessonServer] = []

    def start(data_dir: Path, port: int | None = None, **options) -> LessonServer:
        server = start_lesson_server(data_dir, port, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        stop_lesson_server(server.process)


KEEP_SCREENSHOTS = "CHAINRULE_SCREENSHOTS"  # set to 1: the tests save their pictures of pages for people to look at


def keep_screenshot(target, name: str, **options) -> None:
    """A picture of a page or an element (Playwright's screenshot options), saved as SCREENSHOTS/name when the
    environment asks for pictures (CHAINRULE_SCREENSHOTS=1), for a person to look at: no test reads or compares
    them, and each costs Chromium CPU (a full page about 1.3 s), so a run that does not ask takes none."""
    if os.environ.get(KEEP_SCREENSHOTS) == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        target.screenshot(path=str(SCREENSHOTS / name), **options)


# The two screen widths every behaviour is tested at: a desktop and a phone (390 px, an iPhone 12-15).
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}

AXE = Path(__file__).parent / "vendor" / "axe.min.js"  # axe-core, vendored (see vendor/README.md)
AXE_VERSION = "4.14.1"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


# axe-core run in the page on a context (a node, the document, or {include, exclude}: lists of nodes), its
# violations, each {"id", "impact", "help", "targets"}: what axe_violations and path_walk.StateChecks report.
AXE_AUDIT = """async ([context, tags]) => (await window.axe.run(context,
    {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})).violations.map((v) =>
    ({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target).slice(0, 5)}))"""
SERIOUS = ("serious", "critical")


def load_axe(page) -> None:
    """Put axe-core in the page (once per page load); the page's context needs bypass_csp=True."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.add_script_tag(path=str(AXE))
    assert page.evaluate("() => window.axe.version") == AXE_VERSION


def axe_violations(page, impacts: tuple[str, ...] = SERIOUS, within: str | None = None) -> list[dict]:
    """Run axe-core (WCAG 2.1 A and AA rules) on the page (or only on the element `within` selects); the
    violations of the given impacts, each {"id", "impact", "help", "targets"}. The page's context needs
    bypass_csp=True."""
    load_axe(page)
    found = page.evaluate(
        f"([within, tags]) => ({AXE_AUDIT})([within ? document.querySelector(within) : document, tags])",
        [within, WCAG_TAGS],
    )
    return [violation for violation in found if violation["impact"] in impacts]


@contextmanager
def class_with_worker(folder: Path, database: str | None, class_name: str, worker: bool = True):
    """A running `chainrule serve` (class_process.ClassServer) and, for a class in PostgreSQL, whose runs are
    queued, a `chainrule worker` that grades them (unless ``worker`` is False); both stopped at the end."""
    from class_pages import start_worker

    from class_process import ClassServer

    started = ClassServer.start(folder, database, class_name=class_name)
    grader = start_worker(started.env) if database and worker else None
    try:
        yield started
    finally:
        if grader is not None:
            stop_lesson_server(grader)
        started.stop()


def module_database(request) -> str | None:
    """A PostgreSQL schema of its own for a module's server, or None (no PostgreSQL here: SQLite)."""
    try:
        from postgres_cluster import new_postgres_schema

        return new_postgres_schema(request.getfixturevalue("postgres_cluster"))
    except pytest.skip.Exception:
        return None


@pytest.fixture
def class_server(request, tmp_path):
    """(base URL, teacher link, invite link, environment) of a running `chainrule serve` of this test's own (on
    PostgreSQL when the session has it, else SQLite in the data folder), for a test that stops its database or
    its worker; tests that only use a class take one on the module's server (own_class)."""
    from class_pages import class_database

    worker = not request.node.get_closest_marker("no_worker")
    with class_with_worker(tmp_path, class_database(request), "Browser class", worker) as server:
        yield server.base, server.teacher_link, server.invite, server.env


@pytest.fixture(scope="module")
def module_class_server(request, tmp_path_factory):
    """One `chainrule serve` (and, on PostgreSQL, a worker) for a module's tests, each in a class of its own."""
    with class_with_worker(tmp_path_factory.mktemp("class-page"), module_database(request), "Browser class") as server:
        yield server


@pytest.fixture(scope="module")
def due_dates_server(request, tmp_path_factory):
    """One `chainrule serve` (and, on PostgreSQL, a worker) for a module of due-date tests."""
    with class_with_worker(tmp_path_factory.mktemp("deadlines-page"), module_database(request), "Due dates") as server:
        yield server


CLASSES = itertools.count(1)


@pytest.fixture
def own_class(module_class_server):
    """(base URL, teacher link, invite link, environment), as class_server gives, of a class of this test's own
    on the module's server (`chainrule class create`)."""
    view = module_class_server.add_class(f"Browser class {next(CLASSES)}")
    return view.base, view.teacher_link, view.invite, view.env


@pytest.fixture
def due_class(due_dates_server):
    """The module's due-dates server, seen through a class of this test's own."""
    return due_dates_server.add_class(f"Due dates {next(CLASSES)}")
