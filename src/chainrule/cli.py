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
COMMAND_MODULES = ("lesson", "serve", "worker", "class_", "lessons", "graph", "grading", "train", "progress")


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
        try:
            module.register(subparsers)
        except ImportError as error:
            # A module this platform lacks (Windows has no `resource`, say): the other commands still work,
            # and these say what is missing when they are used.
            for command in getattr(module, "COMMANDS", (name,)):
                _register_unavailable(subparsers, command, error)
    return parser


def _register_unavailable(subparsers: argparse._SubParsersAction, command: str, error: ImportError) -> None:
    missing = f"the Python module {error.name!r}" if error.name else "a module"
    message = (f"chainrule {command} is not available on this system: it needs {missing}, which this Python "
               f"does not have ({error}). The README's 'What works where' lists what runs on each platform.")
    parser = subparsers.add_parser(command, help=f"(not available here: needs {missing})", add_help=False)
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=lambda args: _unavailable(message))


def _unavailable(message: str) -> int:
    print(message, file=sys.stderr)
    return 2


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
