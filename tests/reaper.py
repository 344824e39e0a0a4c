"""A killed test run ends what it started: one watchdog per pytest process (the main one and each xdist worker).

The tests start servers, workers, PostgreSQL clusters and Chromium in sessions of their own (so that stopping
one reaches its children, and a Ctrl-C at the terminal does not reach them before their test's teardown). When
pytest is killed (SIGKILL of pytest or of an xdist worker, Ctrl-C twice) no teardown runs; without this module
they would keep running. So:

- pytest_configure starts a watchdog: this file run as a program, in a session of its own, reading a pipe from
  the test process and holding a pidfd of it;
- every process a test starts goes through spawn() (a session of its own, recorded with the watchdog before
  spawn returns), every throwaway PostgreSQL cluster is recorded by postgres_cluster.py (record_cluster), and
  the session's Chromium is adopted once launched (adopt_descendants);
- pytest_unconfigure says goodbye: the watchdog ends and kills nothing. If instead the test process dies (its
  pidfd becomes readable, or the pipe closes) with no goodbye, the watchdog kills every process of every
  recorded session (SIGKILL), stops each recorded cluster with `pg_ctl -m immediate` and deletes its folder.

A session is recorded with its leader's start time: a session id is a process id, which Linux does not reuse
while any process of the session lives; if the leader is gone and its id is someone else's now (a different
start time), that session is not touched. Outside pytest (the benchmarks use postgres_cluster.py too) there is
no watchdog and recording does nothing.

tests/test_suite_shape.py fails when a test module starts a process in a session of its own without spawn();
tests/test_killed_test_run.py kills a real pytest and waits for what it started to end.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

_pipe = None  # the write end of this process's pipe to its watchdog, once started
_writing = threading.Lock()  # tests start processes from threads too: one message at a time
_watchdog = 0  # its process id


# ---------------------------------------------------------------- the test process's side


def pytest_configure(config) -> None:
    start_watchdog()


def pytest_unconfigure(config) -> None:
    say_goodbye()


def start_watchdog() -> None:
    global _pipe, _watchdog
    if _pipe is not None:
        return
    read, write = os.pipe()  # neither end is inherited by the processes the tests start (close-on-exec)
    _watchdog = subprocess.Popen([sys.executable, "-I", __file__, str(os.getpid())], stdin=read,
                                 stdout=subprocess.DEVNULL, start_new_session=True).pid
    os.close(read)
    _pipe = os.fdopen(write, "w", buffering=1)


def say_goodbye() -> None:
    global _pipe
    if _pipe is not None:
        _send({"bye": True})
        with _writing:
            _pipe.close()
            _pipe = None


def _send(message: dict) -> None:
    with _writing:
        if _pipe is not None:
            _pipe.write(json.dumps(message) + "\n")  # one line, written whole before the caller goes on


def spawn(command, **popen) -> subprocess.Popen:
    """subprocess.Popen(command, **popen) in a session of its own, recorded with this process's watchdog."""
    process = subprocess.Popen(command, start_new_session=True, **popen)
    record_session(process.pid)
    return process


def run_in_a_session(command, *, timeout: float, **popen) -> subprocess.CompletedProcess:
    """subprocess.run for a command in a session of its own (spawn), its output captured as text."""
    process = spawn(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def record_session(leader: int) -> None:
    start = started_at(leader)
    if start is not None:
        _send({"session": leader, "start": start})


def record_cluster(folder: str, stop: list[str]) -> None:
    """A PostgreSQL cluster in ``folder`` (its data in folder/data), stopped by the command ``stop``; recorded
    before it starts, so that a kill during its start still stops it."""
    _send({"cluster": folder, "stop": stop})


def forget_cluster(folder: str) -> None:
    _send({"forget cluster": folder})


def adopt_descendants() -> None:
    """Record every process this one started by other means (Playwright's driver and its Chromium): each
    session leader among them as a session, the others one by one."""
    for pid in descendants(os.getpid()):
        if pid == _watchdog:
            continue
        start, session = started_at(pid), session_of(pid)
        if start is None:
            continue
        _send({"session" if session == pid else "process": pid, "start": start})


# ---------------------------------------------------------------- /proc


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()  # fields from the state on: state ppid pgrp session ...


def started_at(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields else None  # starttime, field 22 of proc(5)


def session_of(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[3]) if fields else None


def every_process() -> dict[int, list[str]]:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields:
                found[int(name)] = fields
    return found


def descendants(ancestor: int, processes: dict[int, list[str]] | None = None) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, fields in (processes if processes is not None else every_process()).items():
        children.setdefault(int(fields[1]), []).append(pid)
    found, todo = [], list(children.get(ancestor, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def session_and_descendants(leader: int) -> set[int]:
    """Every living process of the session (or process group) ``leader`` leads, and every descendant of those
    (a PostgreSQL postmaster's processes each have a session of their own)."""
    processes = every_process()
    found = {pid for pid, fields in processes.items() if leader in (int(fields[2]), int(fields[3]))}
    for pid in list(found):
        found.update(descendants(pid, processes))
    return {pid for pid in found if processes.get(pid, ["Z"])[0] != "Z"}  # a zombie has ended already


# ---------------------------------------------------------------- the watchdog's side


def kill_session(leader: int, start: int, only_the_process: bool = False) -> None:
    """SIGKILL every process of the session ``leader`` led (or only that process), unless its id is now
    another process's."""
    now = started_at(leader)
    if now is not None and now != start:
        return  # the id was reused: not ours
    if only_the_process:
        if now is not None:
            os.kill(leader, signal.SIGKILL)
        return
    for _ in range(20):  # a process that forks while we kill: again until none is left
        members = session_and_descendants(leader)
        if not members:
            return
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def stop_cluster(folder: str, stop: list[str]) -> None:
    data = Path(folder) / "data"
    postmaster = None
    try:
        postmaster = int((data / "postmaster.pid").read_text().split()[0])
        start = started_at(postmaster)
    except (OSError, ValueError, IndexError):
        start = None
    if start is not None:
        try:
            subprocess.run(stop, capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            pass
        kill_session(postmaster, start)  # pg_ctl starts the postmaster in a session of its own
    shutil.rmtree(folder, ignore_errors=True)


def reap(sessions: dict[int, tuple[int, bool]], clusters: dict[str, list[str]]) -> None:
    for leader, (start, only_the_process) in sessions.items():
        kill_session(leader, start, only_the_process)
    for folder, stop in clusters.items():
        stop_cluster(folder, stop)


def watch(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the test process's to handle, not ours
    sessions: dict[int, tuple[int, bool]] = {}
    clusters: dict[str, list[str]] = {}
    pending = b""

    def heard(chunk: bytes) -> bool:
        """Take in what the test process said; True once it said goodbye."""
        nonlocal pending
        *lines, pending = (pending + chunk).split(b"\n")
        for line in map(json.loads, lines):
            if "bye" in line:
                return True
            if "session" in line or "process" in line:
                sessions[line.get("session", line.get("process"))] = (line["start"], "process" in line)
            elif "cluster" in line:
                clusters[line["cluster"]] = line["stop"]
            elif "forget cluster" in line:
                clusters.pop(line["forget cluster"], None)
        return False

    try:
        watched = [0, os.pidfd_open(parent)]
    except ProcessLookupError:
        watched = [0]
    while len(watched) == 2 and 0 in select.select(watched, [], [])[0]:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break  # the pipe closed with no goodbye
        if heard(chunk):
            return
    # The test process ended (or closed the pipe): what it wrote before it ended is still to be read.
    while select.select([0], [], [], 0)[0] and (chunk := os.read(0, 1 << 16)):
        if heard(chunk):
            return
    reap(sessions, clusters)


if __name__ == "__main__":
    watch(int(sys.argv[1]))
