"""One run's plan: the config every layer reads, and what each layer adds to the run's start and end.

layers.py fills it by calling each layer's `prepare(plan)` in the order of LAYERS, in the grader and
before anything is started. A layer adds its part where it takes effect:

* `on_start`: what the grader does to the run's first processes while they wait at the gate, before
  anything of the program runs (the cgroup takes them in, the rlimits are lowered);
* `steps`: what the launcher (launcher.py, a fresh single-threaded interpreter) applies to itself, in
  order, before it executes the program: used when the run has no bubblewrap;
* `bwrap` and `inside`: bubblewrap's options (namespaces, mounts, the filter) and what bwrap executes
  before the program (setpriv, which switches users);
* `pass_fds`: files the run's first process inherits (the compiled filter);
* `on_stop` and `cleanups`: what ends the run's processes and what removes the run's resources.

The gate is how the first processes wait: bwrap's own (bubblewrap.Gate), else the
launcher's socket (layers.py). Either way no Python runs between fork and exec in the grader.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from chainrule.grading.sandbox.limits import Limits

if TYPE_CHECKING:
    import subprocess

LAUNCHER = Path(__file__).with_name("launcher.py")


@dataclass
class Plan:
    """The config of one run (`isolation` to `env`) and what the layers made of it (the rest)."""

    isolation: Any  # the probed Isolation; a layer that cannot be set up for this run is dropped from it
    limits: Limits
    scratch: str
    program: list[str]
    read_only: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    on_start: list[Callable[[list[int]], None]] = field(default_factory=list)
    steps: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    bwrap: list[str] = field(default_factory=list)
    inside: list[str] = field(default_factory=list)
    pass_fds: list[int] = field(default_factory=list)
    on_stop: list[Callable[[subprocess.Popen[bytes], float], None]] = field(default_factory=list)
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    gate: Any = None  # how the run's first processes wait for the grader (layers.py)
    cgroup: Any = None  # the run's cgroups.RunCgroup, when it has one
    reaped: bool = False  # started below the reaper (neither a pid namespace nor a cgroup holds the run)

    @property
    def work(self) -> str:
        """The program's working directory and only writable place."""
        return os.path.join(self.scratch, "work")

    def step(self, layer: str, *args: object) -> None:
        """Have the launcher apply `layer`'s in_child(*args) (as strings), after the steps added before."""
        self.steps.append((layer, tuple(str(arg) for arg in args)))

    def command(self, sync_fd: int | None = None) -> list[str]:
        """What the grader executes: bwrap, its options, what it executes and the program; or, without
        bubblewrap, the launcher (waiting on `sync_fd`), its steps and the program."""
        if self.bwrap:
            # The program by its real path: a virtual environment's link points outside what is mounted.
            return self.bwrap + ["--"] + self.inside + [os.path.realpath(self.program[0])] + self.program[1:]
        argv = [os.path.realpath(sys.executable), "-I", "-S", str(LAUNCHER), str(sync_fd)]
        for layer, args in self.steps:
            argv += [layer, str(len(args)), *args]
        return argv + ["--"] + self.program

    def close_fds(self) -> None:
        """Close the grader's copies of the files the run inherits (once it has them, or never will)."""
        while self.pass_fds:
            os.close(self.pass_fds.pop())

    def clean_up(self) -> None:
        """Remove what the layers made for this run (its cgroup, its gate); each cleanup runs once."""
        self.close_fds()
        if self.gate is not None:
            self.gate.close()
        while self.cleanups:
            self.cleanups.pop()()
