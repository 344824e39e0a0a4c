"""The reaper: a small supervisor that outlives every process of a run, then kills them all.

    python -I -S reaper.py UID GID SECCOMP_FD -- PROGRAM ARG...     ("-" for what is not used)

Used when a run has neither bubblewrap (its pid namespace ends with its first process) nor a cgroup
(which lists every process in it). Without either, the processes of a run could only be found by
something they carry, and everything a process carries can be shed: a child that calls setsid leaves
the process group, and one that re-executes itself with an empty environment leaves no marker.

What a process cannot shed is its ancestry. This program marks itself a child subreaper
(PR_SET_CHILD_SUBREAPER): an orphan anywhere below it (a setsid'd grandchild whose parent exited)
is re-parented to it rather than to init, so every process the run ever starts stays its descendant.
It starts PROGRAM in a child, which first drops to the sandbox's user (UID/GID) and loads the
system-call filter (the BPF program read from SECCOMP_FD), so that the reaper itself keeps the
grader's user: the learner's code, running as another user, cannot kill it. When PROGRAM exits, or
when the grader sends SIGTERM (the wall-clock limit, the output limit), it kills every descendant
(SIGKILL, over and over, until it has no children left) and exits as PROGRAM did: the same status,
or the same signal.

Standard library only, and no chainrule import: it runs in a fresh interpreter with -I -S.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SWEEP_SECONDS = 2.0

libc = ctypes.CDLL(None, use_errno=True)


class _Stop(Exception):
    """The grader asked the run to end (SIGTERM)."""


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _prctl(option: int, value: int) -> None:
    if libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"prctl({option}): {os.strerror(number)}")


def _load_filter(fd: int) -> None:
    """Load the BPF program (an array of struct sock_filter, as bubblewrap's --seccomp takes it)."""
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    program = b"".join(chunks)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"loading the system-call filter: {os.strerror(number)}")


def _start(uid: int | None, gid: int | None, seccomp_fd: int | None, argv: list[str]) -> None:
    """In the child: become the sandbox's user, load the filter, become PROGRAM. Never returns."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if uid is not None and gid is not None:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
        if seccomp_fd is not None:
            _load_filter(seccomp_fd)
        os.execv(argv[0], argv)
    except BaseException as error:  # anything: the child must never return into the reaper's code
        os.write(2, f"the sandbox could not start {argv[0]}: {error}\n".encode(errors="replace"))
    os._exit(127)


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


def _stop(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the sweep itself must not be interrupted
    raise _Stop


def main(args: list[str]) -> None:
    uid, gid, seccomp_fd = (None if value == "-" else int(value) for value in args[:3])
    argv = args[4:]
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    statuses: dict[int, int] = {}
    program = 0
    try:
        signal.signal(signal.SIGTERM, _stop)  # inside the try: a SIGTERM at any moment still sweeps
        program = os.fork()
        if program == 0:
            _start(uid, gid, seccomp_fd, argv)
        if seccomp_fd is not None:
            os.close(seccomp_fd)
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


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except OSError as error:
        os.write(2, f"the sandbox's reaper could not start: {error}\n".encode(errors="replace"))
        os._exit(126)
