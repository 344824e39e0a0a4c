"""Help for a stuck learner: an exercise's hints, one at a time, and when its model solution opens.

Hints live in each exercise folder's exercise.json, in its `hints` list (markdown, with the lesson's
placeholders; none may state an answer). The model solution opens after
`solution_after_failed_runs` graded runs that did not pass (default 3), or at once when the learner
asks for it and confirms. The solution itself is the folder's reference file.
"""

from __future__ import annotations

from typing import Any

from chainrule.lessons.loader import (
    SOLUTION_AFTER_DEFAULT,
    UnknownItemError,
    check_lesson_id,
    lesson_resolver,
    loaded_lesson,
)
from chainrule.lessons.text import fill, render_markdown
from chainrule.number_text import count_text

__all__ = ["exercise_hint", "hint_count", "solution_after", "solution_unlocked"]


def _exercise(lesson_id: str, exercise_id: str) -> dict[str, Any]:
    check_lesson_id(lesson_id)
    exercises = {exercise["id"]: exercise for exercise in loaded_lesson(lesson_id)["exercises"]}
    if exercise_id not in exercises:
        raise UnknownItemError(
            f"lesson {lesson_id!r} has no exercise {exercise_id!r}: its exercises are {', '.join(exercises)}"
        )
    return exercises[exercise_id]


def hint_count(lesson_id: str, exercise_id: str) -> int:
    return len(_exercise(lesson_id, exercise_id).get("hints", []))


def exercise_hint(lesson_id: str, exercise_id: str, number: int) -> dict[str, Any]:
    """Hint `number` (1-based) as {"number", "count", "html"}; UnknownItemError names the hints there are."""
    hints = _exercise(lesson_id, exercise_id).get("hints", [])
    if not 1 <= number <= len(hints):
        raise UnknownItemError(
            f"exercise {exercise_id!r} has {count_text(len(hints), 'hint')}"
            + (f": ask for 1 to {len(hints)}" if hints else "")
        )
    text = fill(hints[number - 1], lesson_resolver(lesson_id), f"exercise {exercise_id} hint {number}")
    return {"number": number, "count": len(hints), "html": render_markdown(text)}


def solution_after(lesson_id: str) -> int:
    """How many runs that did not pass open an exercise's model solution."""
    check_lesson_id(lesson_id)
    return int(loaded_lesson(lesson_id).get("solution_after_failed_runs", SOLUTION_AFTER_DEFAULT))


def solution_unlocked(lesson_id: str, failed_runs: int, confirmed: bool) -> bool:
    return confirmed or failed_runs >= solution_after(lesson_id)
