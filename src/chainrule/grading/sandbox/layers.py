"""The sandbox's layers, in the order they apply to a run, and the start and end of a run through them.

As nsjail applies one flat list of steps from one config, a run is planned by calling each layer's
`prepare(plan)` in the order of LAYERS (plan.py says what a layer may add), all in the grader and before
anything starts. Then the launcher starts, and the layers take effect in that same order:

1. cgroups: the grader moves the waiting launcher into the run's group;
2. rlimits: the launcher lowers its own limits;
3. reaper (no bubblewrap and no cgroup): the launcher becomes the run's subreaper and forks;
4. bubblewrap: the launcher executes bwrap (namespaces),
5. mounts: which builds the file system,
6. seccomp: and loads the filter (bwrap, or else the launcher),
7. identity: and executes setpriv, which switches to the dedicated user (or else the launcher does),
   last before the program.

No Python runs between fork and exec in the grader (a threaded server): `start` uses subprocess without
preexec_fn, and what must happen in the new process happens in the launcher, a fresh interpreter.
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
    return plan


def start(plan: Plan, stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE) -> subprocess.Popen:
    """Start the launcher, place it (on_start), let it apply its steps and execute the program.

    Returns once the program runs; StartError (with the run's processes ended) if anything before it failed.
    """
    ours, theirs = socket.socketpair()
    try:
        try:
            process = subprocess.Popen(
                plan.command(theirs.fileno()), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                cwd=plan.work, env=plan.env, start_new_session=True, close_fds=True,
                pass_fds=[theirs.fileno(), *plan.pass_fds],
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise StartError(f"could not start the sandbox's launcher: {error}") from None
        finally:
            theirs.close()
            plan.close_fds()  # the launcher has its copies
        try:
            for place in plan.on_start:
                place(process.pid)
            ours.sendall(b"g")
            ours.settimeout(plan.limits.wall_seconds)
            report = b""
            while chunk := ours.recv(4096):  # "+" (the launcher began), then its end: the program's exec
                report += chunk
        except OSError as error:
            report = f"could not start the run: {error}".encode()
        if report != b"+":
            _end(process)
            raise StartError(report[1:].decode(errors="replace") if report.startswith(b"+")
                             else report.decode(errors="replace") or "the sandbox's launcher ended before it began")
        return process
    finally:
        ours.close()


def stop(plan: Plan, process: subprocess.Popen, deadline: float) -> None:
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


def _end(process: subprocess.Popen) -> None:
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
