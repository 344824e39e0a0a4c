"""Mistaken copies of a reference solution, run in this process on the exercise's own cases and diagnosed as
the grader diagnoses a sandboxed run (tests/test_lessons_six.py, tests/test_lesson_gradient.py,
tests/test_lesson_softmax.py), and the checks those lesson tests share."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

from chainrule.grading import exercise_cases, get_exercise, reference_source, starter_source
from chainrule.grading.diagnoses import diagnose_run
from chainrule.grading.rounding import all_same_graded
from chainrule.lessons.text import PLACEHOLDER


def graded_reference_and_starter(grade_once, exercise_id: str, language: str, *, hidden_at_least: int = 1) -> tuple[dict, dict]:
    """(the reference's run, the starter's run), each graded once (conftest's grade_once), after the checks every
    lesson's exercises share: the reference passes every shown case and every hidden one (at least
    ``hidden_at_least``), and the starter carries its exercise's marker and a TODO. What the starter's failing
    run must say is each lesson test's own."""
    passed = grade_once(exercise_id, language, reference_source(exercise_id, language))
    assert passed["verdict"] == "passed", passed["message"]
    assert len([t for t in passed["tests"] if not t.get("hidden")]) == len(exercise_cases(exercise_id))
    assert passed["hidden"]["count"] == sum(1 for t in passed["tests"] if t.get("hidden")) >= hidden_at_least
    starter = starter_source(exercise_id, language)
    assert f"chainrule exercise: {exercise_id}" in starter and "TODO" in starter
    return passed, grade_once(exercise_id, language, starter)


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
