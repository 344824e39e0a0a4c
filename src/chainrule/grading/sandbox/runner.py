"""run(): one program inside every layer that works here, with its output read incrementally and capped.

The process layer (always on): a separate process in a new session (so the whole group can be
killed), a clean environment, a fresh scratch directory as working directory, stdin closed,
stdout/stderr read incrementally and capped, a wall-clock hang guard, and a bounded wait for the pipes
(a child that calls setsid and keeps them open cannot hang the grader). The other layers are planned,
started and ended in their order by layers.py.

The guard is not the learner's limit: a run that reaches it while it was waiting for a core (usage.py's
rule) is given more time, up to `Limits.starved_windows` guards in all, and if it is still starved then, its
outcome says so (`starved`): the machine's delay, not the program's. The CPU time of all the run's threads
together is watched too (the per-process RLIMIT_CPU does not add up processes).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import tempfile
import time
import uuid
from typing import Sequence

from chainrule.grading.sandbox import layers, usage
from chainrule.grading.sandbox.isolation import probe
from chainrule.grading.sandbox.limits import Limits, RunOutcome
from chainrule.grading.sandbox.plan import Plan


def scratch_directory() -> tempfile.TemporaryDirectory[str]:
    """A fresh private directory for one run (removed when the context ends).

    Put the program's inputs in it; the program itself may write only in its `work` subdirectory.
    """
    return tempfile.TemporaryDirectory(prefix="chainrule-grade-", ignore_cleanup_errors=True)


def _kill_marked(marker: str) -> None:
    """Without namespaces or cgroups: SIGKILL every process whose environment carries the run's marker."""
    needle = marker.encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    os.kill(int(entry), signal.SIGKILL)
        except OSError:
            pass


def _clean_env(scratch: str, marker: str, env: dict[str, str] | None) -> dict[str, str]:
    """The program's whole environment: a plain one, its home the working directory, ``env`` on top, and the
    run's marker (KEY=VALUE) by which a survivor is found when no cgroup holds the run."""
    work = os.path.join(scratch, "work")
    key, value = marker.split("=", 1)
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": work,
        "TMPDIR": work,
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        **(env or {}),
        key: value,
    }


def _end_everything(plan: Plan, process: subprocess.Popen[bytes], marker: str) -> None:
    """Whatever is left (a setsid child, a fork bomb) dies now: the reaper's sweep, the cgroup, the group, or
    the marked environment; then the program is waited for and its pipes closed."""
    kill_deadline = time.monotonic() + 2.0
    layers.stop(plan, process, kill_deadline)
    if not plan.isolation.bubblewrap and plan.cgroup is None:
        _kill_marked(marker)
    try:
        process.wait(timeout=max(0.1, kill_deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:  # both are pipes: layers.start opens them
            pipe.close()


def _signal_of(returncode: int | None, bubblewrap: bool) -> int | None:
    """The signal that ended the program, if one did."""
    if returncode is not None and returncode < 0:
        return -returncode
    if bubblewrap and returncode is not None and returncode > 128:
        return returncode - 128  # bwrap reports a child killed by signal N as exit status 128 + N
    return None


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
    try:
        plan = layers.plan_run(isolation, limits, scratch, argv, read_only, _clean_env(scratch, marker, env))
    except OSError as error:
        return RunOutcome(stdout=b"", stderr=b"", returncode=None, signal=None, isolation=isolation.report(),
                          start_error=f"could not prepare the sandbox: {error.strerror or error}")
    report = plan.isolation.report()  # without the layers this run lost (a cgroup that could not be made)
    try:
        process = layers.start(plan)
    except layers.StartError as error:
        plan.clean_up()
        return RunOutcome(stdout=b"", stderr=b"", returncode=None, signal=None, isolation=report,
                          start_error=str(error))
    # The hang guard's clock starts when the program is let go: building the sandbox (namespaces, mounts,
    # the cgroup) can block for seconds on a busy machine, and that is the server's time, not the learner's
    # (its own bound is the gate's timeout in layers.start).
    started = time.monotonic()
    deadline = started + limits.wall_seconds

    guard = _Guard(plan, process, started)
    stdout, stderr, timed_out, output_exceeded = _read_capped(process, limits, deadline, guard)
    _end_everything(plan, process, marker)
    duration_ms = (time.monotonic() - started) * 1000
    returncode = process.returncode
    sig = _signal_of(returncode, plan.isolation.bubblewrap)
    memory_exceeded = process_limit_hit = False
    if plan.cgroup:
        memory_exceeded = plan.cgroup.memory_exceeded()
        process_limit_hit = plan.cgroup.process_limit_hit()
    plan.clean_up()
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
        starved=timed_out and guard.starved,
        cpu_exceeded=guard.cpu_exceeded,
        cpu_seconds=guard.usage.ran,
        waited_seconds=guard.usage.waited,
    )


CPU_CHECK_SECONDS = 0.25  # how often the run's CPU time, all its threads together, is read


class _Guard:
    """The run's wall-clock hang guard and its CPU time across processes, read from the kernel (usage.py)."""

    def __init__(self, plan: Plan, process: subprocess.Popen[bytes], started: float) -> None:
        self.plan, self.process, self.started = plan, process, started
        self.limits: Limits = plan.limits
        self.usage = usage.Usage()
        self.starved = self.cpu_exceeded = self.ending = False
        self.checked = started
        # The hard limit of RLIMIT_CPU, for all the run's processes together.
        self.cpu_budget = self.limits.cpu_seconds + self.limits.grader_cpu_seconds + 1

    def _measure(self, now: float) -> None:
        pids = self.plan.cgroup.pids_everywhere() if self.plan.cgroup else usage.descendants(self.process.pid)
        self.usage = usage.measure(pids)
        self.checked = now
        self.cpu_exceeded = self.usage.ran > self.cpu_budget

    def over_cpu(self, now: float) -> bool:
        """Every CPU_CHECK_SECONDS: whether the run's threads together used more than its CPU limit."""
        if now - self.checked >= CPU_CHECK_SECONDS:
            self._measure(now)
        return self.cpu_exceeded

    def extended(self, now: float) -> float | None:
        """At the hang guard: the next deadline when the run was starved and has guard windows left; else
        None (the run ends; `starved` says whether it ends as the machine's delay)."""
        ran_before = self.usage.ran
        self._measure(now)
        # Less CPU time than at the last reading: some of the run's processes are gone, so the run may be ending
        # by itself, and what is left of it says nothing of whether it was starved.
        self.ending = self.usage.ran < ran_before
        self.starved = usage.starved(self.usage, now - self.started, self.limits.cpu_cores)
        last = self.started + self.limits.longest_wall_seconds
        if self.starved and now < last:
            return min(now + self.limits.wall_seconds, last)
        return None


def _read_capped(process: subprocess.Popen[bytes], limits: Limits, deadline: float,
                 guard: _Guard) -> tuple[bytes, bytes, bool, bool]:
    """Read stdout and stderr until both close, the hang guard (extended while the run is starved), the
    run's CPU limit, the output cap, or the pipe grace after the program exited. Returns (stdout, stderr,
    timed_out, output_exceeded)."""
    assert process.stdout is not None and process.stderr is not None  # layers.start opens both as pipes
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
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is None and now >= deadline:
                deadline = guard.extended(now) or deadline
                if now >= deadline:
                    if guard.ending:  # ending by itself as the guard came (its CPU limit, say): let it end
                        with contextlib.suppress(subprocess.TimeoutExpired):
                            process.wait(timeout=limits.pipe_grace_seconds)
                    if process.poll() is None:
                        timed_out = True
                        break
                    exited_at = now  # its own end, not the guard, is its outcome
            if exited_at is None and guard.over_cpu(now):
                break
            if exited_at is not None and now - exited_at > limits.pipe_grace_seconds:
                break  # the program ended, but something it left behind still holds the pipes
            wait = (min(deadline - now, 0.05) if exited_at is None
                    else max(0.0, limits.pipe_grace_seconds - (now - exited_at)))
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
