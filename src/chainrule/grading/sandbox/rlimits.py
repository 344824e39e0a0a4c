"""The rlimits layer: per-process limits (always on, POSIX only), lowered by the grader on the run's
waiting processes (prlimit) before anything of the program runs, or, where there is no prlimit (not
Linux), by the launcher on itself; the program and everything it starts inherit them.

RLIMIT_NPROC is not used: it does not bind root and counts threads (node needs several); the cgroup's
pids.max bounds processes instead.
"""

from __future__ import annotations

TYPE_CHECKING = False  # the launcher imports this module: no `typing` (tens of ms) and no package imports
if TYPE_CHECKING:
    from collections.abc import Sequence

    from chainrule.grading.sandbox.limits import Limits
    from chainrule.grading.sandbox.plan import Plan


def prepare(plan: Plan) -> None:
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing may run without these limits
        raise OSError("per-process limits need Python's resource module, which this system lacks") from None
    if hasattr(resource, "prlimit"):  # Linux: the grader lowers them on the processes waiting at the gate
        plan.on_start.append(lambda pids: lower(pids, settings(plan.limits)))
    else:
        plan.step("rlimits", *settings(plan.limits))


def settings(limits: Limits) -> list[str]:
    """Every limit as NAME=SOFT:HARD."""
    import math

    cpu = max(1, math.ceil(limits.cpu_seconds + limits.grader_cpu_seconds))
    return [f"RLIMIT_CPU={cpu}:{cpu + 1}"] + [f"{name}={value}:{value}" for name, value in planned(limits)]


def planned(limits: Limits) -> list[tuple[str, int]]:
    """(name, value) of every limit besides CPU (soft: the learner's 5 s and the grader's own share, hard a
    second later: SIGXCPU, then SIGKILL)."""
    return [
        ("RLIMIT_AS", limits.address_space_bytes),
        ("RLIMIT_FSIZE", limits.file_size_bytes),
        ("RLIMIT_NOFILE", limits.open_files),
        ("RLIMIT_CORE", 0),
        # Each POSIX message queue is charged to its user's RLIMIT_MSGQUEUE budget: allow none.
        ("RLIMIT_MSGQUEUE", limits.message_queue_bytes),
    ]


def lower(pids: list[int], limits: list[str]) -> None:
    """In the grader: lower the limits (NAME=SOFT:HARD each) of the processes `pids`, waiting at the gate."""
    import resource

    for pid in pids:
        for number, values in _parsed(limits):
            resource.prlimit(pid, number, values)


def in_child(*limits: str) -> None:
    """In the launcher: lower this process's limits (NAME=SOFT:HARD each)."""
    import resource

    for number, values in _parsed(limits):
        resource.setrlimit(number, values)


def _parsed(limits: Sequence[str]) -> list[tuple[int, tuple[int, int]]]:
    import resource

    found = []
    for setting in limits:
        name, values = setting.split("=")
        soft, hard = values.split(":")
        if hasattr(resource, name):  # RLIMIT_MSGQUEUE exists on Linux only
            found.append((getattr(resource, name), (int(soft), int(hard))))
    return found
