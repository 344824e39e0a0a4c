"""What one run may use (Limits) and what happened to it (RunOutcome): plain data, no platform code."""

from __future__ import annotations

from dataclasses import dataclass, field

MB = 1024 * 1024


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
    cpu_cores: float = 1.0  # CPU time per wall second for the whole run, all its processes (cgroup cpu)
    pipe_grace_seconds: float = 0.3
    work_bytes: int = 64 * MB  # size of the writable tmpfs under bubblewrap
    message_queue_bytes: int = 0  # RLIMIT_MSGQUEUE: POSIX message queues are a per-user budget


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
