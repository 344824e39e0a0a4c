"""Fixtures shared by the whole suite.

One real Chromium for every test that needs a browser: Playwright's sync API allows a single running instance
per thread, so the browser tests and the picture tests must share this session-wide one.
"""

from __future__ import annotations

import gc
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from chainrule.lessons import register_exercises
from doc_blocks import README_TRAINING, docs_environment
from parallel import refuse_shared_node_ids
from postgres_cluster import new_postgres_schema
from reaper import adopt_descendants, pytest_configure, pytest_unconfigure  # noqa: F401 (hooks: a watchdog ends what a killed run started)
from rewrite_ahead import rewrite_ahead

pytest_plugins = ["time_budgets"]  # time per test file, and its budget (tests/time_budgets.py)

# Grading knows exercise folders, not lessons: the built-in lessons' exercises are registered once, so that
# every test can grade them by id (as the web app and the commands that grade do).
register_exercises()

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# The tests drive Chromium's headless shell (Debian's chromium-headless-shell: the same Chromium release, Blink
# and V8, built without the desktop browser's window and tab machinery; Playwright's own choice for headless
# runs). A fresh page costs about two fifths of the CPU time it costs in the full `chromium` (docs/performance.md, "The
# browser tests' Chromium"). The full `chromium`, the browser a learner opens, runs the accessibility audit of
# every page (desktop_chromium). Without the shell, every test falls back to `chromium`; so does
# CHAINRULE_TEST_BROWSER=chromium, to run them all in the full browser.
HEADLESS_SHELL = "chromium-headless-shell"
NO_CHROMIUM = "no `chromium` executable on PATH: the real-browser tests need Chromium (apt-get install chromium)"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which(os.environ.get("CHAINRULE_TEST_BROWSER", HEADLESS_SHELL)) or shutil.which("chromium")
    if path is None:
        pytest.skip(NO_CHROMIUM)
    return path


@pytest.fixture(scope="session")
def playwright_driver():
    """Playwright's one driver for this process (a thread runs one sync driver at a time), for every browser."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    with sync_api.sync_playwright() as playwright:
        yield playwright


@contextmanager
def launched(playwright_driver, executable: str) -> Iterator[object]:
    """A Chromium started by Playwright from this executable, closed at the end."""
    browser = playwright_driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    adopt_descendants()  # Playwright's driver and Chromium, ended by the watchdog if this process is killed
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def browser(playwright_driver, chromium_path: str):
    with launched(playwright_driver, chromium_path) as browser:
        yield browser


@pytest.fixture(scope="module")
def desktop_chromium(playwright_driver):
    """The full `chromium` (the browser `chainrule lesson` opens for a learner), for one module."""
    path = shutil.which("chromium")
    if path is None:
        pytest.skip(NO_CHROMIUM)
    with launched(playwright_driver, path) as browser:
        yield browser


def pytest_collection_modifyitems(config, items) -> None:
    refuse_shared_node_ids(items)


def pytest_collection_finish(session) -> None:
    """What collection built (every test module, the libraries they import, the items: hundreds of thousands of
    objects, alive until the run ends) moved out of the garbage collector's sight: its full collections during
    the tests, and pytest's at the end, no longer walk them each time (about 0.7 s of CPU per 500 tests).
    Everything a test creates is collected as before."""
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session) -> None:
    """Before pytest-xdist starts its workers (each collects every test module): the modules' asserts
    rewritten once, by the controller (tests/rewrite_ahead.py)."""
    rewrite_ahead(session.config)


# ------------------------------------------------------------------ PostgreSQL

@pytest.fixture(scope="session")
def postgres_cluster():
    """A throwaway PostgreSQL cluster for the session (postgres_cluster.py); yields the URL of its
    `postgres` database."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")
    from postgres_cluster import ClusterUnavailable, throwaway_cluster

    try:
        cluster = throwaway_cluster()
        url = cluster.__enter__()
    except ClusterUnavailable as missing:
        pytest.skip(str(missing))
    try:
        yield url
    finally:
        cluster.__exit__(None, None, None)


@pytest.fixture
def postgres_url(postgres_cluster: str) -> str:
    """A fresh, empty PostgreSQL schema for this test, as a URL."""
    return new_postgres_schema(postgres_cluster)


STORE_BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=STORE_BACKENDS)
def store_place(request, tmp_path):
    """Run the test once per store backend. ``store_place("name")`` gives open_store's keyword arguments
    for a database of that name: a folder in tmp_path, or a fresh PostgreSQL schema (the same name gives
    the same database again, for tests that close and reopen)."""
    places: dict[str, dict] = {}

    def place(name: str = "store") -> dict:
        if name not in places:
            if request.param == "sqlite":
                places[name] = {"data_dir": tmp_path / name}
            else:
                places[name] = {"database": new_postgres_schema(request.getfixturevalue("postgres_cluster"))}
        return places[name]

    place.backend = request.param
    return place


@pytest.fixture(scope="session")
def default_moons_run(tmp_path_factory) -> dict:
    """The eager moons demo with every default (100 points, MLP(2, [16, 16, 1]), 100 steps), trained ONCE per
    test run (parallel.once_per_run: one worker trains, the others read) by the real CLI in a process of its
    own: the README's `chainrule train moons --plot moons.png`, as a doc's console example runs, with its
    `--json` document recorded beside it (tests/moons_run.py). Its JSON document (config, the whole learning
    curve, the final evaluation), plus "plot_file", the picture written, and "printed", what the command
    printed (tests/test_docs.py compares it with the README). A clean process (no torch imported) trains
    about twice as fast as this one would (docs/performance.md)."""
    import json
    import shlex
    import sys

    from parallel import once_per_run
    from reaper import run_in_a_session

    def train(folder) -> None:
        argv = shlex.split(README_TRAINING)
        assert argv[:3] == ["chainrule", "train", "moons"], argv
        result = run_in_a_session([sys.executable, str(Path(__file__).with_name("moons_run.py")), "moons.json",
                                   *argv[3:]], timeout=600, cwd=folder, env=docs_environment(folder))
        assert result.returncode == 0, result.stderr
        (folder / "printed.txt").write_text(result.stdout + result.stderr)

    folder = once_per_run(tmp_path_factory, "default-moons-run", train)
    return {**json.loads((folder / "moons.json").read_text()), "plot_file": folder / "moons.png",
            "printed": (folder / "printed.txt").read_text()}


@pytest.fixture(scope="session")
def grade_once(tmp_path_factory):
    """grade(exercise, language, source) that grades each distinct (exercise folder, language, source) once
    per test run, whatever the number of workers (parallel.once_per_run: the first worker that asks grades,
    the others read its result): the reference solutions and starters are checked by test_grading,
    test_lessons_path, test_lessons_six, test_typescript_check and the lessons-check tests, and one real
    sandbox run each is enough. Each call gets its own copy (read from the result's JSON)."""
    import hashlib
    import json

    from chainrule.grading import grade
    from chainrule.grading.registry import resolve
    from parallel import once_per_run

    def graded(exercise, language: str, source: str) -> dict:
        key = json.dumps([str(resolve(exercise).folder.resolve()), [c.name for c in resolve(exercise).cases], language, source])
        name = "graded-" + hashlib.sha256(key.encode()).hexdigest()[:32]

        def run(folder) -> None:
            (folder / "result.json").write_text(json.dumps(grade(exercise, language, source)))

        return json.loads((once_per_run(tmp_path_factory, name, run) / "result.json").read_text())

    return graded
