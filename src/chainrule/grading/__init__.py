"""Graded coding exercises: exercise folders, a layered sandbox, and grade().

    from chainrule.grading import register_exercise_folder, grade, reference_source
    exercise = register_exercise_folder(Path("my-lesson/exercises/1-gradients"))
    result = grade(exercise, "python", reference_source(exercise, "python"))

Grading knows exercise folders only (see exercise_folder.py); chainrule.lessons.register_exercises()
registers the lessons' folders, so that `grade(exercise_id, ...)` finds them. `grade` returns a result dict in
Exercism's test-runner interface v3 with chainrule's extras (verdict, isolation, expected/actual);
see docs/grading.md.
"""

from chainrule.grading.exercise_folder import (
    LANGUAGES,
    Exercise,
    ExerciseFolderError,
    GradingCase,
    load_exercise_folder,
)
from chainrule.grading.grader import (
    HIDDEN_SEEDS,
    NOT_A_VERDICT,
    SERVER_BUSY,
    GradingError,
    busy_result,
    configure_concurrency,
    default_limits,
    gate,
    grade,
    grade_now,
    judged_the_code,
    prepare_typescript,
    run_result,
)
from chainrule.grading.registry import (
    EXERCISES,
    detect_exercise,
    exercise_cases,
    get_exercise,
    list_exercises,
    normalize_language,
    reference_source,
    register_exercise_folder,
    starter_source,
)
from chainrule.grading.sandbox import Limits, isolation_report

__all__ = [
    "EXERCISES", "HIDDEN_SEEDS", "NOT_A_VERDICT", "SERVER_BUSY", "Exercise", "ExerciseFolderError", "GradingCase", "LANGUAGES", "GradingError", "Limits",
    "busy_result", "configure_concurrency", "default_limits", "detect_exercise", "exercise_cases", "gate", "get_exercise", "grade", "grade_now",
    "isolation_report", "judged_the_code", "list_exercises", "load_exercise_folder", "normalize_language", "prepare_typescript",
    "reference_source", "register_exercise_folder", "run_result", "starter_source",
]
