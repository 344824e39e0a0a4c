"""Where the suite's time goes, file by file, and a budget of CPU time per test file (a pytest plugin that
tests/conftest.py loads; docs/architecture.md, "What each test file costs").

Each worker measures, for every phase of every test (setup, call, teardown), the CPU time of every process
it started and their descendants, alive or ended (servers, the CLI, sandboxed runs, Chromium's renderers,
PostgreSQL's backends): it puts itself in a cgroup of its own (the cpuacct hierarchy of cgroup v1) and reads
the group's counter. Where it cannot (no such hierarchy, or no right to make a group), it counts its own CPU
time and that of the child processes it waited for (`getrusage`), and the summary says so. It passes the time
to the controller on the phase's report (`user_properties`, which pytest-xdist carries across). The controller adds
up wall time and CPU time per file, prints where the time went at the end of the run, and fails the run when
a file's CPU time passes its budget in tests/time_budgets.toml (or the default budget there), naming the
file, its time and its budget.

The budget is CPU time, not wall time: a busy machine stretches a file's wall time several-fold (the
scheduler gives each process a smaller share of the cores) but hardly its CPU time, so a budget that holds
on a quiet machine holds on a loaded one. No test asserts on time; this is a check on the suite as a whole.
"""

from __future__ import annotations

import json
import os
import resource
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

try:  # a subtest's report (tests/fuzzing.py), whose time is also in its test's own report
    from _pytest.subtests import SubtestReport
except ImportError:  # pytest before 9
    SubtestReport = ()  # type: ignore[assignment,misc]

BUDGETS = Path(__file__).with_name("time_budgets.toml")
CPU = "cpu_seconds"  # the name of the user property each report carries
CLOCK = "cpu_clock"  # and what counted it: a key of COUNTED
# The worker's last teardown also ends the session-wide fixtures (the one Chromium, a PostgreSQL cluster): the
# CPU time of what they started, reaped only then, belongs to the whole session, not to the file that ran last.
SESSION_CPU = "session_cpu_seconds"
SESSION = "(the session-wide fixtures, ended after each worker's last test)"
SHOWN = 15  # files listed in the summary, the most expensive first
_since = pytest.StashKey[float]()
_last = pytest.StashKey[bool]()


GROUP_PREFIX = "chainrule-tests-"
# What the summary's heading says was counted, by clock.
COUNTED = {"cgroup": "every process the tests started, alive or ended",
           "rusage": "the test process and the children it waited for"}


def waited_cpu_seconds() -> float:
    """CPU time (user and system) of this process and of the children it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _cpuacct_mount() -> Path:
    """Where a cgroup v1 hierarchy with cpuacct as its only controller is mounted (OSError if none is)."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mount, _, after = line.partition(" - ")
        fstype, _, options = (after.split() + ["", "", ""])[:3]
        if fstype == "cgroup" and set(options.split(",")) - {"rw", "ro"} == {"cpuacct"}:
            return Path(mount.split()[4])
    raise OSError("no cgroup v1 hierarchy of cpuacct alone is mounted")


def _own_cgroup(controller: str) -> str:
    """This process's group in a cgroup v1 hierarchy, from /proc/self/cgroup."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == controller:
            return path
    raise OSError(f"this process is in no {controller} group")


class CpuClock:
    """The CPU time a worker's tests cost. A cgroup counts what `getrusage` cannot: processes that outlive the
    test or are reaped by someone else (the session's Chromium and its renderers, a PostgreSQL cluster's
    backends, a server in a session of its own). Only a cpuacct hierarchy mounted alone is used, so that the
    move changes no scheduling and no limit (the grader's sandbox makes its groups in the cpu, memory and pids
    hierarchies)."""

    def __init__(self) -> None:
        self.group: Path | None
        try:
            self.group = self._own_group()
        except OSError:
            self.group = None

    @property
    def kind(self) -> str:
        """A key of COUNTED."""
        return "rusage" if self.group is None else "cgroup"

    @staticmethod
    def _own_group() -> Path:
        parent = _cpuacct_mount() / _own_cgroup("cpuacct").lstrip("/")
        for stale in parent.glob(GROUP_PREFIX + "*"):  # left by a killed run: those of ended processes go
            if not Path("/proc", stale.name.removeprefix(GROUP_PREFIX)).exists():  # not a worker starting beside
                try:
                    stale.rmdir()
                except OSError:
                    pass
        group = parent / f"{GROUP_PREFIX}{os.getpid()}"
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
        return group

    def seconds(self) -> float:
        if self.group is None:
            return waited_cpu_seconds()
        return int((self.group / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        """Back to the group it came from, and the group removed when nothing it started is left in it."""
        if self.group is None:
            return
        try:
            (self.group.parent / "cgroup.procs").write_text(str(os.getpid()))
            self.group.rmdir()
        except OSError:
            pass


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("time budgets")
    group.addoption("--time-budgets", default=str(BUDGETS), metavar="TOML",
                    help="the CPU-time budget of each test file (default: tests/time_budgets.toml)")
    group.addoption("--time-report", default=None, metavar="JSON",
                    help="also write every file's wall and CPU time to this file")


# ------------------------------------------------------------------ in the process that runs the tests

_clock: CpuClock | None = None  # made by the first test this process runs (a controller runs none)


def clock() -> CpuClock:
    global _clock
    if _clock is None:
        _clock = CpuClock()
    return _clock


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    item.stash[_since] = clock().seconds()
    item.stash[_last] = nextitem is None
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    now = clock().seconds()
    # A list of its own: the report's list is the item's, shared by its three phases.
    key = SESSION_CPU if call.when == "teardown" and item.stash.get(_last, False) else CPU
    report.user_properties = [*report.user_properties, (key, now - item.stash.get(_since, now)),
                              (CLOCK, clock().kind)]
    item.stash[_since] = now
    return report


# ------------------------------------------------------------------ in the process that reports

@dataclass
class FileTime:
    tests: int = 0
    wall: float = 0.0
    cpu: float = 0.0


def read_budgets(path: Path) -> tuple[float, dict[str, float]]:
    """(the default budget in CPU seconds, {test file: its budget}) from a budgets file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        default, files = float(data["default"]), {name: float(seconds) for name, seconds in data["files"].items()}
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError, AttributeError) as error:
        raise pytest.UsageError(f"{path}: a time budgets file holds `default = SECONDS` and a [files] table of "
                                f"\"tests/FILE.py\" = SECONDS ({error!r})") from error
    return default, files


class TimeBudgets:
    def __init__(self, path: Path, report: str | None = None) -> None:
        self.path, self.report = path, report
        self.session_cpu = 0.0
        self.default, self.budgets = read_budgets(path)
        self.files: dict[str, FileTime] = {}
        self.over: list[str] = []
        self.clocks: set[str] = set()

    def budget(self, name: str) -> float:
        return self.budgets.get(name, self.default)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        spent = self.files.setdefault(report.nodeid.split("::")[0], FileTime())
        spent.wall += 0.0 if isinstance(report, SubtestReport) else report.duration
        spent.cpu += sum(value for key, value in report.user_properties if key == CPU)
        spent.tests += report.when == "setup"
        self.session_cpu += sum(value for key, value in report.user_properties if key == SESSION_CPU)
        self.clocks.update(value for key, value in report.user_properties if key == CLOCK)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.over = [f"{name} took {spent.cpu:.1f} s of CPU time, over its budget of {self.budget(name):g} s "
                     f"({self.where()})" for name, spent in sorted(self.files.items())
                     if spent.cpu > self.budget(name)]
        if self.over and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.report:
            times = {name: {"tests": spent.tests, "wall": round(spent.wall, 2), "cpu": round(spent.cpu, 2),
                            "budget": self.budget(name)} for name, spent in sorted(self.files.items())}
            Path(self.report).write_text(json.dumps({"files": times, "session_cpu": round(self.session_cpu, 2),
                                                     "counted": sorted(self.clocks)}, indent=1) + "\n",
                                         encoding="utf-8")

    def where(self) -> str:
        try:
            return str(self.path.relative_to(Path.cwd()))
        except ValueError:
            return str(self.path)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.files:
            return
        write = terminalreporter.write_line
        counted = " or ".join(COUNTED[kind] for kind in sorted(self.clocks))
        terminalreporter.write_sep("=", f"time per test file (CPU: {counted})")
        ranked = sorted(self.files.items(), key=lambda entry: -entry[1].wall)
        for name, spent in ranked[:SHOWN]:
            write(f"{spent.wall:8.1f} s wall {spent.cpu:8.1f} s CPU  of {self.budget(name):5g} s  "
                  f"{spent.tests:4d} tests  {name}")
        rest = ranked[SHOWN:]
        if rest:
            write(f"{sum(s.wall for _, s in rest):8.1f} s wall {sum(s.cpu for _, s in rest):8.1f} s CPU  "
                  f"in the other {len(rest)} files")
        if self.session_cpu:
            write(f"{'':8} {self.session_cpu:15.1f} s CPU  {SESSION}")
        for line in self.over:
            terminalreporter.write_line("OVER BUDGET: " + line, red=True, bold=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _clock is not None:
        _clock.close()


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without workers) adds up and checks
        config.pluginmanager.register(TimeBudgets(Path(config.getoption("time_budgets")),
                                                  config.getoption("time_report")), "time-budgets-check")
