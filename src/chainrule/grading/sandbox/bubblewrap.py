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

import shutil
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
    plan.bwrap = argv + ["--chdir", plan.work]


def probe() -> tuple[str | None, list[tuple[str, str]]]:
    """The path of bwrap, or why there is none (isolation.py then tries a run under it)."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return None, [("bubblewrap", "bwrap was not found on PATH (install the bubblewrap package)")]
    return bwrap, []
