"""Attacks on the host from inside a graded submission, each with the layer that stops it.

- kernel budgets of the host (inotify instances, POSIX message queues, AIO contexts): a submission takes
  all it can and holds them while this process, root on the host, checks that it can still get each
  (identity layer: a dedicated uid; seccomp: the calls are denied; rlimits: RLIMIT_MSGQUEUE is 0);
- the host's kernel state in /proc (bubblewrap's masks);
- the grader's own packages (bubblewrap's file system holds no site-packages).

Every test here fails on the single-module sandbox that ran learner code as the host's root.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import os
import platform
import site
import sys
import sysconfig
import threading
import time
import uuid
from pathlib import Path

import pytest

import chainrule
from chainrule.grading import default_limits, grade, isolation_report, reference_source
from chainrule.grading.sandbox import identity, mounts
from sandbox_attacks import js_attack, marker, python_attack  # the same named attack bodies

pytestmark = pytest.mark.timeout(90)

ISOLATION = isolation_report()
MISSING = {m["layer"]: m["error"] for m in ISOLATION["missing"]}


def needs(*layers: str):
    absent = [layer for layer in layers if ISOLATION["layers"].get(layer) is False]  # unreported: tested
    return pytest.mark.skipif(bool(absent), reason="; ".join(f"{a} layer missing: {MISSING.get(a)}" for a in absent))


x86_64_only = pytest.mark.skipif(platform.machine() != "x86_64", reason="the attacks use x86-64 system call numbers")
IO_SETUP, IO_DESTROY, INOTIFY_INIT1, MQ_OPEN = 206, 207, 294, 240


def run(source: str, language: str = "python", **changes) -> dict:
    limits = dataclasses.replace(default_limits(language), **{"wall_seconds": 8.0, "cpu_seconds": 2, **changes})
    return grade("neuron-grads", language, source, limits=limits)


def first_output(result: dict) -> str:
    return result["tests"][0]["output"] or "" if result["tests"] else ""


@pytest.fixture(autouse=True)
def grades_normally_afterwards():
    yield
    after = grade("neuron-grads", "python", reference_source("neuron-grads", "python"))
    assert after["verdict"] == "passed", after["message"]


# ------------------------------------------------------------------------------------- host budgets

LIBC = ctypes.CDLL(None, use_errno=True)


def host_budget_failures() -> list[str]:
    """Try to take one of each budget as this (host) process; the ones that fail, with their errno."""
    failures = []
    fd = LIBC.inotify_init1(0)
    if fd < 0:
        failures.append(f"inotify {errno.errorcode.get(ctypes.get_errno())}")
    else:
        os.close(fd)
    name = f"/chainrule-host-{uuid.uuid4().hex[:8]}".encode()
    LIBC.mq_open.restype = ctypes.c_int
    queue = LIBC.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)
    if queue < 0:
        failures.append(f"mqueue {errno.errorcode.get(ctypes.get_errno())}")
    else:
        LIBC.mq_close(queue)
        LIBC.mq_unlink(name)
    context = ctypes.c_ulong(0)
    if LIBC.syscall(IO_SETUP, 1, ctypes.byref(context)) < 0:
        failures.append(f"aio {errno.errorcode.get(ctypes.get_errno())}")
    else:
        LIBC.syscall(IO_DESTROY, context)
    return failures


# A submission holds what it took until the host releases it (no fixed pause): it makes the file `held`
# in its working directory, then waits for `release`, which the host (root) writes there through
# /proc/PID/cwd once it has checked what it needed while the budgets were held. The first test case
# holds; the later ones find `release` and go on. 20 s at most, should the host never release.
HOLD_PYTHON = """open('held', 'w').close()
end = time.monotonic() + 20
while not os.path.exists('release') and time.monotonic() < end:
    time.sleep(0.005)
"""
HOLD_PERL = ("open(my $h, '>', 'held'); close($h); my $end = time + 20;"
             " select(undef, undef, undef, 0.005) until -e 'release' or time > $end;")


def holding(mark: str) -> Path | None:
    """The working directory of the process named `mark`, once it holds (its `held` file exists)."""
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{entry}/comm").read_text().strip() == mark and Path(f"/proc/{entry}/cwd/held").exists():
                return Path(f"/proc/{entry}/cwd")
        except OSError:
            continue
    return None


def grade_while_held(source: str, language: str, mark: str, while_held) -> dict:
    """Grade in a thread; once the submission holds, call `while_held()` (again and again until it returns
    True), then release the submission; returns the result."""
    outcome: dict = {}
    grading = threading.Thread(target=lambda: outcome.update(run(source, language)))
    grading.start()
    released = False
    while grading.is_alive():
        where = None if released else holding(mark)
        if where is not None and while_held():
            (where / "release").write_text("")
            released = True
        time.sleep(0.005)
    grading.join()
    assert released, f"the submission never held: {outcome.get('message')} {first_output(outcome)}"
    return outcome


def grade_while_watching_the_host(source: str, language: str, mark: str) -> tuple[dict, list[str]]:
    """Grade in a thread; while the submission holds what it took, take and return each budget from
    this process (a few times over)."""
    assert host_budget_failures() == [], "the host's budgets are short before the grading even started"
    failures: list[str] = []
    checks = []

    def check_the_host() -> bool:
        failures.extend(host_budget_failures())
        checks.append(1)
        return len(checks) >= 3

    outcome = grade_while_held(source, language, mark, check_the_host)
    return outcome, sorted(set(failures))


PYTHON_DRAIN = """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
held, why = {'inotify': 0, 'mqueue': 0, 'aio': 0}, []
while True:
    if libc.inotify_init1(0) < 0:
        why.append('inotify ' + errno.errorcode.get(ctypes.get_errno(), '?'))
        break
    held['inotify'] += 1
for i in range(300):
    if libc.syscall(%(mq_open)d, ('crq%%d-%%d' %% (os.getpid(), i)).encode(), 0o102, 0o600, None) < 0:
        why.append('mqueue ' + errno.errorcode.get(ctypes.get_errno(), '?'))
        break
    held['mqueue'] += 1
for size in %(aio_sizes)s:
    while True:
        context = ctypes.c_ulong(0)
        if libc.syscall(%(io_setup)d, size, ctypes.byref(context)) < 0:
            break
        held['aio'] += size
why.append('aio ' + errno.errorcode.get(ctypes.get_errno(), '?'))
print('HELD', held, why, flush=True)
""" + HOLD_PYTHON.replace("%", "%%")


def python_drain(aio: bool = True) -> str:
    sizes = (65536, 4096, 256, 16, 1) if aio else ()
    return PYTHON_DRAIN % {"mq_open": MQ_OPEN, "io_setup": IO_SETUP, "aio_sizes": sizes}

# Node has no system calls of its own to drain with, so the submission hands the job to perl
# (in /usr/bin, as on most systems), whose syscall() makes any call.
PERL_DRAIN = (
    "my ($i, $m, $a) = (0, 0, 0); my @why;"
    "while (1) { if (syscall(294, 0) < 0) { push @why, \"inotify $!\"; last } $i++ }"
    "for my $k (0..300) { my $name = \"crq$$-$k\"; if (syscall(240, $name, 0102, 0600, 0) < 0)"
    " { push @why, \"mqueue $!\"; last } $m++ }"
    "for my $n (65536, 4096, 256, 16, 1) { while (1) { my $ctx = pack(\"Q\", 0);"
    " last if syscall(206, $n, $ctx) < 0; $a += $n } } push @why, \"aio $!\";"
    "print \"HELD inotify=$i mqueue=$m aio=$a (@why)\\n\"; $| = 1; " + HOLD_PERL
)


@x86_64_only
@needs("seccomp", "identity")
def test_python_submission_cannot_take_the_hosts_kernel_budgets():
    mark = marker()
    result, failures = grade_while_watching_the_host(python_attack(mark, python_drain()), "python", mark)
    output = first_output(result)
    assert failures == [], f"the host ran short while the submission ran: {failures}; submission: {output}"
    assert "HELD" in output, result  # the drain really ran, and said what it got
    assert "'inotify': 0" in output and "'mqueue': 0" in output and "'aio': 0" in output, output


@x86_64_only
@needs("seccomp", "identity")
def test_node_submission_cannot_take_the_hosts_kernel_budgets():
    if not os.path.exists("/usr/bin/perl"):
        pytest.skip("perl is not installed: no way for node code to make these system calls")
    body = ("try { console.log(require('child_process').execFileSync('/usr/bin/perl', ['-e', "
            + repr(PERL_DRAIN) + "], { encoding: 'utf8' })); } catch (e) { console.log('perl failed', e.message); }")
    mark = marker()
    result, failures = grade_while_watching_the_host(js_attack(mark, body), "javascript", mark)
    output = first_output(result)
    assert failures == [], f"the host ran short while the submission ran: {failures}; submission: {output}"
    assert "HELD inotify=0 mqueue=0 aio=0" in output, result


@needs("identity")
def test_submission_runs_as_the_dedicated_unprivileged_user_as_seen_from_the_host():
    mark = marker()
    body = "print('ids', os.getuid(), os.geteuid(), os.getgid(), os.getgroups(), flush=True)\n" + HOLD_PYTHON
    seen: set[tuple[str, str]] = set()

    def look_from_the_host() -> bool:  # the submission holds: it is certainly running now
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() != mark:
                    continue
                status = Path(f"/proc/{entry}/status").read_text().splitlines()
            except OSError:
                continue
            fields = {line.split(":")[0]: line.split(":")[1].split() for line in status if ":" in line}
            seen.add((fields["Uid"][1], fields["Gid"][1]))  # effective ids, as the host counts them
        return bool(seen)

    outcome = grade_while_held(python_attack(mark, body), "python", mark, look_from_the_host)
    uid, gid = identity.sandbox_ids()
    assert seen == {(str(uid), str(gid))}, seen
    assert f"ids {uid} {uid} {gid} []" in first_output(outcome)


# ------------------------------------------------------------------------------------- /proc masks

# The entries the security review found readable, the usual container-runtime set, and /sys/firmware.
MASKED = ["/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup", "/proc/slabinfo", "/proc/timer_list",
          "/proc/vmallocinfo", "/proc/pagetypeinfo", "/proc/keys", "/proc/kcore", "/proc/sched_debug",
          "/proc/timer_stats", "/proc/latency_stats", "/proc/sysrq-trigger", "/proc/acpi", "/proc/scsi",
          "/proc/kallsyms", "/proc/kmsg", "/proc/iomem", "/proc/key-users", "/sys/firmware"]

# One word per path, on one line: the harness shows only the first 500 characters of output.
READ_EACH = """
seen = []
for path in %r:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, 'rb') as f:
                f.read(64)
        seen.append('readable')
    except OSError as error:
        seen.append(type(error).__name__)
print('SEEN', ' '.join(seen))
"""


@needs("bubblewrap")
def test_host_kernel_state_in_proc_is_unreadable():
    result = run(python_attack(marker(), READ_EACH % (MASKED,)))
    seen = next(line for line in first_output(result).splitlines() if line.startswith("SEEN")).split()[1:]
    lines = dict(zip(MASKED, seen))
    assert len(seen) == len(MASKED), result
    for path in MASKED:
        # Masked where the host has it (PermissionError), absent where it does not (FileNotFoundError).
        expected = "PermissionError" if path.startswith("/proc/") and os.path.lexists(path) else "FileNotFoundError"
        assert lines[path] == expected, (path, lines[path])


def test_every_required_proc_entry_is_in_the_mask_table():
    names = {name for name, reason in mounts.PROC_MASKED if reason}
    required = {"kpageflags", "kpagecount", "kpagecgroup", "slabinfo", "timer_list", "vmallocinfo", "pagetypeinfo",
                "keys", "kcore", "sched_debug", "timer_stats", "latency_stats", "sysrq-trigger", "acpi", "scsi"}
    assert required <= names, required - names


# ------------------------------------------------------------------------------------- the grader's packages


def host_package_paths() -> list[str]:
    """Every place this (host) interpreter finds packages, and the checkout's source directory."""
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}
    paths = site.getsitepackages() + [sysconfig.get_path("purelib", vars=base), sysconfig.get_path("platlib", vars=base),
                                      "/usr/lib/python3/dist-packages",
                                      f"/usr/local/lib/python3.{sys.version_info.minor}/dist-packages",
                                      str(Path(chainrule.__file__).resolve().parent.parent)]
    return list(dict.fromkeys(paths))


@needs("bubblewrap")
def test_the_graders_packages_cannot_be_imported_even_by_path():
    body = (f"sys.path[:0] = {host_package_paths()!r}\n"
            "for name in ('numpy', 'chainrule.engine', 'chainrule', 'torch'):\n"
            "    try:\n        __import__(name)\n        print(name, 'imported')\n"
            "    except Exception as error:\n        print(name, type(error).__name__)\n")
    result = run(python_attack(marker(), body), cpu_seconds=5)
    lines = dict(line.split(" ", 1) for line in first_output(result).splitlines())
    assert lines == {"numpy": "ModuleNotFoundError", "chainrule.engine": "ModuleNotFoundError",
                     "chainrule": "ModuleNotFoundError", "torch": "ModuleNotFoundError"}, result
    assert result["verdict"] == "passed"  # the harness itself still works


@needs("bubblewrap")
def test_the_python_standard_library_is_there_and_its_site_packages_is_not():
    body = ("import json, ctypes, sqlite3, decimal\nprint('stdlib', json.dumps([1]))\n"
            "print('dirs', [p for p in sys.path if os.path.isdir(p) and os.listdir(p) == []])\n"
            f"print('listing', [os.path.exists(p) and os.access(p, os.R_OK) for p in {host_package_paths()!r}])\n")
    result = run(python_attack(marker(), body))
    output = first_output(result)
    assert "stdlib [1]" in output, result
    listing = next(line for line in output.splitlines() if line.startswith("listing"))
    assert "True" not in listing, output  # no package directory of the host can be listed inside


@needs("bubblewrap")
def test_node_sees_no_package_directories():
    probes = ["/usr/lib/node_modules", "/usr/local/lib/node_modules",
              str(Path(__file__).resolve().parent.parent / "node_modules"), sys.prefix]
    body = ("const fs = require('fs');"
            f" for (const p of {probes!r}) {{ let seen = 'absent'; try {{ fs.readdirSync(p); seen = 'listed'; }}"
            " catch (e) { seen = e.code; } console.log(p, seen); }"
            " try { require('/usr/lib/node_modules/npm'); console.log('npm loaded'); } catch (e) { console.log('npm', e.code); }")
    result = run(js_attack(marker(), body), "javascript")
    output = first_output(result)
    assert "listed" not in output and "npm loaded" not in output, result
    assert "npm MODULE_NOT_FOUND" in output


@pytest.fixture
def only_one_of(monkeypatch):
    """Turn one layer off (by its CHAINRULE_SANDBOX_NO_* switch) and probe again; undo afterwards."""
    from chainrule.grading.sandbox.isolation import probe_cached

    def turn_off(switch: str) -> dict:
        monkeypatch.setenv(switch, "1")
        probe_cached.cache_clear()
        return isolation_report()

    yield turn_off
    probe_cached.cache_clear()
    monkeypatch.undo()
    probe_cached.cache_clear()


@x86_64_only
@needs("seccomp")
def test_the_seccomp_filter_alone_keeps_every_budget(only_one_of):
    assert only_one_of("CHAINRULE_SANDBOX_NO_IDENTITY")["layers"]["identity"] is False
    mark = marker()
    result, failures = grade_while_watching_the_host(python_attack(mark, python_drain()), "python", mark)
    assert failures == [], first_output(result)
    assert "'inotify': 0" in first_output(result)


@x86_64_only
@needs("identity")
def test_the_dedicated_user_alone_keeps_roots_per_user_budgets(only_one_of):
    """Without the filter the submission gets inotify instances, but they are charged to the dedicated
    user, and RLIMIT_MSGQUEUE 0 allows it no message queue: root keeps its own. (AIO is one budget for
    the whole host, which only the filter protects.)"""
    assert only_one_of("CHAINRULE_SANDBOX_NO_SECCOMP")["layers"]["seccomp"] is False
    # No AIO drain here: without the filter it would take the whole host's budget for a moment.
    mark = marker()
    result, failures = grade_while_watching_the_host(python_attack(mark, python_drain(aio=False)), "python", mark)
    output = first_output(result)
    assert "'inotify': 128" in output and "'mqueue': 0" in output, output
    assert failures == [], output
