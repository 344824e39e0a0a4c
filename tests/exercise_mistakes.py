"""Mistaken copies of a reference solution, run in this process on the exercise's own cases and diagnosed as
the grader diagnoses a sandboxed run (tests/test_lessons_six.py, tests/test_lesson_gradient.py)."""

from __future__ import annotations

import copy

from chainrule.grading import get_exercise, reference_source
from chainrule.grading.diagnoses import diagnose_run
from chainrule.grading.rounding import all_same_graded


def run_in_process(exercise_id: str, source: str) -> tuple[list[dict], str | None]:
    """A mistaken Python solution run here on the exercise's own cases (our code, not a learner's), diagnosed
    as the grader diagnoses a sandboxed run: each failing test's hint, and the run's summary."""
    exercise = get_exercise(exercise_id)
    namespace: dict = {}
    exec(compile(source, exercise_id, "exec"), namespace)  # noqa: S102 - the test's own mistaken copies
    function = namespace[exercise.function_name("python")]
    cases = list(exercise.cases)
    raws = [list(function(*copy.deepcopy(case.args))) for case in cases]
    failing = [not all_same_graded(raw, case.expected) for raw, case in zip(raws, cases)]
    assert any(failing), "the mistake must fail a test"
    diagnosis = diagnose_run(exercise, cases, raws, failing)
    return [hint for hint, fails in zip(diagnosis.hints, failing) if fails], diagnosis.summary


def mistaken(exercise_id: str, *replacements: tuple[str, str]) -> str:
    source = reference_source(exercise_id, "python")
    for old, new in replacements:
        assert old in source, old
        source = source.replace(old, new)
    return source
