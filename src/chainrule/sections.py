"""The eight sections of a lesson: the one vocabulary the lesson folders, "finished", the teacher's grid
and the pages share.

    SECTIONS  ->  (("01", "why", None), ..., ("04", "predict", "predictions"), ...)
    WORK_OF_SECTION["05"]  ->  "exercises"

Each section has its number, its slug (the name of its prose file, sections/05-try-it.md) and, for the
four that ask for work, the part of the learner's work that finishes it: the predictions made, the
exercises passed, the quiz questions answered, the explanation written. Nothing else in the project
spells these numbers or part names out.
"""

from __future__ import annotations

__all__ = ["SECTIONS", "WORK", "WORK_OF_SECTION"]

SECTIONS: tuple[tuple[str, str, str | None], ...] = (
    ("01", "why", None), ("02", "key-parts", None), ("03", "see-it-work", None),
    ("04", "predict", "predictions"), ("05", "try-it", "exercises"), ("06", "check-yourself", "quiz"),
    ("07", "explain", "explanation"), ("08", "recap", None),
)
WORK_OF_SECTION: dict[str, str] = {number: work for number, _, work in SECTIONS if work}
WORK: tuple[str, ...] = tuple(WORK_OF_SECTION.values())  # predictions, exercises, quiz, explanation
