"""The sandbox's layers, in the order they apply to a run, and the start and end of a run through them.

As nsjail applies one flat list of steps from one config, a run is planned by calling each layer's
`prepare(plan)` in the order of LAYERS (plan.py says what a layer may add), all in the grader and before
anything starts. The run's first process then waits at a gate (bwrap's own, or the launcher's), and the
layers take effect in that same order:

1. cgroups: the grader moves the waiting processes into the run's group;
2. rlimits: the grader lowers their limits (prlimit; where there is none, the launcher lowers its own);
3. reaper (no bubblewrap and no cgroup): the launcher becomes the run's subreaper and forks;
4. bubblewrap: bwrap has made the namespaces,
5. mounts: and the file system, and waits; let go, it forks the program's process,
6. seccomp: loads the filter (bwrap, or else the launcher),
7. identity: and executes setpriv, which switches to the dedicated user (or else the launcher switches),
   last before the program.

No Python runs between fork and exec in the grader (a threaded server): `start` uses subprocess without
preexec_fn, and what must happen in the new process happens in bwrap or in the launcher, a fresh
single-threaded interpreter.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from typing import Any, Sequence

from chainrule.grading.sandbox import bubblewrap, cgroups, identity, mounts, reaper, rlimits, seccomp
from chainrule.grading.sandbox.limits import Limits
from chainrule.grading.sandbox.plan import Plan

LAYERS = (cgroups, rlimits, reaper, bubblewrap, mounts, seccomp, identity)


class StartError(Exception):
    """The sandbox could not start the program (the program itself never ran)."""


class LauncherGate:
    """The launcher's wait (runs without bubblewrap): it waits on a socket pair for go, answers "+", and
    then either writes why a step failed or closes the socket by executing the program."""

    def __init__(self) -> None:
        self.ours, self.theirs = socket.socketpair()
        self.child_fds = [self.theirs.fileno()]

    def command(self, plan: Plan) -> list[str]:
        return plan.command(self.theirs.fileno())

    def waiting(self, process: subprocess.Popen[bytes], timeout: float) -> list[int]:
        self.theirs.close()
        return [process.pid]

    def go(self, timeout: float) -> str | None:
        """None once the program runs, else why it does not."""
        self.ours.sendall(b"g")
        self.ours.settimeout(timeout)
        report = b""
        while chunk := self.ours.recv(4096):
            report += chunk
        if report == b"+":
            return None
        return report[1:].decode(errors="replace") if report.startswith(b"+") else "the launcher ended before it began"

    def close(self) -> None:
        self.ours.close()
        self.theirs.close()


def plan_run(isolation: Any, limits: Limits, scratch: str, program: Sequence[str], read_only: Sequence[str] = (),
             env: dict[str, str] | None = None) -> Plan:
    """Every layer's part of one run, in order; OSError (after removing what was made) if one cannot be set up."""
    plan = Plan(isolation, limits, scratch, list(program), tuple(read_only), dict(env or {}))
    os.makedirs(plan.work, exist_ok=True)
    for layer in LAYERS:
        try:
            layer.prepare(plan)
        except OSError as error:
            plan.clean_up()
            raise OSError(error.errno, f"the {layer.__name__.rsplit('.', 1)[-1]} layer: {error}") from error
    if plan.gate is None:  # no bubblewrap: the launcher waits, applies the steps and executes the program
        plan.gate = LauncherGate()
    elif plan.steps:
        plan.clean_up()
        raise OSError(f"steps for the launcher ({', '.join(name for name, _ in plan.steps)}) in a run under bwrap")
    return plan


def start(plan: Plan, stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE) -> subprocess.Popen[bytes]:
    """Start the run's first process, which waits at the plan's gate; take it in (on_start: the cgroup,
    the rlimits); let it go on to the program.

    Returns once nothing but the program is left to run; StartError (with the run's processes ended) if
    anything before it failed.
    """
    gate = plan.gate
    try:
        process = subprocess.Popen(
            gate.command(plan), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, cwd=plan.work,
            env=plan.env, start_new_session=True, close_fds=True, pass_fds=[*gate.child_fds, *plan.pass_fds],
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise StartError(f"could not start {gate.command(plan)[0]}: {error}") from None
    finally:
        plan.close_fds()  # the run has its copies
    try:
        # Building the sandbox is the server's work: on a busy machine it may take as long as a starved run.
        waiting = gate.waiting(process, plan.limits.longest_wall_seconds)
        for take in plan.on_start:
            take(waiting)
        failure = gate.go(plan.limits.longest_wall_seconds)
    except OSError as error:
        failure = f"could not start the run: {error}"
    if failure:
        _end(process)
        raise StartError(failure)
    return process


def stop(plan: Plan, process: subprocess.Popen[bytes], deadline: float) -> None:
    """End whatever of the run is left: each layer's way (the reaper's sweep, the cgroup), then the group."""
    for end in plan.on_stop:
        end(process, deadline)
    kill_group(process.pid)


def kill_group(pid: int) -> None:
    """SIGKILL the run's process group (its session leader's pid); gone already is fine."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _end(process: subprocess.Popen[bytes]) -> None:
    kill_group(process.pid)
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def trial(isolation: Any) -> str | None:
    """Run `python -I -S -c print('ok')` under the layers of `isolation` as a run would; None when it
    prints ok, else what went wrong (the probes of bubblewrap and identity)."""
    python = os.path.realpath(sys.executable)
    with tempfile.TemporaryDirectory(prefix="chainrule-probe-") as scratch:
        try:
            plan = plan_run(isolation, Limits(), scratch, [python, "-I", "-S", "-c", "print('ok')"],
                            env={"PATH": "/usr/bin:/bin"})
        except OSError as error:
            return str(error)
        try:
            process = start(plan)
            try:
                out, err = process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                stop(plan, process, 0)
                out, err = process.communicate()
                return "it did not finish within 10 s"
            if process.returncode != 0 or out.strip() != b"ok":
                return err.decode(errors="replace").strip()[:300] or f"exit status {process.returncode}"
            return None
        except StartError as error:
            return str(error)
        finally:
            plan.clean_up()
