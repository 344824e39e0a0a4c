"""The seccomp layer: a system-call filter that denies what the harnesses never need.

The filter allows by default and denies, with EPERM unless noted, every group in DENIED below; each
group carries the reason it is denied. Besides those: sockets other than AF_UNIX (no network even
without bubblewrap), clone() with a namespace flag, and io_uring and clone3 with ENOSYS (io_uring would
bypass the filter; clone3's flags cannot be inspected; ENOSYS makes libuv and glibc fall back).

Needs pyseccomp and libseccomp (Linux); imported lazily, so this module imports everywhere.
"""

from __future__ import annotations

import errno
import tempfile

DENIED: tuple[tuple[tuple[str, ...], str], ...] = (
    (("io_setup", "io_submit", "io_getevents", "io_pgetevents", "io_cancel", "io_destroy"),
     "kernel AIO contexts come from one budget for the whole host (fs.aio-max-nr)"),
    (("mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"),
     "POSIX message queues are charged to a per-user budget (RLIMIT_MSGQUEUE)"),
    (("inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch", "fanotify_init", "fanotify_mark"),
     "inotify and fanotify instances and watches are per-user budgets (fs.inotify.max_user_instances)"),
    (("msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl", "shmget", "shmat",
      "shmdt", "shmctl"),
     "System V IPC objects count against host-wide limits whenever there is no IPC namespace"),
    (("keyctl", "add_key", "request_key"), "kernel keyrings are a per-user quota and hold other programs' secrets"),
    (("ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp"),
     "they read, write or inspect other processes"),
    (("mount", "umount2", "pivot_root", "mount_setattr", "open_tree", "move_mount", "fsopen", "fsconfig",
      "fsmount", "fspick", "unshare", "setns"),
     "they change mounts (the new mount API included) or enter and create namespaces"),
    (("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "bpf", "perf_event_open",
      "userfaultfd", "syslog"),
     "they load code into the kernel, observe it, or widen its attack surface"),
    (("open_by_handle_at", "name_to_handle_at"), "file handles open files around the mount namespace"),
    (("swapon", "swapoff", "reboot", "acct", "quotactl", "settimeofday", "clock_settime", "clock_adjtime",
      "adjtimex"),
     "they change the whole machine"),
)

# Calls that fail with ENOSYS instead, so that runtimes fall back to what the filter can see.
UNAVAILABLE: tuple[tuple[tuple[str, ...], str], ...] = (
    (("io_uring_setup", "io_uring_enter", "io_uring_register"),
     "io_uring performs its operations without passing through this filter"),
    (("clone3",), "its flags live in memory the filter cannot read; glibc falls back to clone"),
)

# clone() flag bits of CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
AF_UNIX = 1


def denied_names() -> list[str]:
    return [name for names, _ in DENIED + UNAVAILABLE for name in names]


def build_filter():
    """The pyseccomp filter described above (raises ImportError without pyseccomp)."""
    import pyseccomp

    flt = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    for group, action in ((DENIED, pyseccomp.ERRNO(errno.EPERM)), (UNAVAILABLE, pyseccomp.ERRNO(errno.ENOSYS))):
        for names, _ in group:
            for name in names:
                _add(flt, action, name)
    deny = pyseccomp.ERRNO(errno.EPERM)
    _add(flt, deny, "socket", pyseccomp.Arg(0, pyseccomp.NE, AF_UNIX))
    for flag in NAMESPACE_FLAGS:  # one rule per flag: clone(flags) with that bit set fails
        _add(flt, deny, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    return flt


def _add(flt, action, name: str, *args) -> None:
    try:
        flt.add_rule(action, name, *args)
    except (RuntimeError, ValueError, OSError):
        pass  # a call this architecture does not have


def probe() -> tuple[bytes | None, list[tuple[str, str]]]:
    """The compiled BPF program of the filter (bwrap --seccomp loads it), or why there is none."""
    try:
        import pyseccomp  # noqa: F401
    except ImportError as error:
        return None, [("seccomp", f"pyseccomp is not installed ({error}); it comes with chainrule on Linux: "
                                  "reinstall chainrule to get it")]
    except (RuntimeError, OSError) as error:  # pyseccomp loads the system's libseccomp when imported
        return None, [("seccomp", f"libseccomp is missing ({error}); install the libseccomp2 package (Debian, "
                                  "Ubuntu) or libseccomp (Fedora, Arch) to add this layer")]
    try:
        flt = build_filter()
        with tempfile.TemporaryFile() as f:
            flt.export_bpf(f)
            f.seek(0)
            program = f.read()
    except Exception as error:  # libseccomp missing or refusing: report, never break grading
        return None, [("seccomp", f"could not build the seccomp filter: {error}")]
    if not program:
        return None, [("seccomp", "libseccomp produced an empty filter")]
    return program, []
