"""How long a `chainrule` command takes to start: its whole parser against its own command's only.

    .venv/bin/python benchmarks/bench_cli.py [--runs N]

`chainrule COMMAND` builds the parser of COMMAND alone (cli.build_parser(COMMAND)); `chainrule --help`
builds every command's, which loads what their choices list (the lesson folders for the exercises, the
roles of a class). Each run is a fresh Python process, as a command is, and imports chainrule, builds
the parser and exits; the two ways are timed alternately in this one process, and each is charged its
own process's start. Medians of N runs, in milliseconds, and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = ("progress", "lessons", "worker", "check")
BUILD = "import sys; from chainrule.cli import build_parser; build_parser(None if sys.argv[1] == '-' else sys.argv[1])"


def once(command: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", BUILD, command], check=True)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    print(f"{'command':<10} {'every parser ms':>16} {'its own ms':>11} {'ratio':>6}")
    for command in COMMANDS:
        whole, own = [], []
        for _ in range(args.runs):  # alternately, so that a busy moment of the machine hits both
            whole.append(once("-"))
            own.append(once(command))
        a, b = statistics.median(whole), statistics.median(own)
        print(f"{command:<10} {a:16.1f} {b:11.1f} {b / a:6.2f}")


if __name__ == "__main__":
    main()
