"""The identity layer: learner code runs as a dedicated unprivileged uid/gid, never as the grader's root.

Kernel budgets such as inotify instances, POSIX message-queue bytes and pending signals are counted per
user of the host. A user namespace does not separate them: its processes are charged to the host uid
that created it. So when the grader runs as root, the run switches to the dedicated user last, just
before the program: under bubblewrap, bwrap (which makes no user namespace then) executes util-linux's
setpriv inside, which switches and executes the program; without bubblewrap the launcher switches
itself. Whatever the submission takes is charged to that user, and root's budgets stay whole. A grader
that is not root cannot switch users; the layer is then missing and says why.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # the launcher imports this module: no `typing` and no package imports
if TYPE_CHECKING:
    from chainrule.grading.sandbox.plan import Plan

# An id in the range Debian leaves unassigned (65000-65533), used by no account; override with
# CHAINRULE_SANDBOX_UID / CHAINRULE_SANDBOX_GID when the host uses it.
DEFAULT_ID = 65_431


def sandbox_ids() -> tuple[int, int]:
    uid = int(os.environ.get("CHAINRULE_SANDBOX_UID", DEFAULT_ID))
    gid = int(os.environ.get("CHAINRULE_SANDBOX_GID", uid))
    return uid, gid


def unavailable_reason(uid: int) -> str | None:
    """Why the grader cannot run code as `uid`, or None when it can."""
    if not hasattr(os, "setresuid"):
        return "switching users needs a POSIX system"
    if os.geteuid() != 0:
        return (f"the grader runs as uid {os.geteuid()}, not root, so it cannot switch to a dedicated user; "
                "submissions run as that user")
    if uid == 0:
        return "CHAINRULE_SANDBOX_UID is 0 (root)"
    account = _account_name(uid)
    if account is not None:
        return f"uid {uid} belongs to the account {account!r}; set CHAINRULE_SANDBOX_UID to an unused id"
    return None


def _account_name(uid: int) -> str | None:
    try:
        import pwd
    except ImportError:
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return None


def prepare(plan: Plan) -> None:
    """Let the dedicated user reach its inputs, and switch to it last (setpriv inside bwrap, or the launcher)."""
    if plan.isolation.identity is None:
        return
    uid, gid = plan.isolation.identity
    os.chmod(plan.scratch, 0o711)  # traverse only: the user reads the inputs it is given by name
    if plan.isolation.bubblewrap:
        # bwrap makes `work` as a tmpfs the user may write (mounts.py); setpriv keeps CAP_SETUID/CAP_SETGID
        # just long enough to become the dedicated user, which has no capability.
        plan.inside += setpriv_argv(uid, gid)
    else:
        os.chown(plan.work, uid, gid)
        plan.step("identity", uid, gid)


def setpriv() -> str:
    """util-linux's setpriv, which switches users inside bubblewrap (mounts.py binds it there)."""
    import shutil

    found = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if not found:
        raise OSError("setpriv (from util-linux) was not found; it switches to the sandbox's user")
    return os.path.realpath(found)


def setpriv_argv(uid: int, gid: int) -> list[str]:
    return [setpriv(), f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all", "--no-new-privs",
            "--"]


def in_child(uid: str, gid: str) -> None:
    """In the launcher: leave every supplementary group, then switch group and user (all three ids each)."""
    os.setgroups([])
    os.setresgid(int(gid), int(gid), int(gid))
    os.setresuid(int(uid), int(uid), int(uid))
