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

INNER = textwrap.dedent("""
    import json
    import threading
    from pathlib import Path

    from class_process import ClassServer
    from postgres_cluster import throwaway_cluster


    def test_starts_a_server_on_a_cluster_then_waits_to_be_killed(tmp_path):
        with throwaway_cluster() as url:
            server = ClassServer.start(tmp_path, database=url)
            folder = url.split("host=")[1]
            postmaster = int((Path(folder) / "data" / "postmaster.pid").read_text().split()[0])
            print("STARTED", json.dumps({"server": server.process.pid, "postmaster": postmaster,
                                         "folder": folder}), flush=True)
            threading.Event().wait()  # until killed
""")


def what_it_started(inner: subprocess.Popen) -> tuple[dict, set[int]]:
    """What the inner run says it started, and every process it started: the server's and the cluster's,
    with their children, and the inner run's own children (its watchdog)."""
    seen = []
    for line in inner.stdout:
        seen.append(line)
        if line.startswith("STARTED"):
            break
    else:
        pytest.fail("the inner run ended before it started its server: " + "".join(seen))
    started = json.loads(line.split(" ", 1)[1])
    started_by_it = (session_and_descendants(started["server"]) | session_and_descendants(started["postmaster"])
                     | set(descendants(inner.pid)))
    assert started["server"] in started_by_it and started["postmaster"] in started_by_it
    assert len(started_by_it) > 4  # the server, the postmaster and its own processes, the watchdog
    return started, started_by_it


@pytest.mark.timeout(600)
def test_a_killed_pytest_leaves_no_server_and_no_postgresql_cluster_running(tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")
    from postgres_cluster import postgres_bin

    if postgres_bin() is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed")
    (tmp_path / "test_inner.py").write_text(INNER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    inner = spawn([sys.executable, "-m", "pytest", "-p", "reaper", "-p", "no:cacheprovider", "-s", "-q",
                   "test_inner.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                  text=True)
    try:
        started, started_by_it = what_it_started(inner)
        handles = {}
        for pid in started_by_it:
            try:
                handles[pid] = os.pidfd_open(pid)
            except ProcessLookupError:
                pass  # a short-lived helper (pg_ctl) already gone
    finally:
        os.kill(inner.pid, signal.SIGKILL)  # as a kill -9 does; on a failure above, too: it must not stay
        assert inner.wait(timeout=HANG_SECONDS) == -signal.SIGKILL
        inner.stdout.close()

    waiting = dict(handles)
    while waiting:
        ended, _, _ = select.select(list(waiting.values()), [], [], HANG_SECONDS)
        assert ended, f"still running after the kill: {sorted(waiting)}"
        for pid in [pid for pid, handle in waiting.items() if handle in ended]:
            os.close(waiting.pop(pid))
    assert not Path(started["folder"]).exists()  # the watchdog ended last, after deleting the cluster's folder
