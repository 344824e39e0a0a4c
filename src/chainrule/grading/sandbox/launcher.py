"""The launcher: how a run without bubblewrap starts. It waits, applies the run's steps, then executes it.

    python -I -S launcher.py SYNC_FD [LAYER COUNT ARG...]... -- PROGRAM [ARG...]

The grader is a threaded server, and between fork and exec only async-signal-safe work is safe there:
so it starts this launcher with no Python between its fork and exec (subprocess without preexec_fn),
and what a layer must do in the new process happens here, in a fresh single-threaded interpreter.
(Under bubblewrap, bwrap waits and applies the rest itself; see bubblewrap.Gate.)

1. It waits on SYNC_FD (one end of a socket pair) until the grader says go: by then the grader has put
   this process in the run's cgroup and lowered its rlimits, so nothing below runs outside them.
2. It applies each step, in the order the layers planned them (layers.LAYERS), by calling its layer
   module's `in_child(*ARGS)`: the reaper, the seccomp filter, the switch of user (and the rlimits on a
   system without prlimit).
3. It executes PROGRAM.

It answers "+" on SYNC_FD as it begins. If a step fails, it writes why after it and exits with status
127; a successful exec closes SYNC_FD (close-on-exec), which tells the grader the program has started.

Standard library only, and the layer modules alone: the package's __init__ files (which import the
grader and the engine) do not run here.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # standard library only, and no `typing`: the launcher starts every run
if TYPE_CHECKING:
    from types import ModuleType

PACKAGE = ("chainrule", "chainrule.grading", "chainrule.grading.sandbox")


def _layer(name: str) -> ModuleType:
    """The layer module `name` of this package, imported without running the package's __init__ files."""
    directory = os.path.dirname(os.path.abspath(__file__))
    for package in reversed(PACKAGE):
        if package not in sys.modules:
            module = type(sys)(package)
            module.__path__ = [directory]
            sys.modules[package] = module
        directory = os.path.dirname(directory)
    full = f"{PACKAGE[-1]}.{name}"
    __import__(full)
    return sys.modules[full]


def parse(args: list[str]) -> tuple[int, list[tuple[str, list[str]]], list[str]]:
    """(SYNC_FD, [(layer, args)], PROGRAM argv) from the launcher's arguments."""
    sync_fd, rest = int(args[0]), args[1:]
    steps = []
    while rest[0] != "--":
        count = int(rest[1])
        steps.append((rest[0], rest[2:2 + count]))
        rest = rest[2 + count:]
    return sync_fd, steps, rest[1:]


def run(steps: list[tuple[str, list[str]]], program: list[str]) -> str:
    """Apply the steps, then become the program; returns only with why that could not be done."""
    for layer, layer_args in steps:
        try:
            _layer(layer).in_child(*layer_args)
        except BaseException as error:  # anything: nothing may be executed after a step that failed
            return f"the {layer} layer could not be applied: {error}"
    try:
        os.execvp(program[0], program)
    except OSError as error:
        return f"{program[0]} could not be executed: {error}"


def main(args: list[str]) -> None:
    sync_fd, steps, program = parse(args)
    os.set_inheritable(sync_fd, False)  # closed by the exec: the grader's sign that the program started
    if os.read(sync_fd, 1) != b"g":
        os._exit(125)  # the grader went away (or gave up on this run) before it said go
    os.write(sync_fd, b"+")  # begun: the grader now hears of a failure, or of the exec by the close
    os.write(sync_fd, run(steps, program).encode(errors="replace")[:2000])
    os._exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
