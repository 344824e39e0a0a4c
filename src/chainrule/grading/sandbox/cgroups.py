"""The cgroup layer: one fresh group per run with a process limit (pids.max) and a memory limit.

Two backends: cgroup v2 (memory.max, one unified group) and cgroup v1 (separate pids and memory
hierarchies, memory.limit_in_bytes). At the end of a run every process left in the group (and any group
a submission made below it) is killed, and the groups are removed. Linux only; nothing here runs at import.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

from chainrule.grading.sandbox.limits import Limits


class CgroupBackend:
    """Creates one cgroup per run, with a process and a memory limit, and kills whatever is left in it."""

    def __init__(self, version: int, pids_parent: Path, memory_parent: Path, note: str | None = None) -> None:
        self.version = version
        self.pids_parent = pids_parent
        self.memory_parent = memory_parent
        self.note = note  # why the other cgroup version was not used (a detail, not a missing layer)

    def create(self, limits: Limits) -> "RunCgroup":
        name = f"chainrule-{uuid.uuid4().hex[:12]}"
        if self.version == 2:
            path = self.pids_parent / name
            path.mkdir()
            group = RunCgroup(self.version, [path])
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
        group = RunCgroup(self.version, [pids, memory])
        _write(pids / "pids.max", str(limits.max_processes))
        _write(memory / "memory.limit_in_bytes", str(limits.memory_bytes))
        _try_write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        return group


class RunCgroup:
    def __init__(self, version: int, paths: list[Path]) -> None:
        self.version = version
        self.paths = paths

    def procs_files(self) -> list[str]:
        return [str(p / "cgroup.procs") for p in self.paths]

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
            return backend, []
        except OSError as error:
            errors.append(f"cgroup v2 at {base}: {error}")
    # cgroup v1: separate pids and memory hierarchies.
    try:
        pids_parent = root / "pids" / _own_cgroup("pids").lstrip("/")
        memory_parent = root / "memory" / _own_cgroup("memory").lstrip("/")
        backend = CgroupBackend(1, pids_parent, memory_parent, "; ".join(errors) or None)
        group = backend.create(limits)
        group.remove()
        return backend, []
    except OSError as error:
        errors.append(f"cgroup v1: {error}")
    return None, [("cgroup", "; ".join(errors) or "no cgroup hierarchy is mounted at /sys/fs/cgroup")]


def join(procs_files: list[str]) -> None:
    """In the child, before it gives up root: move the calling process into the run's groups."""
    for procs in procs_files:
        with open(procs, "w") as f:
            f.write("0")  # "0" means the writing process itself
