"""Mistaken copies of a reference solution, run in this process on the exercise's own cases and diagnosed as
the grader diagnoses a sandboxed run (tests/test_lessons_six.py, tests/test_lesson_gradient.py,
tests/test_lesson_softmax.py), and the checks those lesson tests share."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

from chainrule.grading import get_exercise, reference_source
from chainrule.grading.diagnoses import diagnose_run
from chainrule.grading.rounding import all_same_graded
from chainrule.lessons.text import PLACEHOLDER


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


def assert_mistake_named(exercise_id: str, replacements: list[tuple[str, str]], says: str) -> None:
    """A mistaken copy's failing tests name the mistake (at least half of them), and so does the run's summary."""
    hints, summary = run_in_process(exercise_id, mistaken(exercise_id, *replacements))
    named = [hint for hint in hints if hint and says in hint]
    assert len(named) >= max(1, (len(hints) + 1) // 2), (hints, summary)
    assert summary is None or says in summary, summary


ODD_OUTPUTS = [[], [math.nan], [1e308] * 40, [-0.0, 0.0], [math.inf, -math.inf, 1.0, 2.0]]


def assert_odd_output_is_diagnosed(exercise_ids: list[str]) -> None:
    """Lists of the wrong length, NaN, huge numbers and infinities get a hint for every test, and nothing crashes."""
    for exercise_id in exercise_ids:
        exercise = get_exercise(exercise_id)
        cases = list(exercise.cases)
        for raw in ODD_OUTPUTS:
            assert len(diagnose_run(exercise, cases, [raw] * len(cases), [True] * len(cases)).hints) == len(cases)


def typed_numbers(path: Path) -> set[str]:
    """The numbers a lesson's prose file types itself, outside placeholders, math, code and list numbers."""
    text = PLACEHOLDER.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"\$\$.+?\$\$|\$[^$\n]+?\$|`[^`\n]+`|^\d+\. ", "", text, flags=re.DOTALL | re.MULTILINE)
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text))
