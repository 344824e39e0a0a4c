"""The bubblewrap layer: Linux namespaces (pid, mount, network, IPC, UTS, cgroup; and user, when the
grader is not root), a clean environment, and no survivors: the pid namespace dies with its first
process, and --die-with-parent ties that to the grader. What the file system inside holds is the mounts
layer's (mounts.py), the filter bwrap loads the seccomp layer's, and setpriv, which bwrap executes
last, the identity layer's.

With the identity layer, bwrap (run by root) makes no user namespace: the mounts are made with root's
right to read the host paths (an interpreter under /root), and nothing inside runs as root, because
setpriv switches to the dedicated user before the program runs.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chainrule.grading.sandbox.plan import Plan


def prepare(plan: Plan) -> None:
    """bwrap's namespaces, capabilities, environment and working directory: the start of plan.bwrap."""
    if not plan.isolation.bubblewrap:
        return
    argv = [plan.isolation.bubblewrap, "--die-with-parent", "--new-session", "--clearenv"]
    if plan.isolation.identity is None:
        # Run as root, bwrap would keep every capability inside the sandbox: enough to remount the
        # read-only binds writable (mount_setattr) or mount cgroup hierarchies and lift the limits.
        argv += ["--unshare-all", "--cap-drop", "ALL"]
    else:
        # No user namespace: one made by root would charge every budget inside to root. setpriv keeps
        # CAP_SETUID/CAP_SETGID just long enough to become the dedicated user, which has no capability.
        argv += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                 "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    for key, value in plan.env.items():
        argv += ["--setenv", key, value]
    plan.gate = Gate()
    plan.bwrap = argv + ["--chdir", plan.work] + plan.gate.options


class Gate:
    """bwrap's own wait: it writes its child's pid on --info-fd once it has made the namespaces, and after
    the mounts it reads --block-fd before it forks the program. Meanwhile the grader takes both processes
    in (the cgroup, the rlimits: plan.on_start), so the program starts inside every layer."""

    def __init__(self) -> None:
        self.info, info_end = os.pipe()
        block_end, self.block = os.pipe()
        self.child_fds = [info_end, block_end]  # bwrap's ends, closed here once it has them
        self.own_fds = [self.info, self.block]
        self.options = ["--info-fd", str(info_end), "--block-fd", str(block_end)]

    def command(self, plan: Plan) -> list[str]:
        return plan.command()

    def waiting(self, process: subprocess.Popen[bytes], timeout: float) -> list[int]:
        """The pids that wait: bwrap and its child in the new namespaces (OSError if bwrap made none)."""
        self._close_child_fds()
        report, deadline = b"", time.monotonic() + timeout
        while select.select([self.info], [], [], max(0.0, deadline - time.monotonic()))[0]:
            chunk = os.read(self.info, 4096)
            if not chunk:  # bwrap closes it once it has written
                break
            report += chunk
        try:
            return [process.pid, int(json.loads(report)["child-pid"])]
        except (ValueError, KeyError, TypeError):
            try:  # bwrap closes its end as it exits: wait for the exit itself before reading why
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise OSError(f"bwrap made no sandbox within {timeout:g} s") from None
            # Before its clone (no report), bwrap alone held its stderr: reading it cannot block.
            said = process.stderr.read(300).decode(errors="replace").strip() if process.stderr and not report else ""
            raise OSError(f"bwrap could not make the sandbox: {said or f'exit status {process.returncode}'}") from None

    def go(self, timeout: float) -> str | None:
        """Let bwrap fork the program; bwrap's own failures from here on are the run's exit status and stderr."""
        os.write(self.block, b"g")
        return None

    def _close_child_fds(self) -> None:
        while self.child_fds:
            os.close(self.child_fds.pop())

    def close(self) -> None:
        self._close_child_fds()
        while self.own_fds:
            os.close(self.own_fds.pop())


def probe() -> tuple[str | None, list[tuple[str, str]]]:
    """The path of bwrap, or why there is none (isolation.py then tries a run under it)."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return None, [("bubblewrap", "bwrap was not found on PATH (install the bubblewrap package)")]
    return bwrap, []
