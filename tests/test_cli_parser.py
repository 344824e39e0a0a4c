"""`chainrule COMMAND` builds its own command's parser only; `chainrule --help` builds every one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from chainrule.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
LOADED = ("import sys; from chainrule.cli import build_parser; build_parser({command!r}); "
          "print(sorted(m for m in ('chainrule.lessons', 'chainrule.classes.accounts') if m in sys.modules))")


def loaded_by(command: str | None) -> str:
    run = subprocess.run([sys.executable, "-c", LOADED.format(command=command)], capture_output=True, text=True,
                         check=True)
    return run.stdout.strip()


def test_a_command_loads_only_what_its_own_parser_needs() -> None:
    assert loaded_by("progress") == "[]"
    assert loaded_by("check") == "['chainrule.lessons']"  # its choices are the exercises
    assert loaded_by(None) == "['chainrule.classes.accounts', 'chainrule.lessons']"


# Commands that one module registers together.
TOGETHER = [{"progress", "review"}, {"exercises", "start", "check"}]


def test_the_whole_parser_lists_every_command_and_one_command_its_own() -> None:
    def commands(parser) -> set[str]:
        (subparsers,) = [action for action in parser._actions if action.dest == "command"]
        return set(subparsers.choices)

    every = commands(build_parser())
    assert {"lesson", "serve", "worker", "class", "lessons", "graph", "exercises", "start", "check", "train",
            "progress", "review"} <= every
    for command in every:
        expected = next((group for group in TOGETHER if command in group), {command})
        assert commands(build_parser(command)) == expected, command


def test_the_start_benchmark_runs() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_cli.py"), "--runs", "1"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [line.split()[0] for line in run.stdout.splitlines()[1:]] == ["progress", "lessons", "worker", "check"]
