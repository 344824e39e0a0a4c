"""Graded coding exercises: exercises as data, a layered sandbox, and grade().

    from chainrule.grading import grade, list_exercises, starter_source, reference_source, isolation_report, GradingError

`grade(exercise_id, language, source)` returns a result dict in Exercism's test-runner interface v3
with chainrule's extras (verdict, isolation, expected/actual); see docs/grading.md.
"""

from chainrule.grading.exercises import (
    EXERCISES,
    LANGUAGES,
    detect_exercise,
    list_exercises,
    reference_source,
    starter_source,
    exercise_cases,
)
from chainrule.grading.grader import (GradingError, busy_result, concurrency, configure_concurrency, default_limits, grade,
                                      prepare_typescript)
from chainrule.grading.sandbox import Limits, isolation_report

__all__ = [
    "EXERCISES", "LANGUAGES", "GradingError", "Limits", "busy_result", "concurrency", "configure_concurrency", "default_limits", "detect_exercise", "grade",
    "isolation_report", "list_exercises", "prepare_typescript", "reference_source", "starter_source", "exercise_cases",
]
