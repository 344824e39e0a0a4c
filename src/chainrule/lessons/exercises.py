"""The lessons' exercise folders, registered with the grader: the built-in lessons' when whoever serves
lessons or grades calls loader.register_exercises(), an added lesson's when it is added
(loader.add_lesson_dirs).

Grading knows exercise folders only; which folders exist is the lessons' business. A lesson.json
lists its exercises as {"folder": "exercises/NAME"}, in the order the page shows them.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from chainrule.grading import Exercise, ExerciseFolderError, register_exercise_folder
from chainrule.lessons.text import LessonDataError, inside_lesson

__all__ = ["carried_source", "continued_exercise", "exercise_catalog", "exercise_folders", "export_footer",
           "register_builtin_exercises", "register_lesson_exercises"]


def exercise_folders(folder: Path, meta: dict[str, Any]) -> list[Path]:
    """The exercise folders a lesson.json lists, in its order (each inside the lesson's folder)."""
    return [inside_lesson(folder, entry["folder"]) for entry in meta.get("exercises", [])
            if isinstance(entry, dict) and isinstance(entry.get("folder"), str)]


def register_lesson_exercises(folder: Path, meta: dict[str, Any], *, replaces: Path | None = None,
                              builtin: bool = False) -> list[Exercise]:
    """Register every exercise folder of the lesson in `folder`; LessonDataError names the file at fault.
    replaces: the folder of the lesson this one takes the place of, whose exercises' ids it may take.
    builtin: a lesson shipped with the package, whose exercises' cases are checked on their first use (the
    suite and `chainrule lessons check` check them all); an author's are checked in full as they load."""
    registered = []
    for exercise_folder in exercise_folders(folder, meta):
        try:
            registered.append(register_exercise_folder(exercise_folder, replaces=replaces, checked=not builtin))
        except ExerciseFolderError as error:
            raise LessonDataError(str(error)) from None
    return registered


@functools.cache
def register_builtin_exercises(data_dir: Path) -> None:
    """Register the exercises of the built-in lessons, in path order (once per folder of lessons)."""
    path = json.loads((data_dir / "path.json").read_text(encoding="utf-8"))
    for entry in path["lessons"]:
        lesson = data_dir / entry["id"]
        if entry["status"] == "available" and (lesson / "lesson.json").is_file():
            register_lesson_exercises(lesson, json.loads((lesson / "lesson.json").read_text(encoding="utf-8")),
                                      builtin=True)


def exercise_catalog() -> dict[str, dict[str, Any]]:
    """{exercise id: {"id", "title", "summary", "languages"}} of every registered exercise."""
    from chainrule.grading import list_exercises

    return {entry["id"]: entry for entry in list_exercises()}


def _manifest(exercise_id: str) -> dict[str, Any]:
    from chainrule.grading import get_exercise

    data = json.loads((get_exercise(exercise_id).folder / "exercise.json").read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def continued_exercise(exercise_id: str) -> str | None:
    """The exercise whose passing code this one starts from ("continues" in its exercise.json), or None: a
    project in steps (the capstone), each step's starter the learner's own code of the step before."""
    previous = _manifest(exercise_id).get("continues")
    return previous if isinstance(previous, str) else None


def carried_source(source: str, from_exercise: str, to_exercise: str) -> str:
    """A learner's passing code of one step as the next step's starter: its marker names the next step."""
    return source.replace(f"chainrule exercise: {from_exercise}", f"chainrule exercise: {to_exercise}", 1)


def export_footer(exercise_id: str, language: str) -> str | None:
    """What makes the exercise's code a file that runs on its own (export.<ext> in its folder: data and a run
    of the learner's classes), or None when the exercise offers no download."""
    from chainrule.grading import LANGUAGES, get_exercise

    footer = get_exercise(exercise_id).folder / f"export.{LANGUAGES[language]}"
    return footer.read_text(encoding="utf-8") if footer.is_file() else None
