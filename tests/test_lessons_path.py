"""The lessons around backpropagation: "Computational graphs" before it, "Gradient descent: linear
regression" after it. Their numbers are checked against independent sources (plain float arithmetic
written out here, PyTorch, the least-squares line), their exercises graded in the real sandbox."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest

from chainrule.grading import exercise_cases, grade, reference_source, starter_source
from chainrule.lessons import (
    check_prediction,
    check_quiz_answer,
    get_lesson,
    get_path,
    lesson_data,
    lesson_numbers,
    question_ids,
)
from chainrule.lessons.loader import DATA_DIR
from chainrule.lessons.text import PLACEHOLDER
from exercise_mistakes import graded_reference_and_starter
from reference_torch import needs_torch, torch

pytestmark = pytest.mark.timeout(600)

GRAPHS = "computational-graphs"
REGRESSION = "gradient-descent-linear-regression"
NEW_EXERCISES = {GRAPHS: ["forward-values", "forward-any-order"], REGRESSION: ["loss-gradient", "fit-line"]}
LANGUAGES = ("python", "javascript", "typescript")


# ---------------------------------------------------------------- independent references


def plain_forward(nodes, leaves):
    """The forward pass written out with Python floats and math.tanh, in a topological order."""
    values = [float(x) for x in leaves] + [None] * len(nodes)
    while any(v is None for v in values):
        for i, (op, a, b) in enumerate(nodes):
            here = len(leaves) + i
            if values[here] is None and values[a] is not None and (b is None or values[b] is not None):
                values[here] = (math.tanh(values[a]) if op == "tanh" else
                                values[a] + values[b] if op == "add" else values[a] * values[b])
    return values


def plain_fit(xs, ys, lr, steps):
    """The issue's update rule, written out."""
    n = len(xs)
    w = b = 0.0
    for _ in range(steps):
        dw = (2 / n) * sum((w * x + b - y) * x for x, y in zip(xs, ys))
        db = (2 / n) * sum(w * x + b - y for x, y in zip(xs, ys))
        w, b = w - lr * dw, b - lr * db
    return [w, b]


def torch_loss_and_gradient(xs, ys, w, b):
    w_t = torch.tensor(float(w), dtype=torch.float64, requires_grad=True)
    b_t = torch.tensor(float(b), dtype=torch.float64, requires_grad=True)
    x, y = torch.tensor(xs, dtype=torch.float64), torch.tensor(ys, dtype=torch.float64)
    loss = ((w_t * x + b_t - y) ** 2).mean()
    loss.backward()
    return [loss.item(), w_t.grad.item(), b_t.grad.item()]


def torch_fit(xs, ys, lr, steps):
    w = torch.zeros((), dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([w, b], lr=lr)
    x, y = torch.tensor(xs, dtype=torch.float64), torch.tensor(ys, dtype=torch.float64)
    for _ in range(steps):
        optimizer.zero_grad()
        ((w * x + b - y) ** 2).mean().backward()
        optimizer.step()
    return [w.item(), b.item()]


def close(got, want):
    return all(math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-9) for g, w in zip(got, want)) and len(got) == len(want)


# ---------------------------------------------------------------- the path


def test_the_three_lessons_keep_their_order_and_the_recaps_lead_on():
    ids = [e["id"] for e in get_path()["lessons"]]
    assert ids.index(GRAPHS) + 1 == ids.index("backprop") == ids.index(REGRESSION) - 1
    assert all(e["written"] for e in get_path()["lessons"])
    assert get_lesson(GRAPHS)["recap"]["next"]["href"] == "/lessons/backprop"
    assert get_lesson("backprop")["recap"]["next"]["href"] == f"/lessons/{REGRESSION}"
    assert get_lesson(REGRESSION)["previous"]["href"] == "/lessons/backprop"


@pytest.mark.parametrize("lesson_id", [GRAPHS, REGRESSION])
def test_each_new_lesson_has_every_kind_of_section(lesson_id):
    lesson = get_lesson(lesson_id)
    assert [s["slug"] for s in lesson["sections"]] == [
        "why", "key-parts", "see-it-work", "predict", "try-it", "check-yourself", "explain", "recap"]
    assert 20 <= lesson["minutes"] <= 30
    assert len(lesson["predict"]["steps"]) >= 5
    assert [e["id"] for e in lesson["exercises"]] == NEW_EXERCISES[lesson_id]
    assert all(e["languages"] == list(LANGUAGES) for e in lesson["exercises"])
    assert len(lesson["quiz"]) == 5 and {q["kind"] for q in lesson["quiz"]} == {"number", "choice"}
    assert len(lesson["explain"]["key_ideas"]) == 5 and lesson["recap"]["points"]


@pytest.mark.parametrize("lesson_id", [GRAPHS, REGRESSION])
def test_new_lessons_prose_types_no_numbers_of_its_own(lesson_id):
    # Numbers come from placeholders; 0, 1 and 2 may be written as words of the formulas.
    folder = DATA_DIR / lesson_id
    files = sorted(folder.glob("sections/*.md")) + sorted(folder.glob("exercises/*/exercise.md"))
    assert len(files) == 10
    for path in files:
        text = PLACEHOLDER.sub("", path.read_text(encoding="utf-8"))
        numbers = set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text))
        assert numbers <= {"0", "1", "2"}, (path.name, numbers)


# ---------------------------------------------------------------- numbers against independent sources


def test_computational_graphs_numbers_by_hand():
    numbers = lesson_numbers(GRAPHS)
    a, b, c = 2.0, -3.0, 10.0
    s = a * b
    t = s + c
    u = t * t
    assert {k: numbers["example"][k]["data"] for k in ("s", "t", "u", "out")} == {"s": s, "t": t, "u": u, "out": u + s}
    o = math.tanh(1.5 * -2.0 + 2.5)
    assert math.isclose(numbers["squash"]["o"]["data"], o, rel_tol=1e-15)
    assert math.isclose(numbers["squash"]["y"]["data"], o * o + o, rel_tol=1e-15)
    for key, want in {"p": -3.0, "n": -0.5, "o": o, "oo": o * o, "y": o * o + o}.items():
        assert check_prediction(GRAPHS, key, want)["correct"]
        assert not check_prediction(GRAPHS, key, want + 0.05)["correct"]


@needs_torch
def test_regression_graph_numbers_match_pytorch():
    numbers = lesson_numbers(REGRESSION)
    loss, dw, db = torch_loss_and_gradient([1.0, 2.0], [3.0, 5.0], 0.5, 0.5)
    assert math.isclose(numbers["loss"]["L"]["data"], loss) and math.isclose(numbers["loss"]["w"]["grad"], dw)
    assert math.isclose(numbers["loss"]["b"]["grad"], db)
    # One point: L = (w x + b - y)^2, by hand: r = 0.5*2 + 1 - 3 = -1, dL/dw = 2 r x = -4, dL/db = 2 r = -2.
    for key, want in {"f": 2.0, "r": -1.0, "L": 1.0, "dr": -2.0, "dw": -4.0, "db": -2.0}.items():
        assert check_prediction(REGRESSION, key, want)["correct"], key


@needs_torch
def test_regression_plot_runs_are_gradient_descent_and_show_the_three_rates():
    plot = get_lesson(REGRESSION)["see_it_work"]["plot"]
    xs, ys = plot["xs"], plot["ys"]
    runs = {run["name"]: run for run in plot["runs"]}
    assert set(runs) == {"small", "right", "large"}
    for run in runs.values():
        last = run["frames"][-1]
        assert close([last["w"], last["b"]], plain_fit(xs, ys, run["lr"], run["steps"]))
        assert close([last["w"], last["b"]], torch_fit(xs, ys, run["lr"], run["steps"]))
        losses = [frame["loss"] for frame in run["frames"]]
        assert close([losses[-1]], [torch_loss_and_gradient(xs, ys, last["w"], last["b"])[0]])
    # The least-squares line, from the normal equations: the right rate gets close to it.
    n, sx, sy = len(xs), sum(xs), sum(ys)
    sxx, sxy = sum(x * x for x in xs), sum(x * y for x, y in zip(xs, ys))
    w_best = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    b_best = (sy - w_best * sx) / n
    right = runs["right"]["frames"][-1]
    assert abs(right["w"] - w_best) < 0.1 and abs(right["b"] - b_best) < 0.15
    small_losses = [f["loss"] for f in runs["small"]["frames"]]
    large_losses = [f["loss"] for f in runs["large"]["frames"]]
    assert all(later < earlier for earlier, later in zip(small_losses, small_losses[1:]))
    assert small_losses[-1] > 5 * runs["right"]["frames"][-1]["loss"]  # too small: still far from the bottom
    assert large_losses[-1] > 100 * large_losses[0]  # too large: it diverges
    assert all(later > earlier for earlier, later in zip(large_losses[5:], large_losses[6:]))


@pytest.mark.parametrize("lesson_id", [GRAPHS, REGRESSION])
def test_quiz_keys_are_right_and_explained(lesson_id):
    hand = {  # each key worked out by hand from the question's given numbers
        "evaluate-graph": (3 - 1) * 4, "shared-value": 1 + 1 * 1, "count-values": 3 + 4,
        "one-step": 0.5 - 0.1 * -4, "point-gradient": 2 * (1 * 3 + 0 - 2) * 3, "mean-squared-error": (1 + 4 + 9) / 3,
    }
    questions = {q["id"]: q for q in lesson_data(lesson_id)["quiz"]}
    assert list(questions) == question_ids(lesson_id)
    for qid, question in questions.items():
        if question["kind"] == "number":
            assert math.isclose(question["answer"], hand[qid])
            result = check_quiz_answer(lesson_id, qid, str(hand[qid]))
        else:
            result = check_quiz_answer(lesson_id, qid, str(question["answer_index"] + 1))
            wrong = check_quiz_answer(lesson_id, qid, str((question["answer_index"] + 1) % len(question["options"]) + 1))
            assert not wrong["correct"]
        assert result["correct"] and result["reason"] and "{{" not in result["reason"]


# ---------------------------------------------------------------- exercises: cases from the engine


def test_forward_values_cases_include_a_shared_value_and_a_long_chain():
    cases = exercise_cases("forward-values")
    assert len(cases) >= 5
    for case in cases:
        nodes, leaves = case.args
        assert close(case.expected, plain_forward(nodes, leaves))
    uses = [max(sum(i in (a, b) for _, a, b in c.args[0]) for i in range(len(c.args[1]) + len(c.args[0])))
            for c in cases]
    assert max(uses) >= 3  # some value feeds three inputs
    assert max(len(c.args[0]) for c in cases) >= 20  # a long chain


def test_forward_any_order_cases_are_out_of_order():
    cases = exercise_cases("forward-any-order")
    for case in cases:
        nodes, leaves = case.args
        assert close(case.expected, plain_forward(nodes, leaves))
    out_of_order = [c for c in cases if any(max(a, b or 0) >= len(c.args[1]) + i for i, (_, a, b) in enumerate(c.args[0]))]
    assert len(out_of_order) >= len(cases) - 1


@needs_torch
def test_line_exercise_cases_agree_with_pytorch_and_the_written_rule():
    for case in exercise_cases("loss-gradient"):
        assert close(case.expected, torch_loss_and_gradient(*case.args))
    for case in exercise_cases("fit-line"):
        assert close(case.expected, plain_fit(*case.args))
        assert close(case.expected, torch_fit(*case.args))


@pytest.mark.parametrize("exercise_id", [e for ids in NEW_EXERCISES.values() for e in ids])
@pytest.mark.parametrize("language", LANGUAGES)
def test_reference_passes_and_starter_fails(exercise_id, language, grade_once):
    _, failed = graded_reference_and_starter(grade_once, exercise_id, language)
    assert failed["verdict"] == "failed", failed["message"]
    assert any(t["status"] == "fail" for t in failed["tests"])


STOCHASTIC = {
    "python": """
def fit_line(xs, ys, lr, steps):
    w, b = 0.0, 0.0
    for _ in range(steps):
        for x, y in zip(xs, ys):
            r = w * x + b - y
            w -= lr * 2 * r * x
            b -= lr * 2 * r
    return [w, b]
""",
    "javascript": """
function fitLine(xs, ys, lr, steps) {
  let w = 0, b = 0;
  for (let s = 0; s < steps; s++) xs.forEach((x, i) => { const r = w * x + b - ys[i]; w -= lr * 2 * r * x; b -= lr * 2 * r; });
  return [w, b];
}
""",
    "typescript": """
export function fitLine(xs: number[], ys: number[], lr: number, steps: number): number[] {
  let w = 0, b = 0;
  for (let s = 0; s < steps; s++) xs.forEach((x, i) => { const r = w * x + b - ys[i]; w -= lr * 2 * r * x; b -= lr * 2 * r; });
  return [w, b];
}
""",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_stochastic_fit_fails_with_a_hint_that_says_so(language):
    result = grade("fit-line", language, STOCHASTIC[language])
    assert result["verdict"] == "failed"
    assert "(stochastic gradient descent)" in result["message"]  # said once for the whole result too
    steps = [c.args[3] for c in exercise_cases("fit-line")]
    for test, _count in zip(result["tests"], steps):
        assert test["status"] == "fail"
        assert "after every single point (stochastic gradient descent)" in test["message"]
        assert "full batch" in test["message"]


def test_other_classic_mistakes_get_their_hints():
    no_scale = reference_source("fit-line", "python").replace("2 / n * ", "")
    result = grade("fit-line", "python", no_scale)
    assert result["tests"][0]["status"] == "pass"  # two points: 2/n is 1, so the mistake does not show
    assert "plain sum" in result["tests"][1]["message"]
    in_order = grade("forward-any-order", "python", starter_source("forward-any-order", "python"))
    failing = [t for t in in_order["tests"] if t["status"] == "fail"]
    assert failing and all("in the order they are listed" in t["message"] for t in failing)
    summed = reference_source("loss-gradient", "python").replace("/ n\n", "\n").replace("2 / n *", "2 *")
    result = grade("loss-gradient", "python", summed)
    assert "n times too big" in result["tests"][1]["message"]


@pytest.mark.parametrize("lesson_id", [GRAPHS, "backprop", REGRESSION])
def test_builtin_lessons_pass_lessons_check(lesson_id, grade_once):
    """Every check, the references and starters graded in the sandbox (once per session: test_grading
    and the test above grade the same files)."""
    from chainrule.lessons.validate import check_lesson_folder

    assert check_lesson_folder(DATA_DIR / lesson_id, grade_with=grade_once) == []


def test_lessons_check_command_reports_each_builtin_lesson_ok():
    run = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "check", "--no-grading", str(DATA_DIR)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    for lesson_id in (GRAPHS, "backprop", REGRESSION):
        assert f"lesson {lesson_id}: ok" in run.stdout


def test_review_covers_the_questions_of_every_lesson(tmp_path):
    from datetime import datetime, timedelta, timezone

    from chainrule.lessons import quiz_question
    from chainrule.progress import open_store

    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    store = open_store(tmp_path, clock=lambda: start)
    try:
        for lesson_id in (GRAPHS, "backprop", REGRESSION):
            for question_id in question_ids(lesson_id):
                store.answer_question(lesson_id, question_id, "1", True)
        due = store.due_reviews(now=start + timedelta(days=120))
    finally:
        store.close()
    assert {item["lesson_id"] for item in due} == {GRAPHS, "backprop", REGRESSION}
    assert len(due) == 15
    for item in due:  # each due question can be asked again
        assert quiz_question(item["lesson_id"], item["question_id"])["prompt"]


def test_the_formula_under_the_graph_is_named_for_what_it_shows():
    from chainrule.lessons import get_lesson

    assert get_lesson("backprop")["see_it_work"]["formula_label"] == "The chain rule along one path"
    label = get_lesson("computational-graphs")["see_it_work"]["formula_label"]
    assert "chain rule" not in label.lower()  # that lesson comes before the chain rule
