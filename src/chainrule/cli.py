"""The `chainrule` command: a thin dispatcher over one module per feature.

Each module in `chainrule.commands` exposes `register(subparsers)`, adding its subcommands and
setting `func` on their parsers; `func(args)` returns the exit code. Modules are imported lazily
so that `chainrule --help` stays fast and a broken feature cannot take the others down.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from chainrule import __version__

# Feature modules under chainrule.commands, in the order their commands appear in --help.
COMMAND_MODULES = ("lesson", "lessons", "graph", "grading", "train", "progress")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chainrule",
        description="Learn, see and use backpropagation.",
    )
    parser.add_argument("--version", action="version", version=f"chainrule {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"chainrule.commands.{name}")
        except ModuleNotFoundError as error:
            if error.name == f"chainrule.commands.{name}":
                continue  # that feature is not part of this build
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (`chainrule graph ... | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
