"""The seccomp layer: a system-call filter that denies what the harnesses never need.

The filter allows by default and denies, with EPERM unless noted, every group in DENIED below; each
group carries the reason it is denied. Besides those: sockets other than AF_UNIX (no network even
without bubblewrap), clone() with a namespace flag, and io_uring and clone3 with ENOSYS (io_uring would
bypass the filter; clone3's flags cannot be inspected; ENOSYS makes libuv and glibc fall back).

The grader compiles the filter once (probe) with pyseccomp and libseccomp (Linux; imported lazily, so
this module imports everywhere) and hands each run the BPF program in a memory file: bwrap --seccomp
loads it, or, without bubblewrap, the launcher (in_child), while still the grader's user; the switch to
the dedicated user comes after it, last.
"""

from __future__ import annotations

import errno
import os

TYPE_CHECKING = False  # the launcher imports this module: no `typing` and no package imports
if TYPE_CHECKING:
    import pyseccomp

    from chainrule.grading.sandbox.plan import Plan

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


def build_filter() -> pyseccomp.SyscallFilter:
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


def _add(flt: pyseccomp.SyscallFilter, action: int, name: str, *args: pyseccomp.Arg) -> None:
    try:
        flt.add_rule(action, name, *args)
    except (RuntimeError, ValueError, OSError):
        pass  # a call this architecture does not have


def probe() -> tuple[bytes | None, list[tuple[str, str]]]:
    """The compiled BPF program of the filter (bwrap --seccomp loads it), or why there is none."""
    import tempfile

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


def prepare(plan: Plan) -> None:
    """The compiled filter in a memory file the run inherits: for bwrap --seccomp, or for in_child."""
    if plan.isolation.seccomp is None:
        return
    fd = os.memfd_create("chainrule-seccomp", 0)
    plan.pass_fds.append(fd)  # the grader's copy is closed once the run has started (or the plan ends)
    os.write(fd, plan.isolation.seccomp)
    os.lseek(fd, 0, os.SEEK_SET)
    if plan.isolation.bubblewrap:
        plan.bwrap += ["--seccomp", str(fd)]  # bwrap loads it just before it executes what follows
    else:
        plan.step("seccomp", fd)


PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def in_child(fd: str) -> None:
    """In the launcher: load the BPF program (an array of struct sock_filter, as bwrap --seccomp takes it)
    from the file `fd`, for this process and everything it executes."""
    import ctypes

    chunks = []
    while chunk := os.read(int(fd), 65536):
        chunks.append(chunk)
    os.close(int(fd))
    program = b"".join(chunks)

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1))  # nothing executed from here on gains privileges
    prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog))


def prctl(option: int, *args: object) -> None:
    """Linux's prctl(option, *args), or an OSError naming the option."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, *args, *[ctypes.c_ulong(0)] * (4 - len(args))) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"prctl({option}): {os.strerror(number)}")
