"""What a run got from the machine, and the one rule that says whether it was starved.

A run's verdict must be about what its code used (CPU time, memory, output), never about how long it
waited for a core on a busy machine. The kernel keeps, per thread, the time it ran on a core and the time
it was runnable but waiting for one (`/proc/<pid>/task/<tid>/schedstat`: on-CPU ns, run-queue wait ns,
slices). Waiting for a core includes waiting for the run's own CPU quota (cgroup `cpu.max` throttling).
A thread that sleeps (a learner's `time.sleep`, a promise that never settles) neither runs nor waits.

`starved()` is the rule the process layer applies when a run reaches its wall-clock hang guard: the run
waited for a core for at least a quarter of the time, and it got under half of the cores it may use. Code
that computes without end meets its CPU limit first on any machine that gives it a fair share; code that
waits without end neither ran nor waited, and that is the learner's timeout. Linux only; elsewhere a run
measures as having waited for nothing (its guard is then a plain timeout).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Iterator

WAITED_SHARE = 0.25  # at least this share of the wall time spent waiting for a core ...
RAN_SHARE = 0.5  # ... while getting under this share of the run's cores: starved


@dataclass(frozen=True)
class Usage:
    """Seconds the run's live threads ran on a core, and waited for one, since each started."""

    ran: float = 0.0
    waited: float = 0.0


def starved(usage: Usage, elapsed: float, cores: float) -> bool:
    """The one rule: did this run, `elapsed` seconds old, wait for the machine rather than for itself?"""
    return usage.waited >= WAITED_SHARE * elapsed and usage.ran < RAN_SHARE * cores * elapsed


def measure(pids: Iterable[int]) -> Usage:
    """The run's usage, summed over every thread of the processes `pids` (gone ones count nothing)."""
    ran = waited = 0
    for pid in set(pids):
        for text in _per_thread(pid, "schedstat"):
            fields = text.split()
            if len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
                ran, waited = ran + int(fields[0]), waited + int(fields[1])
    return Usage(ran / 1e9, waited / 1e9)


def descendants(pid: int) -> set[int]:
    """`pid` and every process below it that is still its descendant (a run without a cgroup)."""
    found, todo = set(), [pid]
    while todo:
        current = todo.pop()
        if current not in found:
            found.add(current)
            todo.extend(int(child) for text in _per_thread(current, "children") for child in text.split())
    return found


def _per_thread(pid: int, name: str) -> Iterator[str]:
    """The text of /proc/<pid>/task/<tid>/<name> for each thread of `pid` that can be read."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/{name}") as f:
                yield f.read()
        except OSError:
            continue
