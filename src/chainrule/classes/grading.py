"""The one seam between a submitted run and its result in class mode.

    result = grader.grade(exercise_id, language, source)   # the grading result dict, as chainrule.grading gives

Today the run is graded in this process, in the same sandbox `chainrule lesson` uses. A queue of jobs
(workers on other hosts) plugs in here as another class with the same method, and nothing else changes.
"""

from __future__ import annotations

from typing import Protocol


class Grader(Protocol):
    def grade(self, exercise_id: str, language: str, source: str) -> dict: ...


class InProcessGrader:
    """Grades in the web process, through chainrule.grading (its own pool bounds how many at once)."""

    def grade(self, exercise_id: str, language: str, source: str) -> dict:
        from chainrule.grading import grade

        return grade(exercise_id, language, source)
