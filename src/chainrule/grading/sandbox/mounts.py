"""The mounts layer: what exists inside bubblewrap's file system, and what is masked there.

Only these are bound (read-only): the system's binaries and shared libraries (/usr/bin and the
architecture's library directory), the program's own executable, and, for the Python interpreter, its
standard library and shared libpython. No site-packages or dist-packages (neither the grader's virtual
environment nor the interpreter's or the system's), no node_modules: a submission cannot import torch,
numpy or chainrule. Directories of packages found inside a bound directory are covered by an empty,
unreadable directory.

The /proc entries in PROC_MASKED are covered by an unreadable file or directory, as container runtimes
do: each would tell a submission about the host's kernel, memory or other processes. Each mask is one
more mount per run, so the list is the container runtimes' set and the entries a review found
readable, not every file of /proc.

Inside: these binds, /proc with /proc/sys read-only and the entries of PROC_MASKED covered, a minimal
/dev, the scratch directory read-only and its `work` subdirectory as a size-capped tmpfs (the only
writable place and the working directory); then the root is remounted read-only.
"""

from __future__ import annotations

import functools
import glob
import os
import sys
import sysconfig
from typing import TYPE_CHECKING, Sequence

from chainrule.grading.sandbox import identity
from chainrule.grading.sandbox.limits import MB

if TYPE_CHECKING:
    from chainrule.grading.sandbox.plan import Plan

# Both mode 000, in the scratch directory: bound over a masked /proc file, and over a masked /proc
# directory or a package directory.
MASK_FILE = ".masked-file"
MASK_DIR = ".masked-dir"

PACKAGE_DIR_NAMES = ("site-packages", "dist-packages", "node_modules")

PROC_MASKED: tuple[tuple[str, str], ...] = (
    ("kcore", "the host's physical memory as a core file"),
    ("kmsg", "the kernel log"),
    ("kallsyms", "kernel symbol addresses"),
    ("kpageflags", "flags of every physical page of the host"),
    ("kpagecount", "how often each physical page of the host is mapped"),
    ("kpagecgroup", "the memory cgroup of every physical page of the host"),
    ("slabinfo", "kernel allocator state, used to shape heap exploits"),
    ("vmallocinfo", "kernel virtual memory layout"),
    ("pagetypeinfo", "page allocator state of the host"),
    ("iomem", "the physical memory map"),
    ("timer_list", "every pending kernel timer, with the owning processes"),
    ("timer_stats", "timer usage of every process"),
    ("sched_debug", "scheduler state of every process on the host"),
    ("latency_stats", "latency records of every process"),
    ("keys", "kernel keys visible to the caller"),
    ("key-users", "key quotas of every user on the host"),
    ("sysrq-trigger", "writing to it crashes or reboots the host"),
    ("interrupts", "per-CPU interrupt counts, a side channel on other processes"),
    ("acpi", "ACPI hardware state"),
    ("asound", "sound hardware"),
    ("scsi", "SCSI devices"),
)


def masked_proc_paths() -> list[str]:
    """The masked /proc paths that exist on this kernel (a mount needs an existing target)."""
    return [f"/proc/{name}" for name, _ in PROC_MASKED if os.path.lexists(f"/proc/{name}")]


def system_dirs() -> list[str]:
    """Binaries and shared libraries: /usr/bin, the multiarch library directory (or /usr/lib), /usr/lib64."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    found = ["/usr/bin"]
    arch_dir = os.path.join("/usr/lib", multiarch)
    found.append(arch_dir if multiarch and os.path.isdir(arch_dir) else "/usr/lib")
    for extra in ("/usr/lib64", "/usr/lib32", "/usr/libx32"):
        if os.path.isdir(extra) and not os.path.islink(extra):
            found.append(extra)
    return [d for d in found if os.path.isdir(d)]


def root_links() -> list[tuple[str, str]]:
    """(target, link) of the merged-/usr links at the root (/bin -> usr/bin, /lib64 -> usr/lib64...)."""
    links = []
    for name in ("bin", "sbin", "lib", "lib64", "lib32", "libx32"):
        path = os.path.join("/", name)
        if os.path.islink(path):
            links.append((os.readlink(path), path))
    return links


@functools.lru_cache(maxsize=1)
def python_runtime() -> list[str]:
    """This interpreter's real executable, its shared libpython (if any) and its standard library."""
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix,
            "installed_base": sys.base_prefix, "installed_platbase": sys.base_exec_prefix}
    found = [os.path.realpath(sys.executable)]
    libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir and soname:
        library = os.path.join(libdir, soname)
        if os.path.exists(library):
            found.append(os.path.realpath(library))
    for key in ("stdlib", "platstdlib"):
        path = os.path.realpath(sysconfig.get_path(key, vars=base))
        if os.path.isdir(path):
            found.append(path)
    return list(dict.fromkeys(found))  # callers copy it before adding to it


@functools.lru_cache(maxsize=16)
def package_dirs(bound: tuple[str, ...]) -> list[str]:
    """Package directories (site-packages, dist-packages, node_modules) in the bound directories, in a
    python* directory inside them (Debian, Fedora, Arch, pyenv) or in their lib/ (a node prefix)."""
    found = []
    for directory in bound:
        if not os.path.isdir(directory):
            continue
        for pattern in ("{}", "python*/{}", "lib/{}"):
            for name in PACKAGE_DIR_NAMES:
                found += [p for p in glob.glob(os.path.join(glob.escape(directory), pattern.format(name)))
                          if os.path.isdir(p) and not os.path.islink(p)]
    return sorted(set(found))


def program_binds(executable: str) -> list[str]:
    """What running `executable` needs besides the system directories."""
    real = os.path.realpath(executable)
    if real == os.path.realpath(sys.executable):
        return list(python_runtime())
    return [real]


def prepare(plan: Plan) -> None:
    """Under bubblewrap: the file system, as bwrap's mount operations in the order bwrap applies them."""
    if not plan.isolation.bubblewrap:
        return
    scratch = plan.scratch
    _make_mask_sources(scratch)
    switches_user = plan.isolation.identity is not None
    system = system_dirs()
    files = list(dict.fromkeys(program_binds(plan.program[0]) + [os.path.realpath(p) for p in plan.read_only]
                               + ([identity.setpriv()] if switches_user else [])))
    files = [p for p in files if not _inside(p, system)]
    argv: list[str] = []
    for path in system + files:
        argv += ["--ro-bind", path, path]
    for target, link in root_links():
        argv += ["--symlink", target, link]
    # /proc/sys read-only: without the identity layer uid 0 inside is the host's root.
    argv += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    mask_file, mask_dir = os.path.join(scratch, MASK_FILE), os.path.join(scratch, MASK_DIR)
    for path in masked_proc_paths():
        argv += ["--ro-bind", mask_dir if os.path.isdir(path) else mask_file, path]
    # /dev/shm is a small tmpfs and the rest of /dev read-only, so `work` is the one sizeable writable place.
    argv += ["--dev", "/dev", "--size", str(MB), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for path in package_dirs(tuple(system + files)):
        argv += ["--ro-bind", mask_dir, path]
    argv += ["--ro-bind", scratch, scratch, "--size", str(plan.limits.work_bytes)]
    argv += ["--perms", "0777"] if switches_user else []  # bwrap makes it as root; the dedicated user writes there
    argv += ["--tmpfs", plan.work]
    # The directories bwrap creates to hold the binds are private to root: let every user through them,
    # but not list them (an empty `chainrule` directory on the way to the runtime files would otherwise
    # import as a namespace package).
    for directory in _created_parents(system + files + [scratch, "/proc/sys", "/dev/shm"]):
        argv += ["--chmod", "0711", directory]
    plan.bwrap += argv + ["--remount-ro", "/"]


def _make_mask_sources(scratch: str) -> None:
    """The two unreadable mask sources in the scratch directory."""
    mask_file, mask_dir = os.path.join(scratch, MASK_FILE), os.path.join(scratch, MASK_DIR)
    if not os.path.exists(mask_file):
        os.close(os.open(mask_file, os.O_CREAT | os.O_WRONLY, 0))
        os.chmod(mask_file, 0)
    if not os.path.exists(mask_dir):
        os.mkdir(mask_dir, 0)
        os.chmod(mask_dir, 0)


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
