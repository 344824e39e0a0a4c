"""Fixtures shared by the whole suite.

One real Chromium for every test that needs a browser: Playwright's sync API allows a single running instance
per thread, so the browser tests and the picture tests must share this session-wide one.
"""

from __future__ import annotations

import shutil

import pytest

# Grading knows exercise folders, not lessons: importing chainrule.lessons registers the built-in lessons'
# exercise folders, so that every test can grade them by id.
import chainrule.lessons  # noqa: F401,E402

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("no `chromium` executable on PATH: the real-browser tests need Chromium (apt-get install chromium)")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


# ------------------------------------------------------------------ PostgreSQL

POSTGRES_BIN_DIRS = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin")


def _postgres_bin() -> "Path | None":
    from pathlib import Path

    for folder in POSTGRES_BIN_DIRS:
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


@pytest.fixture(scope="session")
def postgres_cluster():
    """A throwaway PostgreSQL cluster for the session: initdb as an unprivileged user (PostgreSQL refuses
    to run as root), trust authentication, listening only on a Unix socket in a temporary folder that
    user owns; stopped and deleted at the end. Yields the URL of its `postgres` database."""
    import os
    import pwd
    import subprocess
    import tempfile

    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql; see scripts/system-deps.sh)")
    folder = tempfile.mkdtemp(prefix="chainrule-pg-")
    run_as: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("nobody")
        os.chown(folder, user.pw_uid, user.pw_gid)
        run_as = ["runuser", "-u", "nobody", "--"]
    data, log = os.path.join(folder, "data"), os.path.join(folder, "log")

    def run(*command: str) -> None:
        done = subprocess.run([*run_as, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}{done.stderr}")

    run(str(bin_dir / "initdb"), "-D", data, "-U", "chainrule", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = f"-k {folder} -c listen_addresses='' -c fsync=off -c max_connections=200"
    run(str(bin_dir / "pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "start")
    try:
        yield f"postgresql://chainrule@/postgres?host={folder}"
    finally:
        subprocess.run([*run_as, str(bin_dir / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)


def new_postgres_schema(cluster_url: str) -> str:
    """A URL whose connections see a fresh, empty schema of the cluster (a schema per store is much
    faster than a database per store, and just as separate)."""
    import uuid

    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(cluster_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{cluster_url}&options=-csearch_path%3D{name}"


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
    """The eager moons demo with every default (100 points, MLP(2, [16, 16, 1]), 100 steps), trained ONCE
    per session by the real CLI in a process of its own (`chainrule train moons --json --plot`): its JSON
    document (config, the whole learning curve, the final evaluation) plus "plot_file", the picture written.
    A clean process (no torch imported) trains about twice as fast as this one would (docs/performance.md)."""
    import json
    import subprocess
    import sys

    plot = tmp_path_factory.mktemp("moons") / "moons.png"
    result = subprocess.run([sys.executable, "-m", "chainrule", "train", "moons", "--json", "--plot", str(plot)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return {**json.loads(result.stdout), "plot_file": plot}
@pytest.fixture(scope="session")
def grade_once():
    """grade(exercise, language, source) that grades each distinct (exercise folder, language, source) once
    per session: the reference solutions and starters are checked by test_grading, test_lessons_path and
    the lessons-check tests, and one real sandbox run each is enough. Each call gets its own copy."""
    import copy

    from chainrule.grading import grade
    from chainrule.grading.registry import resolve

    results: dict[tuple[str, str, str], dict] = {}

    def graded(exercise, language: str, source: str) -> dict:
        key = (str(resolve(exercise).folder.resolve()), language, source)
        if key not in results:
            results[key] = grade(exercise, language, source)
        return copy.deepcopy(results[key])

    return graded
