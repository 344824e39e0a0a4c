"""Issue 42, item 12's leftovers: every lesson's predictions and numeric questions name their common wrong
answers (lessons/mistakes.py), not only the backprop lesson's (tests/test_lesson_mistakes.py has those).

Each slip's number is worked out here by hand from the lesson's own numbers (math.tanh and math.exp, never the
engine): the named hint comes back only when the engine computed the same number from the rule the lesson
folder states. `lessons check` (tests/test_lessons_claims.py, every built-in lesson) refuses a rule that gives
the right answer or another slip's number.
"""

from __future__ import annotations

import math

import pytest

from chainrule.lessons.checking import check_prediction, check_quiz_answer
from chainrule.lessons.loader import builtin_lesson_ids, lesson_data
from chainrule.lessons.mistakes import GENERAL_HINT

# computational-graphs, the graph "squash": x = 1.5, w = -2, b = 2.5.
P = 1.5 * -2
N = P + 2.5
OUT = math.tanh(N)
# gradient-descent-linear-regression, the graph "point": w = 0.5, x = 2, b = 1, y = 3; L = r * r.
R = 0.5 * 2 + 1 - 3
# slopes-and-the-chain-rule, "squared": x = 2, c = 1; y = (x^2 + c)^2.
S, U = 2.0 * 2.0, 2.0 * 2.0 + 1
# a-network-learns, "other": x1 = -0.5, w1 = 1, x2 = 0.75, w2 = 0.5, b = 0.25, y = -1.
SUM = 1 * -0.5 + 0.5 * 0.75
SCORE = SUM + 0.25
# forward-and-reverse-mode, "dual": x = 0.5, seeded x' = 1.
T = math.tanh(0.5)
TANGENT = (1 - T * T) * 1
# softmax-and-cross-entropy, "guess": z = (0, 1, -1).
E = [math.exp(0), math.exp(1), math.exp(-1)]
# build-the-engine, "twice": a = 3, b = -2; c = a × b, L = c + a.
A, B = 3.0, -2.0
C = A * B

# (lesson, prediction key, the slip's number by hand, the mistake's name in lesson.json)
PREDICTION_SLIPS = [
    ("computational-graphs", "p", -P, "lost the minus sign of w"),
    ("computational-graphs", "p", 1.5 + -2, "added instead of multiplying"),
    ("computational-graphs", "n", P - 2.5, "took the bias away"),
    ("computational-graphs", "n", -P + 2.5, "lost the minus sign of p"),
    ("computational-graphs", "o", N, "skipped tanh"),
    ("computational-graphs", "o", -OUT, "lost the sign"),
    ("computational-graphs", "oo", 2 * OUT, "doubled o instead of squaring it"),
    ("computational-graphs", "oo", -OUT * OUT, "kept the minus sign"),
    ("computational-graphs", "y", OUT * OUT, "left out the second use of o"),
    ("computational-graphs", "y", OUT * OUT - OUT, "added o without its sign"),
    ("gradient-descent-linear-regression", "f", 0.5 * 2, "left out the bias"),
    ("gradient-descent-linear-regression", "r", -R, "took f from y"),
    ("gradient-descent-linear-regression", "L", R, "forgot to square r"),
    ("gradient-descent-linear-regression", "L", 2 * R, "doubled r instead of squaring it"),
    ("gradient-descent-linear-regression", "dr", R, "counted only one use of r"),
    ("gradient-descent-linear-regression", "dr", -2 * R, "lost the minus sign"),
    ("gradient-descent-linear-regression", "db", 1.0, "gave only the local slope"),
    ("gradient-descent-linear-regression", "db", -2 * R, "lost the minus sign"),
    ("gradient-descent-linear-regression", "dw", 0.5 * 2 * R, "multiplied by w itself"),
    ("gradient-descent-linear-regression", "dw", 2.0, "forgot the incoming gradient"),
    ("slopes-and-the-chain-rule", "u", S, "left out c"),
    ("slopes-and-the-chain-rule", "y", 2 * U, "doubled u instead of squaring it"),
    ("slopes-and-the-chain-rule", "du", U, "gave u, not 2u"),
    ("slopes-and-the-chain-rule", "du", U * U, "gave the value of y"),
    ("slopes-and-the-chain-rule", "ds", 1.0, "gave only the local slope"),
    ("slopes-and-the-chain-rule", "dx", 2 * 2.0, "left out the outer slope"),
    ("slopes-and-the-chain-rule", "dx", 2 * U, "left out the inner slope"),
    ("slopes-and-the-chain-rule", "dx", 2.0 * 2 * U, "used x instead of 2x"),
    ("a-network-learns", "s", SUM, "left out the bias"),
    ("a-network-learns", "ys", SCORE, "left out the label"),
    ("a-network-learns", "L", 1 + -SCORE, "added the margin"),
    ("a-network-learns", "L", 0.0, "stopped at zero"),
    ("a-network-learns", "dys", 1.0, "lost the minus sign"),
    ("a-network-learns", "ds", -1.0, "left out the other factor y"),
    ("a-network-learns", "dw1", 1 * 1.0, "multiplied by w1 itself"),  # w1 times dL/d(w1*x1) = y * -1 = 1
    ("forward-and-reverse-mode", "o", 0.5, "skipped tanh"),
    ("forward-and-reverse-mode", "slope", 1 - T, "forgot to square o"),
    ("forward-and-reverse-mode", "slope", 1 - 0.25, "used x instead of o"),
    ("forward-and-reverse-mode", "od", T, "gave o instead of its tangent"),
    ("forward-and-reverse-mode", "xod", 0.5 * T, "used o instead of o'"),
    ("forward-and-reverse-mode", "yd", 0.5 * TANGENT, "kept only the second term"),
    ("forward-and-reverse-mode", "yd", T, "kept only the first term"),
    ("many-inputs-and-the-gradient", "u", 2 + 3, "added instead of multiplying"),
    ("many-inputs-and-the-gradient", "v", 2 * 3, "multiplied instead of adding"),
    ("many-inputs-and-the-gradient", "z", 2 * 3 + (2 + 3), "added u and v"),
    ("softmax-and-cross-entropy", "s", 0 + 1 + -1, "added the scores, not their exponentials"),
    ("softmax-and-cross-entropy", "p0", sum(E) / E[0], "divided the wrong way round"),
    ("softmax-and-cross-entropy", "p0", E[0] / (E[1] + E[2]), "left e0 out of the sum"),
    ("build-the-engine", "c", A + B, "added instead of multiplying"),
    ("build-the-engine", "c", -C, "lost the minus sign of b"),
    ("build-the-engine", "L", C, "stopped at the product"),
    ("build-the-engine", "L", C - A, "subtracted a"),
]

# (lesson, question, the slip's number by hand for the question's given numbers, the mistake's name)
QUESTION_SLIPS = [
    ("computational-graphs", "evaluate-graph", 3 + -1 * 4, "multiplied before adding"),
    ("computational-graphs", "evaluate-graph", 3 + -1 + 4, "added c instead of multiplying"),
    ("computational-graphs", "shared-value", 1.0, "left out the h that is added"),  # h = 2 * 0.5
    ("computational-graphs", "count-values", 4, "counted only the boxes"),
    ("gradient-descent-linear-regression", "one-step", 0.5 + 0.1 * -4, "stepped with the gradient"),
    ("gradient-descent-linear-regression", "one-step", 0.5 + 4, "forgot the learning rate"),
    ("gradient-descent-linear-regression", "point-gradient", 2 * (3 - 2), "forgot the factor x"),
    ("gradient-descent-linear-regression", "point-gradient", (3 - 2) * 3, "forgot the 2 of the square"),
    ("gradient-descent-linear-regression", "mean-squared-error", (1 - 2 + 3) / 3, "averaged the residuals, not their squares"),
    ("gradient-descent-linear-regression", "mean-squared-error", 1 + 4 + 9, "summed without dividing"),
    ("slopes-and-the-chain-rule", "nudge-estimate", 6, "gave the exact slope"),
    ("slopes-and-the-chain-rule", "nudge-estimate", 3.1 * 3.1 - 9, "forgot to divide by h"),
    ("slopes-and-the-chain-rule", "power-rule", 3, "left out the factor k"),
    ("slopes-and-the-chain-rule", "power-rule", -2, "gave the value, not the slope"),
    ("slopes-and-the-chain-rule", "chain-rule", 2 * (3 - 1), "left out the inner slope a"),
    ("slopes-and-the-chain-rule", "chain-rule", 3, "left out the outer slope"),
    ("a-network-learns", "hinge-loss", 1.25, "added the margin"),
    ("a-network-learns", "parameter-count", 24, "left out the biases"),
    ("forward-and-reverse-mode", "product-tangent", 0.5, "multiplied the tangents"),
    ("forward-and-reverse-mode", "product-tangent", -2, "kept only one term"),
    ("forward-and-reverse-mode", "tanh-tangent", 1 - T * T, "left out the incoming tangent"),
    ("forward-and-reverse-mode", "tanh-tangent", (1 - T) * 2, "forgot to square tanh(n)"),
    ("forward-and-reverse-mode", "sweep-count", 2, "counted the outputs"),
    ("forward-and-reverse-mode", "tangent-from-gradient", 2 + -1, "added the gradients"),
]


def _item(lesson_id: str, key: str) -> dict:
    return next(s for s in lesson_data(lesson_id)["predict"]["steps"] if s["key"] == key)


@pytest.mark.parametrize(("lesson_id", "key", "slip", "name"), PREDICTION_SLIPS,
                         ids=[f"{lesson}-{key}-{name}" for lesson, key, _, name in PREDICTION_SLIPS])
def test_each_prediction_slip_gets_its_own_hint(lesson_id: str, key: str, slip: float, name: str) -> None:
    checked = check_prediction(lesson_id, key, round(slip, 4))
    assert checked["correct"] is False and checked["mistake"] == name
    assert checked["hint"] != (_item(lesson_id, key).get("hint") or GENERAL_HINT) and "{{" not in checked["hint"]


@pytest.mark.parametrize(("lesson_id", "question", "slip", "name"), QUESTION_SLIPS,
                         ids=[f"{lesson}-{question}-{name}" for lesson, question, _, name in QUESTION_SLIPS])
def test_each_numeric_question_slip_gets_its_own_hint(lesson_id: str, question: str, slip: float, name: str) -> None:
    checked = check_quiz_answer(lesson_id, question, f"{slip:.4f}")
    assert checked["correct"] is False and checked["mistake"] == name and "{{" not in checked["hint"]


def test_every_lesson_names_the_slips_of_its_predictions_and_numeric_questions() -> None:
    """Every prediction of every lesson names at least one slip, but Slopes' s = x × x at x = 2, where the common
    slip (doubling) gives the right answer; and every numeric question, but the hinge's gradient, whose common
    slip (the sign of -y × x) is no slip at all for the fresh numbers where the hinge is flat and the answer 0."""
    unnamed = {(lesson_id, step["key"]) for lesson_id in builtin_lesson_ids()
               for step in lesson_data(lesson_id)["predict"]["steps"] if not step.get("mistakes")}
    assert unnamed == {("slopes-and-the-chain-rule", "s")}
    questions = {(lesson_id, q["id"]) for lesson_id in builtin_lesson_ids() for q in lesson_data(lesson_id)["quiz"]
                 if q["kind"] == "number" and not q.get("mistakes")}
    assert questions == {("a-network-learns", "hinge-gradient")}
