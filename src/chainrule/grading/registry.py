"""The exercises that can be graded by id: exercise folders, registered by whoever knows them.

Grading knows exercise folders, not lessons: chainrule.lessons registers its lessons' folders (the
built-in ones when whoever serves lessons or grades calls `chainrule.lessons.register_exercises()`,
added ones with `chainrule lesson --lessons DIR`). A program that grades without lessons registers
folders itself with `register_exercise_folder`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from chainrule.grading.exercise_folder import (
    LANGUAGES,
    Exercise,
    ExerciseFolderError,
    GradingCase,
    load_exercise_folder,
)

__all__ = [
    "EXERCISES", "LANGUAGES", "detect_exercise", "exercise_cases", "get_exercise", "list_exercises", "normalize_language",
    "reference_source", "register_exercise_folder", "resolve", "starter_source",
]

EXERCISES: dict[str, Exercise] = {}
EXTENSION_LANGUAGE: dict[str, str] = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".ts": "typescript",
    ".mts": "typescript", ".cts": "typescript",
}
LANGUAGE_ALIASES: dict[str, str] = {
    "python": "python", "py": "python", "javascript": "javascript", "js": "javascript",
    "typescript": "typescript", "ts": "typescript",
}


def register_exercise_folder(folder: Path, *, replaces: Path | None = None, checked: bool = True) -> Exercise:
    """Load an exercise folder and make its exercise gradable by id; ExerciseFolderError if it is invalid
    (checked=False: its cases are checked on their first use instead, see load_exercise_folder).

    Registering the same folder again is harmless (it is read again); another folder with an id
    already taken is refused, unless the taken one lies inside ``replaces`` (a copy of the folders
    that takes their place).
    """
    exercise = load_exercise_folder(Path(folder), checked=checked)
    known = EXERCISES.get(exercise.id)
    inside_replaced = (known is not None and replaces is not None
                       and known.folder.resolve().is_relative_to(Path(replaces).resolve()))
    if known is not None and known.folder.resolve() != exercise.folder.resolve() and not inside_replaced:
        raise ExerciseFolderError(
            f"{Path(folder) / 'exercise.json'}: the exercise id {exercise.id!r} is already taken by {known.folder}")
    EXERCISES[exercise.id] = exercise
    return exercise


def get_exercise(exercise_id: str) -> Exercise:
    try:
        return EXERCISES[exercise_id]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown exercise {exercise_id!r}; the exercises are: {', '.join(EXERCISES) or 'none registered'}"
        ) from None


def resolve(exercise: str | Exercise) -> Exercise:
    """An Exercise as it is, or the registered one of that id."""
    return exercise if isinstance(exercise, Exercise) else get_exercise(exercise)


def normalize_language(language: str) -> str:
    """'python' | 'javascript' | 'typescript' (short forms py, js, ts accepted) or ValueError."""
    try:
        return LANGUAGE_ALIASES[str(language).strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown language {language!r}; the languages are: python (py), javascript (js), typescript (ts)"
        ) from None


def list_exercises() -> list[dict[str, Any]]:
    """[{"id", "title", "summary", "languages"}] in the order they were registered."""
    return [
        {"id": e.id, "title": e.title, "summary": e.summary, "languages": list(e.languages)}
        for e in EXERCISES.values()
    ]


def starter_source(exercise: str | Exercise, language: str) -> str:
    """The file a learner starts from."""
    return resolve(exercise).source("starter", normalize_language(language))


def reference_source(exercise: str | Exercise, language: str) -> str:
    """Our reference solution (for tests and for showing after failed runs)."""
    return resolve(exercise).source("solution", normalize_language(language))


def exercise_cases(exercise: str | Exercise) -> list[GradingCase]:
    """The exercise's test cases in file order, expected numbers as the engine computed them."""
    return list(resolve(exercise).cases)


_MARKER = re.compile(r"chainrule exercise:\s*([a-z][a-z0-9-]*)")


def detect_exercise(source: str) -> str | None:
    """The exercise a file belongs to: its marker comment, else the first registered exercise whose
    function it names (two exercises that share a function need the marker to be told apart)."""
    match = _MARKER.search(source[:2000])
    if match and match.group(1) in EXERCISES:
        return match.group(1)
    for exercise in EXERCISES.values():
        if re.search(rf"\b({exercise.python_function}|{exercise.js_function})\b", source):
            return exercise.id
    return None
