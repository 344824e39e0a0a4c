"""The `chainrule` command: a thin dispatcher over one module per feature.

Each module in `chainrule.commands` exposes `register(subparsers)`, adding its subcommands and
setting `func` on their parsers; `func(args)` returns the exit code. `chainrule COMMAND` imports the
module of COMMAND only (MODULE_COMMANDS), so that a command starts fast and a broken feature cannot take
the others down; a module that fails to import or register is listed as not available here.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from chainrule import __version__, quiet_start

# Each command and the module under chainrule.commands that implements it, in the order of --help. Only the
# module of the command run is imported (`chainrule check` never loads the web server's); `chainrule --help`
# imports them all. A module that implements several commands registers them all at once.
MODULE_COMMANDS = {
    "lesson": "lesson", "serve": "serve", "worker": "worker", "class": "class_", "lti": "lti", "sso": "sso",
    "lessons": "lessons", "graph": "graph", "exercises": "exercises", "start": "exercises", "check": "exercises",
    "train": "train", "progress": "progress", "review": "progress",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (command None), or, given a command's name, of that command alone (with the
    others its module registers): only that module is imported, and registering it can load what its choices list
    (the exercises, the roles), which the other commands never need."""
    parser = argparse.ArgumentParser(
        prog="chainrule",
        description="Learn, see and use backpropagation.",
    )
    parser.add_argument("--version", action="version", version=f"chainrule {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    if command is None:
        names = list(dict.fromkeys(MODULE_COMMANDS.values()))
    else:  # "": none, for `chainrule --version`
        names = [MODULE_COMMANDS[command]] if command in MODULE_COMMANDS else []
    for name in names:
        commands = [each for each, module in MODULE_COMMANDS.items() if module == name]
        try:
            importlib.import_module(f"chainrule.commands.{name}").register(subparsers)
        except ImportError as error:
            if isinstance(error, ModuleNotFoundError) and error.name == f"chainrule.commands.{name}":
                continue  # that feature is not part of this build
            # A module this platform lacks (Windows has no `resource`, say): the other commands still work,
            # and these say what is missing when they are used.
            for each in commands:
                _register_unavailable(subparsers, each, error)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The command argv runs, if it names one; "" for `--version` alone (no command's parser is needed); None for
    `--help` or a name no module has (the whole parser then lists every command)."""
    if list(argv) == ["--version"]:
        return ""
    if not argv or argv[0].startswith("-"):
        return None
    return argv[0] if argv[0] in MODULE_COMMANDS else None


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
    argv = list(sys.argv[1:] if argv is None else argv)
    command = _command_named(argv)
    quiet_start.starting(command)  # a server starts without the garbage collector (quiet_start.py)
    try:
        return _run(command, argv)
    finally:
        quiet_start.ended()


def _run(command: str | None, argv: list[str]) -> int:
    parser = build_parser(command)
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
