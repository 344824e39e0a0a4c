"""run(): one program inside every layer that works here, with its output read incrementally and capped.

The process layer (always on): a separate process in a new session (so the whole group can be
killed), a clean environment, a fresh scratch directory as working directory, stdin closed,
stdout/stderr read incrementally and capped, a wall-clock timeout, and a bounded wait for the pipes
(a child that calls setsid and keeps them open cannot hang the grader). Between fork and exec the child
joins its cgroup and lowers its rlimits. Under bubblewrap, bwrap loads the seccomp filter and setpriv,
last, switches to the dedicated user; without bubblewrap the child does both itself before exec.
"""

from __future__ import annotations

import functools
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Sequence

from chainrule.grading.sandbox import bubblewrap, cgroups, identity, rlimits, seccomp
from chainrule.grading.sandbox.isolation import Isolation, probe
from chainrule.grading.sandbox.limits import Limits, RunOutcome


def scratch_directory() -> tempfile.TemporaryDirectory:
    """A fresh private directory for one run (removed when the context ends).

    Put the program's inputs in it; the program itself may write only in its `work` subdirectory.
    """
    return tempfile.TemporaryDirectory(prefix="chainrule-grade-", ignore_cleanup_errors=True)


def _prepare_child(limits: Limits, cgroup_procs: list[str], ids: tuple[int, int] | None, seccomp_filter) -> None:
    """Runs in the child between fork and exec, in this order: the cgroup and rlimits need root's
    rights, so they come before the switch of user; the filter comes last."""
    cgroups.join(cgroup_procs)
    rlimits.apply(limits)
    if ids is not None:
        identity.drop_to(*ids)
    if seccomp_filter is not None:
        seccomp_filter.load()


REAPER = Path(__file__).with_name("reaper.py")


def _under_reaper(command: list[str], isolation: Isolation, seccomp_fd: int | None) -> list[str]:
    """The command started by the reaper (reaper.py): used when neither a pid namespace nor a cgroup
    holds the run's processes. The reaper keeps the grader's user; its child drops to the sandbox's."""
    uid, gid = isolation.identity or ("-", "-")
    fd = "-" if seccomp_fd is None else str(seccomp_fd)
    return [os.path.realpath(sys.executable), "-I", "-S", str(REAPER), str(uid), str(gid), fd, "--", *command]


def _end_reaper(process: subprocess.Popen, deadline: float) -> None:
    """Ask the reaper to kill every process of the run (it may have done so already), and wait for it."""
    try:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=max(0.1, deadline - time.monotonic()))
    except (OSError, subprocess.TimeoutExpired):
        pass


def _kill_marked(marker: str) -> None:
    """Without namespaces or cgroups: SIGKILL every process whose environment carries the run's marker."""
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    os.kill(int(entry), signal.SIGKILL)
        except OSError:
            pass


def _kill_group(pid: int) -> None:
    """SIGKILL the run's process group (its session leader's pid); gone already is fine."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _give_to(isolation: Isolation, scratch: str, work: str) -> None:
    """Let the dedicated user reach its inputs (traverse only) and, without bubblewrap, write in `work`
    (under bubblewrap `work` is a tmpfs the user may write)."""
    if isolation.identity is None:
        return
    os.chmod(scratch, 0o711)
    if not isolation.bubblewrap:
        os.chown(work, *isolation.identity)


def run(
    argv: Sequence[str],
    scratch: str,
    limits: Limits = Limits(),
    read_only: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> RunOutcome:
    """Run argv inside every working layer and return its capped output and how it ended.

    `scratch` holds the program's inputs; its `work` subdirectory (created here) is the working directory
    and the only writable place. `read_only` lists extra files and directories the program needs (the
    program's own files are added automatically). Never raises for anything the program does.
    """
    isolation = probe()
    if os.name != "posix":
        return RunOutcome(stdout=b"", stderr=b"", returncode=None, signal=None, isolation=isolation.report(),
                          start_error="running submissions needs a POSIX system; grading in a sandbox needs Linux")
    marker = f"CHAINRULE_SANDBOX_RUN={uuid.uuid4().hex}"
    work = os.path.join(scratch, "work")
    os.makedirs(work, exist_ok=True)
    _give_to(isolation, scratch, work)
    clean_env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": work,
        "TMPDIR": work,
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        **(env or {}),
    }
    key, value = marker.split("=", 1)
    clean_env[key] = value
    command = list(argv)
    report = isolation.report()
    cgroup = None
    if isolation.cgroup:
        try:
            cgroup = isolation.cgroup.create(limits)
        except OSError as error:
            # This run goes without its group (every other layer still applies), and says so.
            isolation = isolation.without("cgroup", f"could not create this run's cgroup: {error}")
            report = isolation.report()
    # Neither a pid namespace nor a cgroup to find every process of the run by: the reaper keeps them.
    reaped = not isolation.bubblewrap and cgroup is None
    seccomp_fd: int | None = None
    direct_filter = None
    if isolation.seccomp is not None:
        if isolation.bubblewrap or reaped:
            seccomp_fd = os.memfd_create("chainrule-seccomp", 0)  # bwrap or the reaper reads the BPF program
            os.write(seccomp_fd, isolation.seccomp)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
        else:
            direct_filter = seccomp.build_filter()  # loaded in the child just before exec
    try:
        if isolation.bubblewrap:
            wrapper = bubblewrap.build(isolation.bubblewrap, scratch, command[0], read_only, clean_env,
                                       limits.work_bytes, seccomp_fd, drop_to=isolation.identity)
            # The program by its real path: a virtual environment's link points outside what is mounted.
            command = wrapper + [os.path.realpath(command[0])] + command[1:]
        elif reaped:
            command = _under_reaper(command, isolation, seccomp_fd)
    except OSError as error:
        if seccomp_fd is not None:
            os.close(seccomp_fd)
        if cgroup:
            cgroup.remove()
        return RunOutcome(stdout=b"", stderr=b"", returncode=None, signal=None, isolation=report,
                          start_error=f"could not prepare the sandbox's file system: {error}")

    pass_fds = [seccomp_fd] if seccomp_fd is not None else []
    # Under bubblewrap, setpriv switches users inside (bwrap needs root to mount); under the reaper, the
    # reaper's child does; otherwise the child does, just before exec.
    switch_in_child = None if isolation.bubblewrap or reaped else isolation.identity
    started = time.monotonic()
    deadline = started + limits.wall_seconds
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=work,
            env=clean_env,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
            preexec_fn=functools.partial(
                _prepare_child, limits, cgroup.procs_files() if cgroup else [], switch_in_child, direct_filter
            ),
        )
    except (OSError, subprocess.SubprocessError) as error:
        if cgroup:
            cgroup.remove()
        return RunOutcome(
            stdout=b"", stderr=b"", returncode=None, signal=None, isolation=report,
            start_error=f"could not start {command[0]}: {error}",
        )
    finally:
        if seccomp_fd is not None:
            os.close(seccomp_fd)

    stdout, stderr, timed_out, output_exceeded = _read_capped(process, limits, deadline)
    # Whatever is left (a setsid child, a fork bomb) dies now: the reaper's sweep, the group, the cgroup,
    # or the marked environment.
    kill_deadline = time.monotonic() + 2.0
    if reaped:
        _end_reaper(process, kill_deadline)
    _kill_group(process.pid)
    if cgroup:
        cgroup.kill_all(kill_deadline)
    if not isolation.bubblewrap and not cgroup:
        _kill_marked(marker)
    try:
        process.wait(timeout=max(0.1, kill_deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    process.stdout.close()
    process.stderr.close()

    duration_ms = (time.monotonic() - started) * 1000
    returncode = process.returncode
    sig = None
    if returncode is not None and returncode < 0:
        sig = -returncode
    elif isolation.bubblewrap and returncode is not None and returncode > 128:
        sig = returncode - 128  # bwrap reports a child killed by signal N as exit status 128 + N
    memory_exceeded = process_limit_hit = False
    if cgroup:
        memory_exceeded = cgroup.memory_exceeded()
        process_limit_hit = cgroup.process_limit_hit()
        cgroup.remove()
    return RunOutcome(
        stdout=stdout,
        stderr=stderr,
        returncode=returncode,
        signal=sig,
        timed_out=timed_out,
        output_exceeded=output_exceeded,
        memory_exceeded=memory_exceeded,
        process_limit_hit=process_limit_hit,
        duration_ms=duration_ms,
        isolation=report,
    )


def _read_capped(process: subprocess.Popen, limits: Limits, deadline: float) -> tuple[bytes, bytes, bool, bool]:
    """Read stdout and stderr until both close, the wall deadline, the output cap, or the pipe grace
    after the program exited. Returns (stdout, stderr, timed_out, output_exceeded)."""
    stdout_fd, stderr_fd = process.stdout.fileno(), process.stderr.fileno()
    chunks: dict[int, list[bytes]] = {stdout_fd: [], stderr_fd: []}
    total = 0
    timed_out = output_exceeded = False
    selector = selectors.DefaultSelector()
    for fd in chunks:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    open_fds = set(chunks)
    exited_at: float | None = None
    try:
        while open_fds and not output_exceeded:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > limits.pipe_grace_seconds:
                break  # the program ended, but something it left behind still holds the pipes
            wait = min(deadline - now, 0.05 if exited_at is None else limits.pipe_grace_seconds)
            for selected, _ in selector.select(wait):
                fd = selected.fd
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(fd)
                    open_fds.discard(fd)
                    continue
                room = limits.output_bytes - total
                chunks[fd].append(data[: max(room, 0)])
                total += len(data)
                if total > limits.output_bytes:
                    output_exceeded = True
                    break
    finally:
        selector.close()
    return b"".join(chunks[stdout_fd]), b"".join(chunks[stderr_fd]), timed_out, output_exceeded
