"""The cgroup layer: one fresh group per run with a process limit (pids.max), a memory limit and,
where the cpu controller can be used, a CPU limit of about one core.

Two backends: cgroup v2 (memory.max and cpu.max, one unified group) and cgroup v1 (separate pids,
memory and cpu hierarchies: memory.limit_in_bytes, cpu.cfs_quota_us). The CPU limit is a quota of
CPU time per period for the whole group: however many processes a run forks, each in its own session
(its own scheduler autogroup), together they get `Limits.cpu_cores` of CPU time per wall second, one
core by default, matching the one-grading-per-core gate. Without a usable cpu controller the run keeps
its process and memory limits, and the report says the CPU limit is missing. The group's CPU weight is
the grader's nice (cpu_weight): a process in a cgroup of its own is scheduled by the group, not by its
nice, and without the weight every run of a niced worker would compete as an equal of the web server
(each session is an autogroup, which makes a nice count only inside its own session). The grader moves the run's
first processes (bwrap and its child, or the launcher) into the group while they wait, before anything
of the program runs (as nsjail does from its parent), so every process of the run starts inside it. At
the end of a run every process left in the group (and any group a submission made below it) is killed,
and the groups are removed. Linux only; nothing here runs at import.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from chainrule.grading.sandbox.limits import Limits

if TYPE_CHECKING:
    from chainrule.grading.sandbox.plan import Plan


LEFTOVER_SECONDS = 3600  # an empty run group this old was left by a grader killed before it could remove it
CPU_PERIOD_US = 100_000  # the scheduler's accounting period for the quota (100 ms, the kernel's default)
# Where the kernel has CFS burst (5.14+), quota left unused in one period may be spent in a later one,
# up to one period's quota: node's short parallel start (compiler and GC threads) is not throttled,
# while a run's CPU time over any longer span stays at `cpu_cores` per wall second.


def cpu_weight(nice: int) -> int:
    """The scheduler's weight of a process at this nice (1024 at 0, 1.25 times less per step: the kernel's
    table to within 2 %), for the run's group: it gets the share of the CPU its grader has."""
    return max(2, round(1024 / 1.25 ** max(-20, min(19, nice))))


def cpu_quota_us(limits: Limits) -> int:
    """CPU time the run's group may use per CPU_PERIOD_US, all its processes together."""
    return max(1000, int(CPU_PERIOD_US * limits.cpu_cores))  # the kernel refuses quotas under 1 ms


class CgroupBackend:
    """Creates one cgroup per run, with a process, a memory and (when it can) a CPU limit, and kills
    whatever is left in it."""

    def __init__(self, version: int, pids_parent: Path, memory_parent: Path, note: str | None = None,
                 cpu_parent: Path | None = None, cpu_missing: str | None = None) -> None:
        self.version = version
        self.pids_parent = pids_parent
        self.memory_parent = memory_parent
        self.note = note  # why the other cgroup version was not used (a detail, not a missing layer)
        self.cpu_parent = cpu_parent  # v2: the same group as pids and memory; v1: the cpu hierarchy's
        self.cpu_missing = cpu_missing  # why runs get no CPU limit, when cpu_parent is None

    def create(self, limits: Limits) -> "RunCgroup":
        name = f"chainrule-{uuid.uuid4().hex[:12]}"
        if self.version == 2:
            path = self.pids_parent / name
            path.mkdir()
            group = RunCgroup(self.version, [path])
            try:
                _write(path / "pids.max", str(limits.max_processes))
                _write(path / "memory.max", str(limits.memory_bytes))
                _try_write(path / "memory.swap.max", "0")
                if self.cpu_parent is not None:
                    _write(path / "cpu.max", f"{cpu_quota_us(limits)} {CPU_PERIOD_US}")
                    _write(path / "cpu.weight", str(max(1, round(_grader_weight() * 100 / 1024))))
                    _try_write(path / "cpu.max.burst", str(cpu_quota_us(limits)))  # see CPU_BURST below
            except OSError:
                group.remove()
                raise
            return group
        group = RunCgroup(self.version, [])
        try:
            for parent in (self.pids_parent, self.memory_parent) + ((self.cpu_parent,) if self.cpu_parent else ()):
                (parent / name).mkdir()
                group.paths.append(parent / name)  # pids, memory, then cpu: memory_exceeded reads paths[1]
            pids, memory = group.paths[:2]
            _write(pids / "pids.max", str(limits.max_processes))
            _write(memory / "memory.limit_in_bytes", str(limits.memory_bytes))
            _try_write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
            if self.cpu_parent is not None:
                _write(group.paths[2] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                _write(group.paths[2] / "cpu.cfs_quota_us", str(cpu_quota_us(limits)))
                _write(group.paths[2] / "cpu.shares", str(_grader_weight()))
                _try_write(group.paths[2] / "cpu.cfs_burst_us", str(cpu_quota_us(limits)))
        except OSError:
            group.remove()
            raise
        return group

    def sweep_leftovers(self) -> int:
        """Remove the run groups a killed grader left behind (empty, older than LEFTOVER_SECONDS: a run's
        group lives its run's seconds); how many. A group with a process in it cannot be removed."""
        now = time.time()
        removed = 0
        for parent in {self.pids_parent, self.memory_parent, *([self.cpu_parent] if self.cpu_parent else [])}:
            for path in parent.glob("chainrule-*"):
                try:
                    if now - path.stat().st_mtime < LEFTOVER_SECONDS:
                        continue
                    for group in RunCgroup(self.version, [path])._groups():  # a submission's own subgroups first
                        group.rmdir()
                    removed += 1
                except OSError:
                    continue  # in use, or gone already
        return removed


class RunCgroup:
    def __init__(self, version: int, paths: list[Path]) -> None:
        self.version = version
        self.paths = paths

    def admit(self, pids: list[int]) -> None:
        """Move the processes `pids` (the run's first ones, waiting at its gate) into the run's groups."""
        for path in self.paths:
            for pid in pids:
                _write(path / "cgroup.procs", str(pid))

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


def _grader_weight() -> int:
    return cpu_weight(os.getpriority(os.PRIO_PROCESS, 0))


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


def probe() -> tuple[CgroupBackend | None, list[tuple[str, str]]]:
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
            backend = CgroupBackend(2, parent, parent)
            group = backend.create(limits)
            group.remove()
            if "cpu" not in available:
                backend.cpu_missing = f"{parent} offers no cpu controller (it offers {sorted(available)})"
                return _swept(backend), []
            return _swept(_with_cpu(backend, parent, limits)), []
        except OSError as error:
            errors.append(f"cgroup v2 at {base}: {error}")
    # cgroup v1: separate pids and memory hierarchies.
    try:
        pids_parent = root / "pids" / _own_cgroup("pids").lstrip("/")
        memory_parent = root / "memory" / _own_cgroup("memory").lstrip("/")
        backend = CgroupBackend(1, pids_parent, memory_parent, "; ".join(errors) or None)
        group = backend.create(limits)
        group.remove()
        try:
            cpu_parent = root / "cpu" / _own_cgroup("cpu").lstrip("/")
        except OSError as error:
            backend.cpu_missing = f"cgroup v1 has no cpu hierarchy ({error})"
            return _swept(backend), []
        return _swept(_with_cpu(backend, cpu_parent, limits)), []
    except OSError as error:
        errors.append(f"cgroup v1: {error}")
    return None, [("cgroup", "; ".join(errors) or "no cgroup hierarchy is mounted at /sys/fs/cgroup")]


def _swept(backend: CgroupBackend) -> CgroupBackend:
    backend.sweep_leftovers()
    return backend


def _with_cpu(backend: CgroupBackend, cpu_parent: Path, limits: Limits) -> CgroupBackend:
    """The backend with the CPU limit, when a group with it can be made here; otherwise the backend
    as it was, saying why runs get no CPU limit."""
    trial = CgroupBackend(backend.version, backend.pids_parent, backend.memory_parent, backend.note, cpu_parent)
    try:
        trial.create(limits).remove()
    except OSError as error:
        backend.cpu_missing = f"cannot set a CPU limit under {cpu_parent}: {error}"
        return backend
    return trial


def prepare(plan: Plan) -> None:
    """A fresh group for the run (without it, when it cannot be made: the run goes on and says so). The
    grader moves the run's first processes into it while they wait, as nsjail does from its parent."""
    if not plan.isolation.cgroup:
        return
    try:
        group = plan.isolation.cgroup.create(plan.limits)
    except OSError as error:
        plan.isolation = plan.isolation.without("cgroup", f"could not create this run's cgroup: {error}")
        return
    plan.cgroup = group
    plan.cleanups.append(group.remove)
    plan.on_start.append(group.admit)
    plan.on_stop.append(lambda process, deadline: group.kill_all(deadline))
