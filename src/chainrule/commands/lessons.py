"""`chainrule lessons`: the path and its lessons; write a new lesson folder; check one.

    chainrule lessons [--lessons DIR] [--data-dir DIR]     the path, each lesson with your progress
    chainrule lessons new ID --title "TITLE" DIR           write a complete lesson folder DIR/ID
    chainrule lessons check DIR                            check the lesson folder(s) in DIR
    chainrule lessons copy DIR                             copy the built-in lessons into DIR, to edit (a class's own)

`check` prints every problem as FILE:LINE: what is wrong (FILE relative to the current directory when it
is inside it, else absolute), then one summary line per lesson, all on standard output; it exits 0 when
every lesson in DIR is clean and 1 when any problem is found. A usage error (2) is said on standard error.
docs/authoring.md describes the format.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from chainrule.number_text import count_text
from chainrule.text_safety import terminal_text  # lesson folders are written by anyone: shown, not obeyed

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lessons", help="list the lessons on the path; write or check a lesson folder",
        description="Without a subcommand: list the lessons of the path and your progress in each.",
    )
    _add_path_options(parser)
    parser.set_defaults(func=run_list)
    actions = parser.add_subparsers(dest="lessons_command", metavar="ACTION")

    new = actions.add_parser("new", help="write a complete, valid lesson folder to start from",
                             description="Write DIR/ID: a lesson folder with every section, a graph, predictions, "
                             "a quiz and an exercise in Python, JavaScript and TypeScript, ready to edit.")
    new.add_argument("id", help="the lesson's id: lower-case letters, digits and dashes (also the folder's name)")
    new.add_argument("--title", required=True, help="the lesson's title")
    new.add_argument("dir", type=Path, help="the folder to write the lesson folder into")
    new.set_defaults(func=run_new)

    check = actions.add_parser("check", help="check a lesson folder (or a folder of them) from top to bottom",
                               description="Check the schema, every placeholder, every quiz key and prediction "
                               "against the engine, and grade every exercise's solution (must pass) and "
                               "starter (must fail) in the sandbox.")
    check.add_argument("dir", type=Path, help="a lesson folder, or a folder holding lesson folders")
    check.add_argument("--no-grading", action="store_true", help="skip grading the exercises (faster)")
    check.set_defaults(func=run_check)

    copy = actions.add_parser("copy", help="copy the built-in lessons into a folder, to edit (a class's own lessons)",
                              description="Write DIR/ID for every built-in lesson: the same folders `chainrule "
                              "lessons new` writes, ready to edit. `chainrule serve --lessons DIR` and `chainrule "
                              "worker --lessons DIR` then use them in place of the built-in ones.")
    copy.add_argument("dir", type=Path, help="the folder to copy the lessons into (made if missing)")
    copy.add_argument("--lesson", action="append", default=[], metavar="ID",
                      help="copy only this lesson (repeatable; default: every built-in lesson)")
    copy.set_defaults(func=run_copy)


def _add_path_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lessons", action="append", default=[], type=Path, metavar="DIR",
                        help="also list the lessons found in DIR, after the built-in ones (repeatable)")
    parser.add_argument("--data-dir", default=None,
                        help="directory of the progress store (default: $CHAINRULE_DATA_DIR, else your user data directory)")


def _progress_text(state: dict) -> str:
    """A lesson's progress_state (progress.finished.lesson_state) in words, as the path page says it."""
    done, totals, parts = state["done"], state["totals"], []
    if done["predictions"]:
        parts.append(f"{done['predictions']} of {totals['predictions']} predictions made")
    if done["exercises"]:
        parts.append(f"{done['exercises']} of {totals['exercises']} exercises passed")
    if done["quiz"]:
        parts.append(f"{done['quiz']} of {totals['quiz']} questions answered")
    if done["explanation"]:
        parts.append("explained back")
    words = ", ".join(parts) or ("started" if state["started"] else "not started")
    return f"finished ({words})" if state["lesson"] else words


def run_list(args: argparse.Namespace) -> int:
    from chainrule import lessons
    from chainrule.lessons.validate import add_checked_lesson_dirs
    from chainrule.progress import StoreError, open_store
    from chainrule.progress.finished import lesson_state

    try:
        add_checked_lesson_dirs(args.lessons)
    except lessons.LessonDataError as error:
        print(terminal_text(f"chainrule lessons: {error}"), file=sys.stderr)
        return EXIT_USAGE
    data_dir = args.data_dir or os.environ.get("CHAINRULE_DATA_DIR") or None
    store, note = None, None
    try:
        store = open_store(data_dir, create=False)  # listing never creates a store
    except StoreError as error:
        note = "no progress saved yet" if getattr(error, "kind", "") == "not-found" else f"progress unavailable: {error}"
    path = lessons.get_path()
    print(terminal_text(path["title"]))
    try:
        for number, entry in enumerate(path["lessons"], start=1):
            if not entry["written"]:
                state = "not written yet"
            elif store is None:
                state = "not started" if note == "no progress saved yet" else (note or "not started")
            else:
                state = _progress_text(lesson_state(lessons.lesson_shape(entry["id"]), store.work()))
            added = " (from --lessons)" if entry["id"] in lessons.added_lesson_ids() else ""
            print(terminal_text(f"{number:>3}. {entry['title']}{added}"))
            print(terminal_text(f"     id {entry['id']}, about {count_text(entry['minutes'], 'minute')}: {state}"))
    finally:
        if store is not None:
            store.close()
    return EXIT_OK


def run_new(args: argparse.Namespace) -> int:
    from chainrule.lessons.scaffold import ScaffoldError, write_lesson

    try:
        folder = write_lesson(args.id, args.title, args.dir)
    except ScaffoldError as error:
        print(f"chainrule lessons new: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {folder}")
    print(f"check it with:  chainrule lessons check {folder}")
    print(f"take it with:   chainrule lesson --lessons {args.dir}")
    return EXIT_OK


def run_check(args: argparse.Namespace) -> int:
    from chainrule.lessons import LessonDataError
    from chainrule.lessons.loader import find_lesson_folders
    from chainrule.lessons.validate import check_lesson_folder

    try:
        folders = find_lesson_folders(args.dir)
    except LessonDataError as error:
        print(terminal_text(f"chainrule lessons check: {error}"), file=sys.stderr)
        return EXIT_USAGE
    total = 0
    for folder in folders:
        problems = check_lesson_folder(folder, grade=not args.no_grading)
        total += len(problems)
        for problem in problems:  # a problem may quote the lesson's text or what its solution printed
            print(terminal_text(problem))
        verdict = "ok" if not problems else count_text(len(problems), "problem")
        print(terminal_text(f"lesson {folder.name}: {verdict}"))  # on the problems' stream, after them
    return EXIT_PROBLEMS if total else EXIT_OK


def run_copy(args: argparse.Namespace) -> int:
    import shutil

    from chainrule.lessons.loader import DATA_DIR, builtin_lesson_ids

    known = builtin_lesson_ids()
    unknown = [lesson_id for lesson_id in args.lesson if lesson_id not in known]
    if unknown:
        print(terminal_text(f"chainrule lessons copy: no built-in lesson {unknown[0]!r}; the built-in lessons are "
                            f"{', '.join(known)}"), file=sys.stderr)
        return EXIT_USAGE
    chosen = args.lesson or known
    there = [lesson_id for lesson_id in chosen if (args.dir / lesson_id).exists()]
    if there:
        print(terminal_text(f"chainrule lessons copy: {args.dir / there[0]} exists already; nothing was copied. "
                            "Copy into another folder, or move that one away first."), file=sys.stderr)
        return EXIT_USAGE
    try:
        for lesson_id in chosen:
            shutil.copytree(DATA_DIR / lesson_id, args.dir / lesson_id,
                            ignore=shutil.ignore_patterns("__pycache__", ".*"))
    except OSError as error:
        print(terminal_text(f"chainrule lessons copy: cannot write into {args.dir}: {error.strerror or error}"),
              file=sys.stderr)
        return EXIT_USAGE
    print(terminal_text(f"copied {count_text(len(chosen), 'lesson')} into {args.dir}"))
    print(terminal_text(f"serve a class with them:  chainrule serve --lessons {args.dir}"))
    return EXIT_OK
