"""The lesson "Many inputs and the gradient", between "Slopes" and "Computational graphs": partial derivatives
by nudging one input at a time, the gradient on a contour plot, and the chain rule as a sum over paths.

Every number a learner sees is checked against an independent source: PyTorch in float64, plain float
arithmetic and partial derivatives worked out by hand here. Every exercise is graded in the real sandbox in
all three languages (once per session, through grade_once); the diagnoses are tried on the mistakes learners
make, run in this process on the exercises' own cases."""

from __future__ import annotations

import json
import math

import pytest

from chainrule.grading import exercise_cases
from chainrule.lessons import check_prediction, check_quiz_answer, get_lesson, lesson_data, lesson_numbers
from chainrule.lessons.loader import DATA_DIR
from chainrule.lessons.plots import lesson_plot
from chainrule.lessons.text import LessonDataError
from exercise_mistakes import (
    assert_mistake_named,
    assert_odd_output_is_diagnosed,
    graded_reference_and_starter,
    typed_numbers,
)
from reference_torch import needs_torch, torch

pytestmark = pytest.mark.timeout(600)

GRADIENT = "many-inputs-and-the-gradient"
EXERCISES = ["gradient-by-nudging", "gradient-by-rule", "sum-over-paths"]
LANGUAGES = ("python", "javascript", "typescript")
F64 = None if torch is None else torch.float64


def close(got, want, rel=1e-9, abs_=1e-12):
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=rel, abs_tol=abs_) for g, w in zip(got, want))


def test_the_lesson_does_everything_a_lesson_does():
    lesson = get_lesson(GRADIENT)
    assert [s["slug"] for s in lesson["sections"]] == [
        "why", "key-parts", "see-it-work", "predict", "try-it", "check-yourself", "explain", "recap"]
    assert lesson["see_it_work"]["plot"]["kind"] == "contour" and lesson["solution_after"] == 3
    steps = lesson["predict"]["steps"]
    order = [(s["before_step"]["phase"] != "forward", s["before_step"]["index"]) for s in steps]
    assert len(steps) == 5 and order == sorted(order) and len(set(order)) == len(order)
    assert [e["id"] for e in lesson["exercises"]] == EXERCISES
    assert all(e["languages"] == list(LANGUAGES) and e["hint_count"] >= 3 for e in lesson["exercises"])
    quiz = lesson_data(GRADIENT)["quiz"]
    assert len(quiz) == 5 and {q["kind"] for q in quiz} == {"number", "choice"}
    assert all("fresh" in q for q in quiz if q["kind"] == "number")
    assert len(lesson["explain"]["key_ideas"]) == 5 and len(lesson["recap"]["points"]) >= 4


def test_the_prose_types_no_numbers_of_its_own():
    files = sorted((DATA_DIR / GRADIENT).glob("sections/*.md")) + sorted((DATA_DIR / GRADIENT).glob("exercises/*/exercise.md"))
    assert len(files) == 8 + len(EXERCISES)
    for path in files:
        assert typed_numbers(path) <= {"0", "1", "2"}, path.name


@needs_torch
def test_graphs_and_predictions_match_torch():
    numbers = lesson_numbers(GRADIENT)
    x = torch.tensor(1.0, dtype=F64, requires_grad=True)
    y = torch.tensor(1.0, dtype=F64, requires_grad=True)
    f = x * x + 3 * y * y
    f.backward()
    assert numbers["bowl"]["f"]["data"] == f.item() == 4
    assert [numbers["bowl"]["x"]["grad"], numbers["bowl"]["y"]["grad"]] == [x.grad.item(), y.grad.item()] == [2, 6]
    x = torch.tensor(2.0, dtype=F64, requires_grad=True)
    y = torch.tensor(3.0, dtype=F64, requires_grad=True)
    u, v = x * y, x + y
    for t in (u, v):
        t.retain_grad()
    z = u * v
    z.backward()
    torch_numbers = {"u": u.item(), "v": v.item(), "z": z.item(), "du": u.grad.item(), "dv": v.grad.item(),
                     "dx": x.grad.item(), "dy": y.grad.item()}
    # By hand: the two paths into x are dz/du × y + dz/dv × 1 = 5 × 3 + 6, into y 5 × 2 + 6.
    assert torch_numbers == {"u": 6, "v": 5, "z": 30, "du": 5, "dv": 6, "dx": 5 * 3 + 6, "dy": 5 * 2 + 6}
    assert (numbers["paths"]["v"]["grad"], numbers["paths"]["y"]["grad"]) == (torch_numbers["dv"], torch_numbers["dy"])
    for key in ("u", "v", "z", "du", "dx"):
        want = torch_numbers[key]
        assert check_prediction(GRADIENT, key, want)["correct"], key
        assert not check_prediction(GRADIENT, key, want + 0.05)["correct"], key
    one_path = check_prediction(GRADIENT, "dx", 15)  # dz/du × y alone
    assert not one_path["correct"] and "the path through u alone" in one_path["hint"]


@needs_torch
def test_the_contour_plot_is_the_engines_function_and_gradient_everywhere_it_draws():
    plot = get_lesson(GRADIENT)["see_it_work"]["plot"]
    assert plot["cells"] == 24 and len(plot["grid"]) == 25 and all(len(row) == 25 for row in plot["grid"])
    assert plot["stops"] == 9 and len(plot["lattice"]) == 81 and plot["step"] == 0.5
    for j, row in enumerate(plot["grid"]):  # by hand: x^2 + 3y^2 on the square [-2, 2]^2
        for i, value in enumerate(row):
            x, y = -2 + 4 * i / 24, -2 + 4 * j / 24
            assert math.isclose(value, x * x + 3 * y * y, rel_tol=1e-12, abs_tol=1e-12)
    assert plot["low"] == 0 and plot["high"] == 16
    assert [level["value"] for level in plot["levels"]] == [16 * (k + 0.5) / 8 for k in range(8)]
    for stop in plot["lattice"]:
        x = torch.tensor(stop["x"], dtype=F64, requires_grad=True)
        y = torch.tensor(stop["y"], dtype=F64, requires_grad=True)
        f = x * x + 3 * y * y
        f.backward()
        assert close([stop["value"], stop["dx"], stop["dy"]], [f.item(), x.grad.item(), y.grad.item()])
        assert math.isclose(stop["size"], math.hypot(x.grad.item(), y.grad.item()), rel_tol=1e-12)
    start = plot["lattice"][plot["start"]]
    assert (start["x"], start["y"], start["dx"], start["dy"]) == (1, 1, 2, 6)
    named = {point["name"]: point for point in plot["points"]}
    assert named["bottom"]["size"] == 0 and (named["side"]["dx"], named["side"]["dy"]) == (-3, 0)


def _bad(**change):
    spec = {"kind": "contour", "expression": "x*x + y*y", "inputs": ["x", "y"], "span": 1, "cells": 8, "stops": 5,
            "levels": 4, "points": [{"name": "start", "x": 0.5, "y": 0}]}
    return spec | change


BAD_CONTOURS = [
    (_bad(expression="x*x"), "names ['x'] must be the inputs ['x', 'y']"),
    (_bad(inputs=["x"]), "inputs must name the two inputs"),
    (_bad(cells=10 ** 6), "cells must be a whole number from 4 to 40"),
    (_bad(stops=True), "stops must be a whole number from 3 to 11"),
    (_bad(span=-1), "span must be above 0"),
    (_bad(expression="log(x) + y"), "not finite everywhere on the square"),
    (_bad(expression="0*x + 0*y"), "flat on the square"),
    (_bad(points=[{"name": "start", "x": 0.3, "y": 0}]), "must lie on the lattice"),
    (_bad(points=[]), "points must be a list of 1 to 6"),
]


@pytest.mark.parametrize("spec,says", BAD_CONTOURS, ids=[says for _, says in BAD_CONTOURS])
def test_a_contour_plot_it_cannot_compute_is_refused_saying_why(spec, says):
    with pytest.raises(LessonDataError) as refused:
        lesson_plot(spec)
    assert says in str(refused.value)


def test_lessons_check_refuses_a_contour_plot_in_a_lesson_folder(tmp_path):
    from chainrule.lessons.scaffold import write_lesson
    from chainrule.lessons.validate import check_lesson_folder

    folder = write_lesson("contoured", "Contoured", tmp_path)
    meta = json.loads((folder / "lesson.json").read_text())
    meta["see_it_work"]["plot"] = _bad(cells=3)
    (folder / "lesson.json").write_text(json.dumps(meta, indent=2))
    [problem] = check_lesson_folder(folder, grade=False)
    assert "cells must be a whole number from 4 to 40" in problem and "lesson.json:" in problem


@needs_torch
def test_exercise_cases_match_plain_arithmetic_and_torch():
    functions = {"bowl": lambda x, y: x * x + 3 * y * y, "saddle": lambda x, y: x * x - y * y,
                 "ridge": lambda x, y: math.tanh(x * y) + x}
    for case in exercise_cases("gradient-by-nudging"):
        name, (x, y), h = case.args
        f = functions[name]
        assert case.expected == [(f(x + h, y) - f(x, y)) / h, (f(x, y + h) - f(x, y)) / h]

    def torch_gradient(f, x: float, y: float) -> list[float]:
        tx = torch.tensor(x, dtype=F64, requires_grad=True)
        ty = torch.tensor(y, dtype=F64, requires_grad=True)
        f(tx, ty).backward()
        return [tx.grad.item(), ty.grad.item()]

    for case in exercise_cases("gradient-by-rule"):
        x, y = case.args
        want = [g for f in (lambda a, b: a ** 2 * b + 3 * b, lambda a, b: a * b ** 3 - 2 * a, lambda a, b: (a + 2 * b) ** 2)
                for g in torch_gradient(f, x, y)]
        assert close(case.expected, want)
        assert close(case.expected, [2 * x * y, x * x + 3, y ** 3 - 2, 3 * x * y * y, 2 * (x + 2 * y), 4 * (x + 2 * y)])

    graphs = {"product": (lambda t: t * t, lambda t: 3 * t + 1, lambda u, v: u * v),
              "wave": (torch.tanh, lambda t: t * t, lambda u, v: u * v + u)}
    for case in exercise_cases("sum-over-paths"):
        name, t = case.args
        u_of, v_of, z_of = graphs[name]
        leaf = torch.tensor(t, dtype=F64, requires_grad=True)
        z = z_of(u_of(leaf), v_of(leaf))
        z.backward()
        assert close([case.expected[0], case.expected[3]], [z.item(), leaf.grad.item()])
        assert math.isclose(case.expected[1] + case.expected[2], case.expected[3], rel_tol=1e-12)
    product = exercise_cases("sum-over-paths")[0]  # t = 2 by hand: u = 4, v = 7, paths 7 × 4 and 4 × 3
    assert product.expected == [28, 28, 12, 40]


QUIZ_KEYS = {  # each key worked out by hand from the question's given numbers
    "partial-in-x": 2 * 2 * 3 * -1, "partial-in-y": 2 * 2 * 1, "two-paths": (2 + 1) * 1 + 2 * 1,
}


def test_quiz_keys_are_right_explained_and_a_one_path_answer_gets_its_hint():
    for question in lesson_data(GRADIENT)["quiz"]:
        qid = question["id"]
        if question["kind"] == "number":
            assert question["answer"] == QUIZ_KEYS[qid]
            result = check_quiz_answer(GRADIENT, qid, repr(QUIZ_KEYS[qid]))
            assert not check_quiz_answer(GRADIENT, qid, repr(QUIZ_KEYS[qid] + 0.05))["correct"]
        else:
            result = check_quiz_answer(GRADIENT, qid, str(question["answer_index"] + 1))
            assert not check_quiz_answer(GRADIENT, qid, str(question["answer_index"] % len(question["options"]) + 2))["correct"]
        assert result["correct"] and result["reason"] and "{{" not in result["reason"], qid
    one_path = check_quiz_answer(GRADIENT, "two-paths", "3")  # (x + y) × y alone
    assert not one_path["correct"] and "the path through u alone" in one_path["hint"]


ALL = [(exercise, language) for exercise in EXERCISES for language in LANGUAGES]
STARTER_SAYS = {  # what the first test of each starter's failing run says, in every language
    "gradient-by-nudging": "Both estimates are 0",
    "gradient-by-rule": "Still 0: d/dx of x y^3 - 2x",
    "sum-over-paths": "Still 0: the path through v, dz/dt.",
}


@pytest.mark.parametrize("exercise_id,language", ALL, ids=[f"{e}-{lang}" for e, lang in ALL])
def test_reference_passes_and_starter_fails(exercise_id, language, grade_once):
    passed, failed = graded_reference_and_starter(grade_once, exercise_id, language, hidden_at_least=5)
    assert len(exercise_cases(exercise_id)) == passed["hidden"]["count"] == 5
    assert failed["verdict"] == "failed", failed["message"]
    assert all(t["status"] == "fail" for t in failed["tests"] if not t.get("hidden"))
    assert STARTER_SAYS[exercise_id] in failed["tests"][0]["hint"], failed["tests"][0]


def test_the_lesson_passes_lessons_check(grade_once):
    from chainrule.lessons.validate import check_lesson_folder

    assert check_lesson_folder(DATA_DIR / GRADIENT, grade_with=grade_once) == []


MISTAKES = [
    ("gradient-by-nudging", "both-nudged", [("f(x, y + h) - f(x, y)", "f(x + h, y + h) - f(x, y)"),
                                            ("f(x + h, y) - f(x, y)", "f(x + h, y + h) - f(x, y)")],
     "Nudge one input at a time"),
    ("gradient-by-nudging", "not-restored", [("f(x, y + h) - f(x, y)", "f(x + h, y + h) - f(x + h, y)")],
     "Put x back before you nudge y"),
    ("gradient-by-nudging", "swapped", [("[along_x, along_y]", "[along_y, along_x]")], "in the wrong order"),
    ("gradient-by-nudging", "no-divide", [(") / h   # y", ")   # y"), (") / h   # x", ")   # x")],
     "divide each change by the nudge h"),
    ("gradient-by-nudging", "sign-flipped", [("f(x + h, y) - f(x, y)", "f(x, y) - f(x + h, y)"),
                                             ("f(x, y + h) - f(x, y)", "f(x, y) - f(x, y + h)")], "wrong sign"),
    ("gradient-by-rule", "other-input-dropped", [("df1_dx = 2 * x * y", "df1_dx = 2 * x")], "not 2x"),
    ("gradient-by-rule", "other-input-zero", [("df1_dy = x * x + 3", "df1_dy = 3")], "not as 0"),
    ("gradient-by-rule", "power-not-lowered", [("3 * x * y * y", "3 * x * y * y * y")], "so the answer is 3x y^2"),
    ("gradient-by-rule", "inner-slope-missing", [("2 * inner * 2", "2 * inner")], "the inner slope too"),
    ("gradient-by-rule", "swapped", [("return [df1_dx, df1_dy, df2_dx, df2_dy, df3_dx, df3_dy]",
                                      "return [df1_dy, df1_dx, df2_dy, df2_dx, df3_dy, df3_dx]")], "wrong order"),
    ("sum-over-paths", "one-path-only", [("through_u + through_v]", "through_u]")], "add the two shares"),
    ("sum-over-paths", "paths-multiplied", [("through_u + through_v]", "through_u * through_v]")], "Paths add"),
    ("sum-over-paths", "local-only", [("through_u = v * (2 * t)", "through_u = v")], "You left out du/dt"),
    ("sum-over-paths", "value-wrong", [("z = u * v + u", "z = u * v")], "z is wrong"),
]


@pytest.mark.parametrize("exercise_id,mistake,replacements,says", MISTAKES, ids=[f"{m[0]}-{m[1]}" for m in MISTAKES])
def test_each_classic_mistake_is_named(exercise_id, mistake, replacements, says):
    assert_mistake_named(exercise_id, replacements, says)


def test_a_learners_odd_output_is_diagnosed_without_a_crash():
    assert_odd_output_is_diagnosed(EXERCISES)
