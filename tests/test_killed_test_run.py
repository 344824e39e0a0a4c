"""A killed test run ends what it started (tests/reaper.py): a real pytest, in a process of its own, starts a
real `chainrule serve` on a real throwaway PostgreSQL cluster, says what it started, and is killed with SIGKILL
(no teardown runs); every process it started ends, and the cluster's folder is deleted."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reaper import descendants, session_and_descendants, spawn

TESTS = Path(__file__).resolve().parent
HANG_SECONDS = 120  # only to catch a hang: the processes end on the watchdog's kill, which the test waits on
START_HANG_SECONDS = 480  # only to catch a hang: the inner run says when it has started

INNER = textwrap.dedent("""
    import json
    import os
    import threading
    from pathlib import Path

    from class_process import ClassServer
    from postgres_cluster import throwaway_cluster


    def test_starts_a_server_on_a_cluster_then_waits_to_be_killed(tmp_path):
        with throwaway_cluster() as url:
            server = ClassServer.start(tmp_path, database=url)
            folder = url.split("host=")[1]
            postmaster = int((Path(folder) / "data" / "postmaster.pid").read_text().split()[0])
            with open(os.environ["STARTED_FIFO"], "w") as said:
                said.write(json.dumps({"test_process": os.getpid(), "server": server.process.pid,
                                       "postmaster": postmaster, "folder": folder}))
            threading.Event().wait()  # until killed
""")
# How the inner run is started: as one pytest process, or with one xdist worker (whose process is killed).
HOW = {"the pytest process": [], "an xdist worker": ["-p", "xdist", "-n", "1"]}


def what_it_started(fifo: Path, inner: subprocess.Popen) -> tuple[dict, set[int]]:
    """What the inner run says it started, and every process it started: the server's and the cluster's,
    with their children, and the test process's own children (its watchdog). Waits on events: the inner test
    writing to the FIFO, or the inner run ending first."""
    reader, ended = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK), os.pidfd_open(inner.pid)
    text = b""
    try:
        while True:
            ready, _, _ = select.select([reader, ended], [], [], START_HANG_SECONDS)
            assert ready, "the inner run neither started its server nor ended"
            if reader in ready:
                try:
                    chunk = os.read(reader, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    break  # the inner test wrote it all and closed the FIFO
                text += chunk
            elif ended in ready:
                pytest.fail(f"the inner run ended (exit status {inner.wait()}) before it started its server")
    finally:
        os.close(reader)
        os.close(ended)
    started = json.loads(text)
    started_by_it = (session_and_descendants(started["server"]) | session_and_descendants(started["postmaster"])
                     | set(descendants(started["test_process"])))
    assert started["server"] in started_by_it and started["postmaster"] in started_by_it
    assert len(started_by_it) > 4  # the server, the postmaster and its own processes, the watchdog
    return started, started_by_it


@pytest.mark.timeout(600)
@pytest.mark.parametrize("killed", HOW)
def test_a_killed_pytest_leaves_no_server_and_no_postgresql_cluster_running(tmp_path: Path, killed: str) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")
    from postgres_cluster import postgres_bin

    if postgres_bin() is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed")
    (tmp_path / "test_inner.py").write_text(INNER)
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    # Only the plugins the inner run needs (the reaper, and xdist for its worker): the others this environment
    # installs (hypothesis, schemathesis, anyio...) would cost each inner process seconds of start-up.
    env = dict(os.environ, STARTED_FIFO=str(fifo), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    inner = spawn([sys.executable, "-m", "pytest", "-p", "reaper", "-p", "no:cacheprovider", "-q", *HOW[killed],
                   "test_inner.py"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = None
    try:
        started, started_by_it = what_it_started(fifo, inner)
        handles = {}
        for pid in started_by_it:
            try:
                handles[pid] = os.pidfd_open(pid)
            except ProcessLookupError:
                pass  # a short-lived helper (pg_ctl) already gone
    finally:
        if started:
            os.kill(started["test_process"], signal.SIGKILL)  # as kill -9 does
        elif inner.poll() is None:  # it failed to start: the whole inner run goes
            os.killpg(inner.pid, signal.SIGKILL)

    waiting = dict(handles)
    while waiting:
        ended, _, _ = select.select(list(waiting.values()), [], [], HANG_SECONDS)
        assert ended, f"still running after the kill: {sorted(waiting)}"
        for pid in [pid for pid, handle in waiting.items() if handle in ended]:
            os.close(waiting.pop(pid))
    assert not Path(started["folder"]).exists()  # the watchdog ended last, after deleting the cluster's folder
    inner.wait(timeout=HANG_SECONDS)  # the killed pytest, or the main one, which goes on without its worker
