"""The rlimits layer: per-process limits, set in the child between fork and exec (always on, POSIX only).

RLIMIT_NPROC is not used: it does not bind root and counts threads (node needs several); the cgroup's
pids.max bounds processes instead.
"""

from __future__ import annotations

from chainrule.grading.sandbox.limits import Limits


def apply(limits: Limits) -> None:
    """Lower this process's limits to `limits` (called in the child; `resource` is POSIX-only)."""
    import resource

    cpu = max(1, int(limits.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU first, SIGKILL a second later
    for name, value in planned(limits):
        setting = getattr(resource, name, None)
        if setting is not None:  # RLIMIT_MSGQUEUE exists on Linux only
            resource.setrlimit(setting, (value, value))


def planned(limits: Limits) -> list[tuple[str, int]]:
    """(name, value) of every limit besides CPU: what `apply` sets, for the report and the docs."""
    return [
        ("RLIMIT_AS", limits.address_space_bytes),
        ("RLIMIT_FSIZE", limits.file_size_bytes),
        ("RLIMIT_NOFILE", limits.open_files),
        ("RLIMIT_CORE", 0),
        # Each POSIX message queue is charged to its user's RLIMIT_MSGQUEUE budget: allow none.
        ("RLIMIT_MSGQUEUE", limits.message_queue_bytes),
    ]
