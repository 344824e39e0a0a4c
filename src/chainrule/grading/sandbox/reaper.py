"""The reaper layer: a small supervisor that outlives every process of a run, then kills them all.

Used when a run has neither bubblewrap (its pid namespace ends with its first process) nor a cgroup
(which lists every process in it), on Linux. Without either, the processes of a run could only be
found by something they carry, and everything a process carries can be shed: a child that calls
setsid leaves the process group, and one that re-executes itself with an empty environment leaves
no marker.

What a process cannot shed is its ancestry. The launcher, at this step, marks itself a child subreaper
(PR_SET_CHILD_SUBREAPER) and forks: an orphan anywhere below it (a setsid'd grandchild whose parent
exited) is re-parented to it rather than to init, so every process the run ever starts stays its
descendant. The child goes on with the next steps (the filter, the switch to the sandbox's user) and
executes the program; the reaper itself keeps the grader's user, so the learner's code, running as
another user, cannot kill it. When the program exits, or when the grader sends SIGTERM (the
wall-clock limit, the output limit), it kills every descendant (SIGKILL, over and over, until it has
no children left) and exits as the program did: the same status, or the same signal.
"""

from __future__ import annotations

import os
import signal
import sys
import time

TYPE_CHECKING = False  # the launcher imports this module: no `typing` and no package imports
if TYPE_CHECKING:
    import subprocess
    from types import FrameType

    from chainrule.grading.sandbox.plan import Plan

PR_SET_CHILD_SUBREAPER = 36
SWEEP_SECONDS = 2.0


def prepare(plan: Plan) -> None:
    if plan.isolation.bubblewrap or plan.cgroup is not None or not sys.platform.startswith("linux"):
        return
    plan.reaped = True
    plan.step("reaper")
    plan.on_stop.append(stop)


def stop(process: subprocess.Popen[bytes], deadline: float) -> None:
    """In the grader: ask the reaper to kill every process of the run (it may have done so already), and
    wait for it."""
    import subprocess  # not at the top: the launcher imports this module

    try:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=max(0.1, deadline - time.monotonic()))
    except (OSError, subprocess.TimeoutExpired):
        pass


class _Stop(Exception):
    """The grader asked the run to end (SIGTERM)."""


def in_child() -> None:
    """In the launcher: fork; the child returns (and goes on to the next steps), this process supervises
    the run and never returns."""
    from chainrule.grading.sandbox.seccomp import prctl

    prctl(PR_SET_CHILD_SUBREAPER, 1)
    statuses: dict[int, int] = {}
    program = 0
    try:
        signal.signal(signal.SIGTERM, _stop)  # inside the try: a SIGTERM at any moment still sweeps
        program = os.fork()
        if program == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            return
        os.closerange(3, 65536)  # the supervisor holds no file of the run's (the filter, the grader's sync)
        while program not in statuses:
            pid, status = os.waitpid(-1, 0)  # reaps re-parented orphans too
            statuses[pid] = status
    except (_Stop, ChildProcessError):
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _sweep(statuses)
    status = statuses.get(program, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # the two whose action cannot be set
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)  # end as PROGRAM ended: killed by the same signal
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _stop(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the sweep itself must not be interrupted
    raise _Stop


def _children() -> set[int]:
    """This process's children (zombies included), from /proc/self/task/*/children or, without it, /proc."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                found.update(int(pid) for pid in f.read().split())
        return found
    except OSError:
        pass
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == me:
                found.add(int(entry))
    return found


def _reap(statuses: dict[int, int]) -> bool:
    """Collect every exited child without waiting; False once there are no children at all."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
        statuses[pid] = status


def _sweep(statuses: dict[int, int]) -> None:
    """SIGKILL every descendant: each orphan comes back to this subreaper, so repeat until none is left."""
    deadline = time.monotonic() + SWEEP_SECONDS
    while _reap(statuses) and time.monotonic() < deadline:
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.001)
