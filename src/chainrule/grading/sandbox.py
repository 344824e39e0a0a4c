"""Run untrusted code in layers of isolation, each probed once and reported.

Layers, outermost first:

* process (always): a separate process in a new session (so the whole group can be killed), a clean
  environment, a fresh scratch directory as working directory, stdin closed, stdout/stderr read
  incrementally and capped, a wall-clock timeout, and a bounded wait for the pipes (a child that
  calls setsid and keeps them open cannot hang the grader).
* rlimits (always): CPU seconds (soft < hard: SIGXCPU first, SIGKILL after), address space, file
  size, open files, no core dumps. RLIMIT_NPROC is not used: it does not bind root and counts threads.
* bubblewrap (when `bwrap` works here): Linux namespaces with `--unshare-all --die-with-parent
  --new-session --clearenv`. Only /usr (read-only), the interpreter's own prefix (read-only), the
  grader's runtime files (read-only) and the scratch directory exist inside: no network, no host
  files, and no survivors (the pid namespace dies with its first process).
* cgroup (when a writable hierarchy exists, usually as root): a fresh group per run with a process
  limit (pids.max) and a memory limit (memory.max, or memory.limit_in_bytes on cgroup v1). Every
  process left in the group is killed at the end.

`probe()` tries each optional layer once and remembers why a layer is missing; every result carries
that report, so a learner (or a reviewer) sees exactly how strongly their code was isolated.
"""

from __future__ import annotations

import errno
import functools
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

MB = 1024 * 1024

__all__ = ["Limits", "RunOutcome", "Isolation", "probe", "run", "isolation_report", "scratch_directory"]


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run. `cpu_seconds` is the soft limit; the hard one is one second more."""

    wall_seconds: float = 10.0
    cpu_seconds: int = 5
    address_space_bytes: int = 1024 * MB
    file_size_bytes: int = 16 * MB
    open_files: int = 256
    output_bytes: int = 1_000_000
    max_processes: int = 64
    memory_bytes: int = 512 * MB
    pipe_grace_seconds: float = 0.3
    work_bytes: int = 64 * MB  # size of the writable tmpfs under bubblewrap


@dataclass
class RunOutcome:
    """What happened to one sandboxed run."""

    stdout: bytes
    stderr: bytes
    returncode: int | None
    signal: int | None
    timed_out: bool = False
    output_exceeded: bool = False
    memory_exceeded: bool = False
    process_limit_hit: bool = False
    duration_ms: float = 0.0
    isolation: dict = field(default_factory=dict)
    start_error: str | None = None  # the sandbox itself could not start the program


@dataclass(frozen=True)
class Isolation:
    """The result of probing every layer: which work here, and the error of each that does not."""

    bubblewrap: str | None  # path of a working bwrap, or None
    cgroup: "_CgroupBackend | None"
    seccomp: bytes | None  # the compiled filter, when pyseccomp and libseccomp work here
    missing: tuple[tuple[str, str], ...]

    @property
    def level(self) -> str:
        if self.bubblewrap and self.cgroup:
            return "strong"
        if self.bubblewrap or self.cgroup:
            return "partial"
        return "minimal"

    def report(self) -> dict:
        layers = {
            "process": True,
            "rlimits": True,
            "bubblewrap": bool(self.bubblewrap),
            "cgroup": bool(self.cgroup),
            "seccomp": self.seccomp is not None,
        }
        if self.cgroup:
            layers["cgroup_version"] = self.cgroup.version
        return {
            "level": self.level,
            "layers": layers,
            "missing": [{"layer": layer, "error": error} for layer, error in self.missing],
        }


# ---------------------------------------------------------------------------------------------- cgroups


class _CgroupBackend:
    """Creates one cgroup per run, with a process and a memory limit, and kills whatever is left in it."""

    def __init__(self, version: int, pids_parent: Path, memory_parent: Path) -> None:
        self.version = version
        self.pids_parent = pids_parent
        self.memory_parent = memory_parent

    def create(self, limits: Limits) -> "_RunCgroup":
        name = f"chainrule-{uuid.uuid4().hex[:12]}"
        if self.version == 2:
            path = self.pids_parent / name
            path.mkdir()
            group = _RunCgroup(self.version, [path])
            _write(path / "pids.max", str(limits.max_processes))
            _write(path / "memory.max", str(limits.memory_bytes))
            _try_write(path / "memory.swap.max", "0")
            return group
        pids, memory = self.pids_parent / name, self.memory_parent / name
        pids.mkdir()
        try:
            memory.mkdir()
        except OSError:
            pids.rmdir()
            raise
        group = _RunCgroup(self.version, [pids, memory])
        _write(pids / "pids.max", str(limits.max_processes))
        _write(memory / "memory.limit_in_bytes", str(limits.memory_bytes))
        _try_write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        return group


class _RunCgroup:
    def __init__(self, version: int, paths: list[Path]) -> None:
        self.version = version
        self.paths = paths

    def procs_files(self) -> list[str]:
        return [str(p / "cgroup.procs") for p in self.paths]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.paths:
            try:
                found.update(int(x) for x in (path / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return found

    def memory_exceeded(self) -> bool:
        if self.version == 2:
            return _read_keyed(self.paths[0] / "memory.events").get("oom_kill", 0) > 0
        return _read_keyed(self.paths[1] / "memory.oom_control").get("oom_kill", 0) > 0

    def process_limit_hit(self) -> bool:
        return _read_keyed(self.paths[0] / "pids.events").get("max", 0) > 0

    def _groups(self) -> list[Path]:
        """The run's groups and any group below them (a submission may have made some), deepest first."""
        found: list[Path] = []
        for path in self.paths:
            try:
                found.extend(p for p in path.rglob("*") if p.is_dir())
            except OSError:
                pass
            found.append(path)
        return sorted(found, key=lambda p: -len(p.parts))

    def pids_everywhere(self) -> set[int]:
        found: set[int] = set()
        for group in self._groups():
            try:
                found.update(int(x) for x in (group / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return found

    def kill_all(self, deadline: float) -> None:
        """SIGKILL every process in the group and its subgroups until they are empty."""
        if self.version == 2 and _try_write(self.paths[0] / "cgroup.kill", "1"):
            pass
        while time.monotonic() < deadline:
            pids = self.pids_everywhere()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.001)

    def remove(self) -> None:
        for path in self._groups():  # children first: a group with subgroups cannot be removed
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)  # the last killed processes are still being reaped


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _try_write(path: Path, text: str) -> bool:
    try:
        _write(path, text)
        return True
    except OSError:
        return False


def _read_keyed(path: Path) -> dict[str, int]:
    try:
        pairs = (line.split() for line in path.read_text().splitlines())
        return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}
    except OSError:
        return {}


def _own_cgroup(controller: str | None) -> str:
    """This process's cgroup path for a v1 controller, or the v2 path when controller is None."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if controller is None and hierarchy == "0":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    raise OSError(f"no {controller or 'cgroup v2'} entry in /proc/self/cgroup")


def _probe_cgroup() -> tuple[_CgroupBackend | None, list[tuple[str, str]]]:
    """Find a hierarchy where we may create groups with both a pids and a memory limit."""
    errors: list[str] = []
    limits = Limits()
    root = Path("/sys/fs/cgroup")
    # cgroup v2: the unified hierarchy, either at /sys/fs/cgroup or at /sys/fs/cgroup/unified.
    for base in (root, root / "unified"):
        controllers_file = base / "cgroup.controllers"
        if not controllers_file.exists():
            continue
        try:
            parent = base / _own_cgroup(None).lstrip("/")
            available = set((parent / "cgroup.controllers").read_text().split())
            if not {"pids", "memory"} <= available:
                raise OSError(
                    f"{parent} offers controllers {sorted(available) or 'none'}, and pids and memory are both needed"
                )
            # A group with processes cannot delegate controllers: make a sub-group for our runs.
            backend = _CgroupBackend(2, parent, parent)
            group = backend.create(limits)
            group.remove()
            return backend, []
        except OSError as error:
            errors.append(f"cgroup v2 at {base}: {error}")
    # cgroup v1: separate pids and memory hierarchies.
    try:
        pids_parent = root / "pids" / _own_cgroup("pids").lstrip("/")
        memory_parent = root / "memory" / _own_cgroup("memory").lstrip("/")
        backend = _CgroupBackend(1, pids_parent, memory_parent)
        group = backend.create(limits)
        group.remove()
        return backend, [("cgroup-v2", "; ".join(errors))] if errors else []
    except OSError as error:
        errors.append(f"cgroup v1: {error}")
    return None, [("cgroup", "; ".join(errors) or "no cgroup hierarchy is mounted at /sys/fs/cgroup")]


# ---------------------------------------------------------------------------------------------- bubblewrap


def _interpreter_binds() -> list[str]:
    """Directories outside /usr that the Python interpreter needs, to bind read-only."""
    found: list[str] = []
    for path in (sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))):
        real = os.path.realpath(path)
        if not real.startswith("/usr/") and real not in found and os.path.isdir(real):
            found.append(real)
    # A venv's bin/python is a link into the base prefix: bind the venv's own path too.
    for path in (sys.prefix,):
        if not path.startswith("/usr/") and path not in found and os.path.isdir(path):
            found.append(path)
    return found


RUNTIME_DIR = Path(__file__).resolve().parent


def _bwrap_argv(
    bwrap: str, scratch: str, read_only: Sequence[str], env: dict[str, str], work_bytes: int = 64 * MB,
    seccomp_fd: int | None = None,
) -> list[str]:
    """bwrap's arguments: the scratch directory's inputs read-only, its `work` subdirectory a size-capped
    tmpfs (the only writable place, also the working directory), and nothing else of the host."""
    argv = [
        bwrap,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        # Run as root, bwrap would keep every capability inside the sandbox: enough to remount the
        # read-only binds writable (mount_setattr) or mount cgroup hierarchies and lift the limits.
        "--cap-drop", "ALL",
        "--ro-bind", "/usr", "/usr",
    ]
    for link in ("lib", "lib64", "bin", "sbin", "lib32", "libx32"):
        target = os.path.join("/", link)
        if os.path.islink(target):
            argv += ["--symlink", os.readlink(target), target]
        elif os.path.isdir(target):
            argv += ["--ro-bind", target, target]
    # /proc/sys read-only: uid 0 inside is the host's root, and kernel settings only check the uid.
    # /dev/shm is a small tmpfs and the rest of /dev read-only, so `work` is the one sizeable writable place.
    argv += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev",
             "--size", str(MB), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for path in read_only:
        argv += ["--ro-bind", path, path]
    work = os.path.join(scratch, "work")
    argv += ["--ro-bind", scratch, scratch, "--size", str(work_bytes), "--tmpfs", work,
             "--remount-ro", "/", "--chdir", work]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv.append("--")
    return argv


def _probe_bubblewrap() -> tuple[str | None, list[tuple[str, str]]]:
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return None, [("bubblewrap", "bwrap was not found on PATH (install the bubblewrap package)")]
    with tempfile.TemporaryDirectory(prefix="chainrule-probe-") as scratch:
        os.mkdir(os.path.join(scratch, "work"))
        argv = _bwrap_argv(bwrap, scratch, _interpreter_binds(), {"PATH": "/usr/bin:/bin"})
        try:
            done = subprocess.run(
                argv + [sys.executable, "-I", "-S", "-c", "print('ok')"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return None, [("bubblewrap", f"{bwrap} could not run: {error}")]
        if done.returncode != 0 or done.stdout.strip() != b"ok":
            detail = done.stderr.decode(errors="replace").strip()[:300] or f"exit status {done.returncode}"
            return None, [("bubblewrap", f"{bwrap} --unshare-all failed: {detail}")]
    return bwrap, []


# System calls a submission never needs and an attacker would like: tracing other processes, kernel
# modules and keys, mounting, new namespaces, BPF, perf, userfaultfd, file handles. They fail with EPERM.
_DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "mount", "umount2", "pivot_root", "swapon", "swapoff", "reboot",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "unshare", "setns",
    "open_by_handle_at", "name_to_handle_at", "acct", "quotactl", "settimeofday", "clock_settime",
    # The newer mount API: each of these could remount or create mounts where mount() is denied.
    "mount_setattr", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
)
# clone() flag bits of CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
_AF_UNIX = 1


def _seccomp_filter():
    """A pyseccomp filter: allow by default; deny the calls above, sockets other than AF_UNIX, clone
    with namespace flags, and io_uring (which would bypass the filter; ENOSYS lets libuv fall back)."""
    import pyseccomp

    flt = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    deny = pyseccomp.ERRNO(errno.EPERM)
    for name in _DENIED_SYSCALLS:
        try:
            flt.add_rule(deny, name)
        except (RuntimeError, ValueError, OSError):
            pass  # a call this architecture does not have
    flt.add_rule(deny, "socket", pyseccomp.Arg(0, pyseccomp.NE, _AF_UNIX))
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        # One rule per namespace flag: clone(flags) with that bit set fails.
        try:
            flt.add_rule(deny, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
        except (RuntimeError, ValueError, OSError):
            pass
    for name in ("io_uring_setup", "io_uring_enter", "io_uring_register", "clone3"):
        try:
            flt.add_rule(pyseccomp.ERRNO(errno.ENOSYS), name)  # clone3 can't be inspected: fall back to clone
        except (RuntimeError, ValueError, OSError):
            pass
    return flt


def _probe_seccomp() -> tuple[bytes | None, list[tuple[str, str]]]:
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
        flt = _seccomp_filter()
        with tempfile.TemporaryFile() as f:
            flt.export_bpf(f)
            f.seek(0)
            program = f.read()
    except Exception as error:  # libseccomp missing or refusing: report, never break grading
        return None, [("seccomp", f"could not build the seccomp filter: {error}")]
    if not program:
        return None, [("seccomp", "libseccomp produced an empty filter")]
    return program, []


_probe_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _probe_cached() -> Isolation:
    missing: list[tuple[str, str]] = []
    bwrap, errors = _probe_bubblewrap()
    missing += errors
    if os.environ.get("CHAINRULE_SANDBOX_NO_CGROUP"):
        cgroup, errors = None, [("cgroup", "disabled by CHAINRULE_SANDBOX_NO_CGROUP")]
    else:
        cgroup, errors = _probe_cgroup()
    missing += errors
    if os.environ.get("CHAINRULE_SANDBOX_NO_SECCOMP"):
        seccomp, errors = None, [("seccomp", "disabled by CHAINRULE_SANDBOX_NO_SECCOMP")]
    else:
        seccomp, errors = _probe_seccomp()
    missing += errors
    if os.environ.get("CHAINRULE_SANDBOX_NO_BWRAP"):
        bwrap = None
        missing.insert(0, ("bubblewrap", "disabled by CHAINRULE_SANDBOX_NO_BWRAP"))
    return Isolation(bubblewrap=bwrap, cgroup=cgroup, seccomp=seccomp, missing=tuple(missing))


def probe() -> Isolation:
    """Probe every optional layer once per process (the answer is cached)."""
    with _probe_lock:
        return _probe_cached()


def isolation_report() -> dict:
    """{"level": "strong"|"partial"|"minimal", "layers": {...}, "missing": [{"layer", "error"}]}"""
    return probe().report()


# ---------------------------------------------------------------------------------------------- running


def scratch_directory() -> tempfile.TemporaryDirectory:
    """A fresh private directory for one run (removed when the context ends).

    Put the program's inputs in it; the program itself may write only in its `work` subdirectory.
    """
    return tempfile.TemporaryDirectory(prefix="chainrule-grade-", ignore_cleanup_errors=True)


def _set_limits(limits: Limits, cgroup_procs: list[str], seccomp_filter=None) -> None:
    """Runs in the child between fork and exec: join the run's cgroup, lower the rlimits, and (without
    bubblewrap, which loads it itself) load the seccomp filter last."""
    for procs in cgroup_procs:
        with open(procs, "w") as f:
            f.write("0")  # "0" means the writing process itself
    cpu = max(1, int(limits.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if seccomp_filter is not None:
        seccomp_filter.load()


def _kill_marked(marker: str) -> None:
    """Without namespaces or cgroups: SIGKILL every process whose environment carries the run's marker."""
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    os.kill(int(entry), signal.SIGKILL)
        except OSError:
            pass


def run(
    argv: Sequence[str],
    scratch: str,
    limits: Limits = Limits(),
    read_only: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> RunOutcome:
    """Run argv inside every working layer and return its capped output and how it ended.

    `scratch` holds the program's inputs; its `work` subdirectory (created here) is the working directory
    and the only writable place. `read_only` lists extra directories the program needs (the interpreter's
    prefix is added automatically). Never raises for anything the program does.
    """
    isolation = probe()
    marker = f"CHAINRULE_SANDBOX_RUN={uuid.uuid4().hex}"
    work = os.path.join(scratch, "work")
    os.makedirs(work, exist_ok=True)
    clean_env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": work,
        "TMPDIR": work,
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        **(env or {}),
    }
    key, value = marker.split("=", 1)
    clean_env[key] = value
    command = list(argv)
    seccomp_fd: int | None = None
    direct_filter = None
    if isolation.seccomp is not None:
        if isolation.bubblewrap:
            seccomp_fd = os.memfd_create("chainrule-seccomp", 0)  # bwrap reads the BPF program from it
            os.write(seccomp_fd, isolation.seccomp)
            os.lseek(seccomp_fd, 0, os.SEEK_SET)
        else:
            direct_filter = _seccomp_filter()  # loaded in the child just before exec
    if isolation.bubblewrap:
        binds = [p for p in _interpreter_binds() + [str(p) for p in read_only] if not p.startswith("/usr/")]
        command = _bwrap_argv(
            isolation.bubblewrap, scratch, list(dict.fromkeys(binds)), clean_env, limits.work_bytes, seccomp_fd
        ) + command

    cgroup = None
    report = isolation.report()
    if isolation.cgroup:
        try:
            cgroup = isolation.cgroup.create(limits)
        except OSError as error:
            # This run goes without its group (every other layer still applies), and says so.
            report = Isolation(isolation.bubblewrap, None, isolation.seccomp, isolation.missing + (
                ("cgroup", f"could not create this run's cgroup: {error}"),)).report()

    started = time.monotonic()
    deadline = started + limits.wall_seconds
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=work,
            env=clean_env,
            start_new_session=True,
            close_fds=True,
            pass_fds=(seccomp_fd,) if seccomp_fd is not None else (),
            preexec_fn=functools.partial(
                _set_limits, limits, cgroup.procs_files() if cgroup else [], direct_filter
            ),
        )
    except (OSError, subprocess.SubprocessError) as error:
        if cgroup:
            cgroup.remove()
        if seccomp_fd is not None:
            os.close(seccomp_fd)
        return RunOutcome(
            stdout=b"", stderr=b"", returncode=None, signal=None, isolation=report,
            start_error=f"could not start {command[0]}: {error}",
        )

    stdout_fd, stderr_fd = process.stdout.fileno(), process.stderr.fileno()
    chunks: dict[int, list[bytes]] = {stdout_fd: [], stderr_fd: []}
    if seccomp_fd is not None:
        os.close(seccomp_fd)
    total = 0
    timed_out = output_exceeded = False
    selector = selectors.DefaultSelector()
    for stream in (process.stdout, process.stderr):
        os.set_blocking(stream.fileno(), False)
        selector.register(stream.fileno(), selectors.EVENT_READ)
    open_fds = set(chunks)
    exited_at: float | None = None
    try:
        while open_fds:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > limits.pipe_grace_seconds:
                break  # the program ended, but something it left behind still holds the pipes
            wait = min(deadline - now, 0.05 if exited_at is None else limits.pipe_grace_seconds)
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
            if output_exceeded:
                break
    finally:
        selector.close()
        _kill_group(process.pid)
        kill_deadline = time.monotonic() + 2.0
        if cgroup:
            cgroup.kill_all(kill_deadline)
        if not isolation.bubblewrap and not cgroup:
            _kill_marked(marker)
        try:
            process.wait(timeout=max(0.1, kill_deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()

    duration_ms = (time.monotonic() - started) * 1000
    returncode = process.returncode
    sig = None
    if returncode is not None and returncode < 0:
        sig = -returncode
    elif isolation.bubblewrap and returncode is not None and returncode > 128:
        sig = returncode - 128  # bwrap reports a child killed by signal N as exit status 128 + N
    memory_exceeded = process_limit_hit = False
    if cgroup:
        memory_exceeded = cgroup.memory_exceeded()
        process_limit_hit = cgroup.process_limit_hit()
        cgroup.remove()
    return RunOutcome(
        stdout=b"".join(chunks[stdout_fd]),
        stderr=b"".join(chunks[stderr_fd]),
        returncode=returncode,
        signal=sig,
        timed_out=timed_out,
        output_exceeded=output_exceeded,
        memory_exceeded=memory_exceeded,
        process_limit_hit=process_limit_hit,
        duration_ms=duration_ms,
        isolation=report,
    )


def _kill_group(pid: int) -> None:
    """SIGKILL the run's process group (its session leader's pid); gone already is fine."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
