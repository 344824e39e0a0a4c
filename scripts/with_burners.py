"""Run a command beside CPU burners, to see how it fares on a busy machine (docs/performance.md, "The suite on a
busy machine").

    python scripts/with_burners.py [--per-core N] -- CMD [ARG ...]

Starts N (default 2) burners per core this process may use (tests/burners.py: each a spinning process in a
session of its own, so Linux's autogroup weighs each as one program of its own), runs CMD beside them, then
stops them, and ends as CMD ended: its exit code, or the signal that ended it. Ctrl-C reaches CMD from the
terminal (it runs in this process's group; the burners, in sessions of their own, do not get it), so CMD stops,
then the burners. SIGTERM and SIGHUP sent to this process are passed on to CMD. Should this process be killed
outright, each burner dies with it (the kernel's parent-death signal); CMD is left to run.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from burners import burners, cores  # noqa: E402

PASSED_ON = (signal.SIGTERM, signal.SIGHUP)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="%(prog)s [--per-core N] -- CMD [ARG ...]")
    parser.add_argument("--per-core", type=int, default=2, metavar="N",
                        help="burners per core this process may use (default: 2)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --, for example: -- make test")
    if args.per_core < 0:
        parser.error(f"--per-core is the number of burners per core, 0 or more, not {args.per_core}")
    # Ctrl-C is the terminal's, sent to CMD too: this process waits for CMD to end rather than leave it. A
    # handler, not SIG_IGN, which CMD would inherit.
    signal.signal(signal.SIGINT, lambda number, frame: None)
    with burners(args.per_core) as started:
        print(f"with_burners: {len(started)} burners on {cores()} cores beside: {' '.join(command)}",
              file=sys.stderr, flush=True)
        try:
            process = subprocess.Popen(command)
        except OSError as error:
            print(f"with_burners: could not run {command[0]}: {error.strerror or error}", file=sys.stderr)
            return 127
        for passed in PASSED_ON:
            signal.signal(passed, lambda number, frame: process.send_signal(number))
        returncode = process.wait()
    return returncode


def end_as(returncode: int) -> None:
    """Exit with CMD's code, or die of the signal that ended CMD."""
    if returncode < 0:
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
        raise SystemExit(128 - returncode)  # a signal that does not end a process
    raise SystemExit(returncode)


if __name__ == "__main__":
    end_as(main())
