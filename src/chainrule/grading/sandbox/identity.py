"""The identity layer: learner code runs as a dedicated unprivileged uid/gid, never as the grader's root.

Kernel budgets such as inotify instances, POSIX message-queue bytes and pending signals are counted per
user of the host. A user namespace does not separate them: its processes are charged to the host uid
that created it. So when the grader runs as root, the child switches to SANDBOX_UID/SANDBOX_GID before
it executes bubblewrap (or the program): whatever the submission takes is charged to that user, and
root's budgets stay whole. A grader that is not root cannot switch users; the layer is then missing
and says why.
"""

from __future__ import annotations

import os

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


def drop_to(uid: int, gid: int) -> None:
    """In the child: leave every supplementary group, then switch group and user (all three ids each)."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
