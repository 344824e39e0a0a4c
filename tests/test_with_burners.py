"""scripts/with_burners.py runs a command beside CPU burners (docs/performance.md, "The suite on a busy
machine"): it ends as the command ended, its burners spin while the command runs, each in a session of its own,
and none outlives it, not even when it is killed outright.

Each test runs the script on one core (its CPU affinity), with two burners there: about one core in all.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reaper import spawn

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "with_burners.py"
HANG_SECONDS = 30.0  # a bound that only catches a hang; every wait below ends on an event

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sessions and /proc: Linux")]

# The command run beside the burners: it finds them (the script's other children), waits until each has spun
# for a while on the core, and prints their pids and sessions and its own session; then, when asked, it waits
# for its standard input to close.
PROBE = """import json, os, sys, time
parent = os.getppid()
def stat(pid):
    return open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
def ran(pid):
    return int(open(f"/proc/{pid}/schedstat").read().split()[0]) / 1e9
children = open(f"/proc/{parent}/task/{parent}/children").read().split()
burners = [int(pid) for pid in children if int(pid) != os.getpid()]
end = time.monotonic() + %(hang)s
while any(ran(pid) < 0.2 for pid in burners) and time.monotonic() < end:
    time.sleep(0.05)
print(json.dumps({"burners": {pid: int(stat(pid)[3]) for pid in burners},
                  "spun": [pid for pid in burners if ran(pid) >= 0.2],
                  "burner_code": [b"while True" in open(f"/proc/{pid}/cmdline", "rb").read() for pid in burners],
                  "own_session": os.getsid(0)}), flush=True)
if sys.argv[1:] == ["wait"]:
    sys.stdin.read()
""" % {"hang": HANG_SECONDS}


def with_burners(*command: str, **popen) -> subprocess.Popen:
    core = min(os.sched_getaffinity(0))
    return spawn([sys.executable, str(SCRIPT), "--per-core", "2", "--", *command], cwd=REPO,
                 preexec_fn=lambda: os.sched_setaffinity(0, {core}), **popen)


def ended(pids: list[int]) -> list[int]:
    """Waits (on each process's pidfd, up to the hang bound) until the processes `pids` have ended; returns those
    that still run."""
    handles = {}
    for pid in pids:
        try:
            handles[pid] = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # already gone and reaped
    try:
        end = time.monotonic() + HANG_SECONDS
        waiting = dict(handles)
        while waiting and time.monotonic() < end:
            ready, _, _ = select.select(list(waiting.values()), [], [], end - time.monotonic())
            waiting = {pid: fd for pid, fd in waiting.items() if fd not in ready}
        return sorted(waiting)
    finally:
        for fd in handles.values():
            os.close(fd)


def test_the_commands_exit_code_and_a_ctrl_c_that_stops_it_are_passed_through():
    done = with_burners(sys.executable, "-c", "import sys; sys.exit(7)")
    assert done.wait(timeout=HANG_SECONDS) == 7
    # Ctrl-C at a terminal: SIGINT to the foreground process group, the script's and the command's.
    interrupted = with_burners(sys.executable, "-c", "print('ready', flush=True); import time; time.sleep(600)",
                               stdout=subprocess.PIPE, text=True)
    assert interrupted.stdout.readline() == "ready\n"
    os.killpg(interrupted.pid, signal.SIGINT)
    assert interrupted.wait(timeout=HANG_SECONDS) == -signal.SIGINT  # it ended as the command did
    interrupted.stdout.close()


def test_the_burners_spin_while_the_command_runs_each_in_a_session_of_its_own_and_are_gone_after():
    done = with_burners(sys.executable, "-c", PROBE, stdout=subprocess.PIPE, text=True)
    out, _ = done.communicate(timeout=HANG_SECONDS * 2)
    assert done.returncode == 0
    seen = json.loads(out)
    burners = {int(pid): session for pid, session in seen["burners"].items()}
    assert len(burners) == 2 and seen["burner_code"] == [True, True]  # two per core, on one core
    assert sorted(seen["spun"]) == sorted(burners)
    # Each burner leads a session of its own, not the command's.
    assert all(session == pid for pid, session in burners.items())
    assert seen["own_session"] not in burners.values()
    assert [pid for pid in burners if Path(f"/proc/{pid}").exists()] == []


def test_killing_the_script_outright_kills_its_burners():
    script = with_burners(sys.executable, "-c", PROBE, "wait", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True)
    left: list[int] = []  # burners that may still run
    try:
        seen = json.loads(script.stdout.readline())
        left = burners = [int(pid) for pid in seen["burners"]]
        assert len(burners) == 2 and sorted(seen["spun"]) == sorted(burners)
        script.kill()  # SIGKILL: the script cleans nothing up; the kernel's parent-death signal does
        script.wait(timeout=HANG_SECONDS)
        left = ended(burners)
        assert left == [], f"burners {left} outlived the script"
    finally:
        script.kill()
        script.stdin.close()  # the command, left running, reads its end and ends
        script.stdout.close()
        for pid in left:  # a failed run leaves nothing spinning
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
