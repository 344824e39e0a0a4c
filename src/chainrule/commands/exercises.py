"""`chainrule exercises`, `chainrule start` and `chainrule check`: the graded exercises from a terminal.

    chainrule exercises                              list the exercises
    chainrule start EXERCISE --lang ts               write EXERCISE.ts (the starter) here
    chainrule check EXERCISE.ts [--json]             grade it: a table of tests, and one line on isolation
    chainrule check EXERCISE.ts --verbose            ... and the sandbox's layers under that line

The exercises are the lessons' exercise folders (chainrule.lessons.register_exercises registers them).

Exit codes of `check`: 0 every test passed, 1 not all passed, 2 usage error (no such file, unknown
extension, exercise not recognisable).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Iterator

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

def _exercises() -> dict:
    """The registered exercises: the built-in lessons' exercise folders, registered first."""
    from chainrule.grading import EXERCISES
    from chainrule.lessons import register_exercises

    register_exercises()
    return EXERCISES


class _Choices:
    """A command's choices, listed when argparse first reads them (to show a command's usage or check a value
    given): building every command's parser, as `chainrule --help` does, then loads no lesson nor grader.
    Set on the argument once it is added (`add_argument` formats its usage once, to check it)."""

    def __init__(self, listed: Callable[[], list[str]]) -> None:
        self._listed = listed

    def __contains__(self, value: object) -> bool:
        return value in self._listed()

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed())


def _exercise_ids() -> list[str]:
    return list(_exercises())


def _languages() -> list[str]:
    from chainrule.grading.registry import LANGUAGE_ALIASES

    return sorted(LANGUAGE_ALIASES)


def register(subparsers: argparse._SubParsersAction) -> None:
    exercise_ids, languages = _Choices(_exercise_ids), _Choices(_languages)

    exercises = subparsers.add_parser("exercises", help="list the graded coding exercises")
    exercises.add_argument("--json", action="store_true", help="print the list as JSON")
    exercises.set_defaults(func=run_exercises)

    start = subparsers.add_parser("start", help="write an exercise's starter file to edit")
    start.add_argument("exercise", help="exercise id").choices = exercise_ids
    start.add_argument("--lang", "-l", default="python",
                       help="python (py), javascript (js) or typescript (ts); default python").choices = languages
    start.add_argument("--output", "-o", type=Path, help="file to write (default: <exercise>.<ext> here)")
    start.add_argument("--force", action="store_true", help="overwrite the file if it exists")
    start.set_defaults(func=run_start)

    check = subparsers.add_parser("check", help="grade your exercise file in the sandbox")
    check.add_argument("file", type=Path, help="your file: .py, .js or .ts")
    check.add_argument("--exercise", "-e", help="exercise id (default: read from the file's marker comment or "
                       "function names)").choices = exercise_ids
    check.add_argument("--lang", "-l", help="language (default: from the file's extension)").choices = languages
    check.add_argument("--json", action="store_true", help="print the full result as JSON")
    check.add_argument("--verbose", "-v", action="store_true",
                       help="also list the sandbox's layers and why any is missing")
    check.set_defaults(func=run_check)


def run_exercises(args: argparse.Namespace) -> int:
    from chainrule.grading import list_exercises

    _exercises()
    listed = list_exercises()
    if args.json:
        print(json.dumps(listed, indent=2))
        return EXIT_OK
    width = max(len(e["id"]) for e in listed)
    for e in listed:
        print(f"{e['id']:<{width}}  {e['title']}")
        print(f"{'':<{width}}  {e['summary']}")
        print(f"{'':<{width}}  languages: {', '.join(e['languages'])}")
    print(f"\nStart one with:  chainrule start {listed[0]['id']} --lang py   (or js, ts)")
    return EXIT_OK


def run_start(args: argparse.Namespace) -> int:
    from chainrule.grading import LANGUAGES, normalize_language, starter_source

    _exercises()
    language = normalize_language(args.lang)
    path: Path = args.output or Path(f"{args.exercise}.{LANGUAGES[language]}")
    if path.exists() and not args.force:
        print(f"{path} already exists; not overwriting it (use --force to replace it).", file=sys.stderr)
        return EXIT_FAILED
    try:
        path.write_text(starter_source(args.exercise, language), encoding="utf-8")
    except OSError as error:
        print(f"could not write {path}: {error.strerror or error}", file=sys.stderr)
        return EXIT_FAILED
    print(f"wrote {path}: edit it, then run  chainrule check {path}")
    return EXIT_OK


def _usage(message: str) -> int:
    print(f"chainrule check: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_check(args: argparse.Namespace) -> int:
    from chainrule.grading import detect_exercise, grade, normalize_language
    from chainrule.grading.registry import EXTENSION_LANGUAGE

    _exercises()
    path: Path = args.file
    if path.is_dir():
        return _usage(
            f"{path} is a directory; check takes one file, e.g. chainrule check {path / 'my-exercise.py'}"
        )
    if not path.is_file():
        return _usage(f"no such file: {path}")
    language = normalize_language(args.lang) if args.lang else EXTENSION_LANGUAGE.get(path.suffix.lower())
    if language is None:
        allowed = ", ".join(sorted(EXTENSION_LANGUAGE))
        return _usage(f"cannot tell the language of {path.name} (extensions: {allowed}); pass --lang")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return _usage(f"cannot read {path} as UTF-8 text: {error}")
    exercise = args.exercise or detect_exercise(source)
    if exercise is None:
        return _usage(
            f"cannot tell which exercise {path.name} is for (no 'chainrule exercise:' marker and no "
            "function of a known exercise); pass --exercise"
        )
    result = grade(exercise, language, source)
    if args.json:
        print(json.dumps(result, indent=2, allow_nan=False))
    else:
        print(render_result(result, verbose=args.verbose))
    return EXIT_OK if result["status"] == "pass" else EXIT_FAILED


def _numbers(values: list | None) -> str:
    """A test's numbers as the lesson page shows them (grading.numbers.graded_texts: one text per number)."""
    from chainrule.grading.rounding import graded_texts

    return graded_texts(values) or "-"


def render_result(result: dict, verbose: bool = False) -> str:
    """A plain-text report: one row per test (test, verdict, expected, actual), then details.

    Safe for a terminal: what the learner's code printed or raised is shown with its control
    characters escaped (before it is split into lines, so a carriage return cannot start a fake one).
    """
    from chainrule.text_safety import terminal_text

    lines = [f"{result['exercise']} ({result['language']}): {result['verdict'].upper()}"]
    tests = result["tests"]
    if tests:
        rows = [("test", "verdict", "expected", "actual")]
        rows += [(t["name"], t["status"], _numbers(t["expected"]), _numbers(t["actual"])) for t in tests]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        for row in rows:
            lines.append("  " + "  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)))
    failing = [t for t in tests if t["status"] != "pass"]
    for t in failing[:3]:
        lines.append("")
        lines.append(f"{t['name']}: {t['status']}")
        if t.get("test_code"):  # a hidden case's call is shown once the run passes
            lines.append(f"  call: {t['test_code']}")
        for text in terminal_text(t["message"] or "").split("\n"):
            lines.append(f"  {text}")
        if t.get("output"):
            lines.append("  your output:")
            lines.extend("    " + o for o in terminal_text(t["output"]).split("\n")[:10])
    if len(failing) > 3:
        lines.append(f"\n... and {len(failing) - 3} more tests not passing")
    if result.get("message") and (result["status"] == "error" or result.get("type_errors")):
        lines.append("")
        lines.append(terminal_text(result["message"]))
    elif result.get("diagnosis"):  # what the whole run says (e.g. it only fits the cases shown), once
        lines.append("")
        lines.append(terminal_text(result["diagnosis"]))
    passed = sum(t["status"] == "pass" for t in tests)
    lines.append("")
    lines.append(f"{passed} of {len(tests)} tests passed.")
    if result.get("isolation"):  # None: the run never ran (the grader was busy)
        lines += isolation_lines(result["isolation"], verbose)
    return terminal_text("\n".join(lines))


def isolation_lines(isolation: dict, verbose: bool = False) -> list[str]:
    """One plain line on how the code was isolated; with `verbose`, the layers and reasons beneath it."""
    lines = [f"isolation: {isolation['summary']}"]
    if verbose:
        on = [name for name, present in isolation["layers"].items() if present is True]
        lines.append(f"  layers in use: {', '.join(on)}")
        lines += [f"  {name}: {detail}" for name, detail in isolation.get("details", {}).items()]
        lines += [f"  not available: {m['layer']}: {m['error']}" for m in isolation["missing"]]
    return lines
