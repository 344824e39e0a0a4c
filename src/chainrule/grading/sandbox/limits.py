"""What one run may use (Limits) and what happened to it (RunOutcome): plain data, no platform code."""

from __future__ import annotations

from dataclasses import dataclass, field

from chainrule.grading.json_objects import JsonObject

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run. `cpu_seconds` is the learner's CPU time (RLIMIT_CPU's soft limit, raised by
    `grader_cpu_seconds`, the grader's own work in the same process; the hard limit is one second more).
    `wall_seconds` is only a hang guard (code that waits, not computes): a run that reaches it while it was
    waiting for a core gets `starved_windows` such windows in all before it ends as the server's delay
    (usage.py says when a run was starved)."""

    wall_seconds: float = 20.0
    cpu_seconds: int = 5
    grader_cpu_seconds: float = 0.0  # the harness's own CPU before the learner's code runs (TypeScript: its type check)
    starved_windows: int = 6
    address_space_bytes: int = 1024 * MB
    file_size_bytes: int = 16 * MB
    open_files: int = 256
    output_bytes: int = 1_000_000
    max_processes: int = 64
    memory_bytes: int = 512 * MB
    cpu_cores: float = 1.0  # CPU time per wall second for the whole run, all its processes (cgroup cpu)
    pipe_grace_seconds: float = 0.3
    work_bytes: int = 64 * MB  # size of the writable tmpfs under bubblewrap
    message_queue_bytes: int = 0  # RLIMIT_MSGQUEUE: POSIX message queues are a per-user budget

    @property
    def longest_wall_seconds(self) -> float:
        """The longest a run may take on a busy machine: every guard window it may be given."""
        return self.wall_seconds * max(1, self.starved_windows)


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
    isolation: JsonObject = field(default_factory=dict)
    start_error: str | None = None  # the sandbox itself could not start the program
    cpu_exceeded: bool = False  # the run's threads together used more than its CPU limit
    starved: bool = False  # timed out while waiting for a core: the machine's delay, not the program's
    cpu_seconds: float = 0.0  # at the wall guard: CPU time the run's live threads had used
    waited_seconds: float = 0.0  # ... and time they had waited, runnable, for a core
