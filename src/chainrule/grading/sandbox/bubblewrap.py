"""The bubblewrap layer: Linux namespaces (pid, mount, network, IPC, UTS, cgroup; and user, when the
grader is not root) and a file system of read-only binds, with the sensitive parts of /proc masked.

Inside: the system directories and program files of mounts.py (read-only), /proc with /proc/sys
read-only and the entries of mounts.PROC_MASKED covered, a minimal /dev, the scratch directory
read-only and its `work` subdirectory as a size-capped tmpfs (the only writable place and the working
directory). No network, no host files, no capabilities, and no survivors: the pid namespace dies with
its first process, and --die-with-parent ties that to the grader.

With the identity layer, bwrap (run by root) makes no user namespace and ends by executing setpriv,
which switches to the dedicated user and executes the program: the mounts are made with root's right to
read the host paths (an interpreter under /root), and nothing inside runs as root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from typing import Sequence

from chainrule.grading.sandbox import mounts
from chainrule.grading.sandbox.limits import MB

# Both mode 000, in the scratch directory: bound over a masked /proc file, and over a masked /proc
# directory or a package directory.
MASK_FILE = ".masked-file"
MASK_DIR = ".masked-dir"


def prepare_scratch(scratch: str) -> None:
    """Create the scratch directory's `work` subdirectory and the two unreadable mask sources."""
    os.makedirs(os.path.join(scratch, "work"), exist_ok=True)
    mask_file, mask_dir = os.path.join(scratch, MASK_FILE), os.path.join(scratch, MASK_DIR)
    if not os.path.exists(mask_file):
        os.close(os.open(mask_file, os.O_CREAT | os.O_WRONLY, 0))
        os.chmod(mask_file, 0)
    if not os.path.exists(mask_dir):
        os.mkdir(mask_dir, 0)
        os.chmod(mask_dir, 0)


def build(bwrap: str, scratch: str, program: str, read_only: Sequence[str], env: dict[str, str],
          work_bytes: int = 64 * MB, seccomp_fd: int | None = None,
          drop_to: tuple[int, int] | None = None) -> list[str]:
    """bwrap's argv, up to and including the `--` before the program (or before setpriv, which switches
    to the `drop_to` (uid, gid) and then executes the program)."""
    prepare_scratch(scratch)
    argv = [bwrap, "--die-with-parent", "--new-session", "--clearenv"]
    if drop_to is None:
        # Run as root, bwrap would keep every capability inside the sandbox: enough to remount the
        # read-only binds writable (mount_setattr) or mount cgroup hierarchies and lift the limits.
        argv += ["--unshare-all", "--cap-drop", "ALL"]
    else:
        # No user namespace: one made by root would charge every budget inside to root. setpriv keeps
        # CAP_SETUID/CAP_SETGID just long enough to become the dedicated user, which has no capability.
        argv += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                 "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    system = mounts.system_dirs()
    files = list(dict.fromkeys(mounts.program_binds(program) + [os.path.realpath(p) for p in read_only]
                               + ([mounts.setpriv()] if drop_to else [])))
    files = [p for p in files if not _inside(p, system)]
    for path in system + files:
        argv += ["--ro-bind", path, path]
    for target, link in mounts.root_links():
        argv += ["--symlink", target, link]
    # /proc/sys read-only: without the identity layer uid 0 inside is the host's root.
    argv += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    mask_file, mask_dir = os.path.join(scratch, MASK_FILE), os.path.join(scratch, MASK_DIR)
    for path in mounts.masked_proc_paths():
        argv += ["--ro-bind", mask_dir if os.path.isdir(path) else mask_file, path]
    # /dev/shm is a small tmpfs and the rest of /dev read-only, so `work` is the one sizeable writable place.
    argv += ["--dev", "/dev", "--size", str(MB), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for path in mounts.package_dirs(tuple(system + files)):
        argv += ["--ro-bind", mask_dir, path]
    work = os.path.join(scratch, "work")
    argv += ["--ro-bind", scratch, scratch, "--size", str(work_bytes)]
    argv += ["--perms", "0777"] if drop_to else []  # bwrap makes it as root; the dedicated user writes there
    argv += ["--tmpfs", work]
    # The directories bwrap creates to hold the binds are private to root: let every user through them,
    # but not list them (an empty `chainrule` directory on the way to the runtime files would otherwise
    # import as a namespace package).
    for directory in _created_parents(system + files + [scratch, "/proc/sys", "/dev/shm"]):
        argv += ["--chmod", "0711", directory]
    argv += ["--remount-ro", "/", "--chdir", work]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv.append("--")
    if drop_to is not None:
        uid, gid = drop_to
        argv += [mounts.setpriv(), f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
                 "--no-new-privs", "--"]
    return argv


def _inside(path: str, directories: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def _created_parents(bound: Sequence[str]) -> list[str]:
    """Every ancestor of a bound path that is not itself bound or inside a bind, shallowest first."""
    parents = set()
    for path in bound:
        parent = os.path.dirname(path)
        while parent not in ("/", ""):
            parents.add(parent)
            parent = os.path.dirname(parent)
    return sorted((p for p in parents if not _inside(p, bound) and p not in ("/proc", "/dev")),
                  key=lambda p: (p.count("/"), p))


def probe() -> tuple[str | None, list[tuple[str, str]]]:
    """The path of a bwrap that runs this interpreter as the grader's user, or why there is none."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return None, [("bubblewrap", "bwrap was not found on PATH (install the bubblewrap package)")]
    with tempfile.TemporaryDirectory(prefix="chainrule-probe-") as scratch:
        try:
            argv = build(bwrap, scratch, sys.executable, [], {"PATH": "/usr/bin:/bin"})
            done = subprocess.run(argv + [os.path.realpath(sys.executable), "-I", "-S", "-c", "print('ok')"],
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired) as error:
            return None, [("bubblewrap", f"{bwrap} could not run: {error}")]
        if done.returncode != 0 or done.stdout.strip() != b"ok":
            detail = done.stderr.decode(errors="replace").strip()[:300] or f"exit status {done.returncode}"
            return None, [("bubblewrap", f"{bwrap} --unshare-all failed: {detail}")]
    return bwrap, []
