"""`chainrule progress export|import|info|optimize` and `chainrule review`.

Every command takes ``--data-dir`` (default $CHAINRULE_DATA_DIR, else the user's data directory).
A StoreError is printed as one clear message on stderr with exit code 1, never a traceback.
Only `progress import` creates a missing store; `export`, `info` and `review` only read, so a data
directory without a database (often a mistyped --data-dir) is an error rather than an empty store.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from chainrule.commands.arguments import whole_number
from chainrule.progress import StoreError, open_store
from chainrule.text_safety import terminal_text

DATA_DIR_HELP = (
    "directory holding the progress database (default: $CHAINRULE_DATA_DIR, else the user data "
    "directory, e.g. ~/.local/share/chainrule)"
)


def _fail(message: str) -> int:
    print(f"chainrule: error: {terminal_text(message)}", file=sys.stderr)  # may quote an imported file
    return 1


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn a StoreError into a message and exit code 1."""

    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except StoreError as error:
            return _fail(str(error))

    run.__doc__ = command.__doc__
    return run


def _write_atomically(path: Path, text: str) -> None:
    """Write to a temporary file next to ``path``, then rename it: never a half-written export."""
    directory = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def export_command(args: argparse.Namespace) -> int:
    """Write everything stored to a JSON file (or '-' for standard output)."""
    store = open_store(args.data_dir, create=False)  # a mistyped --data-dir must not export an empty store
    try:
        data = store.export_data()
    finally:
        store.close()
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if args.file == "-":
        if sys.stdout.isatty():  # JSON leaves C1 controls and bidi marks raw; a terminal gets \u escapes
            text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        sys.stdout.write(text)
        return 0
    target = Path(args.file)
    try:
        _write_atomically(target, text)
    except OSError as error:
        return _fail(f"cannot write {target}: {error.strerror or error}. Choose a writable path.")
    counts = ", ".join(f"{len(data[key])} {key.replace('_', ' ')}" for key in
                       ("predictions", "submissions", "quiz_answers", "cards", "review_logs"))
    print(f"Exported your progress to {target} ({counts}).")
    return 0


def _read_json_file(name: str) -> tuple[Any, str | None]:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return None, f"cannot read {name}: {reason}. Nothing was imported."
    try:
        return json.loads(text), None
    except RecursionError:
        return None, (f"{name} nests lists and objects too deeply to read. Nothing was imported; use a file "
                      "made by `chainrule progress export`.")
    except json.JSONDecodeError as error:
        return None, (
            f"{name} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}). "
            "Nothing was imported; use a file made by `chainrule progress export`."
        )


def import_command(args: argparse.Namespace) -> int:
    """Check a JSON file made by `progress export` completely, then add it in one transaction."""
    data, problem = _read_json_file(args.file)
    if problem:
        return _fail(problem)
    store = open_store(args.data_dir)
    try:
        added = store.import_data(data)
    except StoreError as error:
        if error.kind == "invalid-file":
            return _fail(f"{args.file}: {error}")
        raise
    finally:
        store.close()
    summary = ", ".join(f"{count} {key.replace('_', ' ')}" for key, count in added.items() if count)
    print(f"Imported {args.file} into {store.path}: {summary or 'nothing new'}.")
    return 0


def info_command(args: argparse.Namespace) -> int:
    """Say where the progress is kept and what it holds."""
    store = open_store(args.data_dir, create=False)
    try:
        data = store.export_data()
        due = store.due_reviews()
    finally:
        store.close()
    print(f"Progress database: {store.path}")
    for key in ("predictions", "code", "submissions", "quiz_answers", "explanations", "cards", "review_logs"):
        print(f"  {key.replace('_', ' ')}: {len(data[key])}")
    print(f"  due for review now: {len(due)}")
    return 0


def optimize_command(args: argparse.Namespace) -> int:
    """Fit FSRS's parameters to your review logs; they schedule only if they predict held-out reviews better."""
    from chainrule.progress.fitting import fit, learner_reviews, save_fit, summary
    from chainrule.progress.scheduling import fit_scope

    store = open_store(args.data_dir, create=False)
    try:
        result = fit(learner_reviews(store), steps=args.steps)
        if result.steps:
            save_fit(store, fit_scope("learner", store.learner_id), result, store.now())
    finally:
        store.close()
    for line in summary(result):
        print(line)
    return 0


def review_command(args: argparse.Namespace) -> int:
    """Review the quiz questions that are due, in the terminal."""
    from chainrule.commands.review_session import run_review
    from chainrule.lessons import LessonDataError
    from chainrule.lessons.validate import add_checked_lesson_dirs

    try:
        add_checked_lesson_dirs(args.lessons)
    except LessonDataError as error:
        _fail(f"cannot add the lessons in --lessons: {error}. `chainrule lessons check DIR` lists every problem.")
        return 2
    store = open_store(args.data_dir, create=False)
    try:
        return run_review(store, sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        print("\nStopped. Every rating you gave is saved.")
        return 130
    finally:
        store.close()


def register(subparsers: argparse._SubParsersAction) -> None:
    progress = subparsers.add_parser(
        "progress",
        help="export, import or inspect your saved progress",
        description="Your progress (predictions, code, submissions, quiz answers, explanations, review "
        "cards) is kept in one SQLite file. Export it to JSON as a backup, or import such a file.",
    )
    progress.set_defaults(func=lambda args: (progress.print_help(), 0)[1])
    actions = progress.add_subparsers(dest="progress_command", metavar="ACTION")

    export = actions.add_parser("export", help="write all your progress to a JSON file")
    export.add_argument("file", metavar="FILE.json", help="where to write ('-' for standard output)")
    export.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    export.set_defaults(func=_guarded(export_command))

    load = actions.add_parser(
        "import",
        help="add progress from a JSON file made by `progress export`",
        description="The whole file is checked first; if anything is wrong, nothing is imported.",
    )
    load.add_argument("file", metavar="FILE.json", help="the file to import ('-' for standard input)")
    load.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    load.set_defaults(func=_guarded(import_command))

    info = actions.add_parser("info", help="show where your progress is kept and what it holds")
    info.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    info.set_defaults(func=_guarded(info_command))

    optimize = actions.add_parser(
        "optimize", help="fit the review scheduler (FSRS) to your own review logs",
        description="Fits FSRS's 21 parameters to your review logs with chainrule's compiled replay (no PyTorch), "
        "on four question cards in five, and scores them and the defaults on the fifth: the fitted ones schedule "
        "your reviews from then on only if they predict those held-out reviews better.")
    optimize.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    optimize.add_argument("--steps", type=whole_number(1, "--steps"), default=250,
                          help="Adam steps of the fit (default: 250)")
    optimize.set_defaults(func=_guarded(optimize_command))

    review = subparsers.add_parser(
        "review",
        help="answer the quiz questions that are due again (spaced repetition)",
        description="Asks each due question; type the answer, 'u' to undo your last rating, 'q' to quit.",
    )
    review.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
    review.add_argument(
        "--lessons", action="append", default=[], metavar="DIR",
        help="also review the questions of the lessons in DIR (as `chainrule lesson --lessons DIR`)")
    review.set_defaults(func=_guarded(review_command))
