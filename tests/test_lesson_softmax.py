"""The lesson "Softmax and cross-entropy", after "A network learns": softmax, the negative log likelihood, the
gradient p - y by the chain rule and by the shortcut, and log-sum-exp against overflow.

Every number a learner sees is checked against an independent source: PyTorch in float64 (softmax,
cross_entropy, autograd) and the formulas worked out by hand here. Every exercise is graded in the real
sandbox in all three languages (once per session, through grade_once); the diagnoses are tried on the mistakes
learners make, run in this process on the exercises' own cases."""

from __future__ import annotations

import math

import pytest

from chainrule.grading import exercise_cases, get_exercise
from chainrule.grading.diagnoses import diagnose_run
from chainrule.grading.rounding import all_same_graded
from chainrule.lessons import check_prediction, check_quiz_answer, get_lesson, lesson_data, lesson_numbers
from chainrule.lessons.loader import DATA_DIR
from exercise_mistakes import (
    assert_mistake_named,
    assert_odd_output_is_diagnosed,
    graded_reference_and_starter,
    typed_numbers,
)
from reference_torch import needs_torch, torch

pytestmark = pytest.mark.timeout(600)

SOFTMAX = "softmax-and-cross-entropy"
EXERCISES = ["stable-softmax", "cross-entropy-gradient", "classifier-step"]
LANGUAGES = ("python", "javascript", "typescript")
F64 = None if torch is None else torch.float64


def close(got, want, rel=1e-9, abs_=1e-12):
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=rel, abs_tol=abs_) for g, w in zip(got, want))


def by_hand_softmax(z: list[float]) -> list[float]:
    exps = [math.exp(v) for v in z]
    return [e / sum(exps) for e in exps]


def test_the_lesson_does_everything_a_lesson_does():
    lesson = get_lesson(SOFTMAX)
    assert [s["slug"] for s in lesson["sections"]] == [
        "why", "key-parts", "see-it-work", "predict", "try-it", "check-yourself", "explain", "recap"]
    assert lesson["solution_after"] == 3
    steps = lesson["predict"]["steps"]
    order = [(s["before_step"]["phase"] != "forward", s["before_step"]["index"]) for s in steps]
    assert len(steps) == 4 and order == sorted(order) and len(set(order)) == len(order)
    assert [e["id"] for e in lesson["exercises"]] == EXERCISES
    assert all(e["languages"] == list(LANGUAGES) and e["hint_count"] >= 3 for e in lesson["exercises"])
    quiz = lesson_data(SOFTMAX)["quiz"]
    assert len(quiz) == 5 and {q["kind"] for q in quiz} == {"number", "choice"}
    assert all("fresh" in q for q in quiz if q["kind"] == "number")
    assert all(len(q["why_wrong"]) == len(q["options"]) for q in quiz if q["kind"] == "choice")
    assert len(lesson["explain"]["key_ideas"]) == 5 and len(lesson["recap"]["points"]) >= 4


def test_the_prose_types_no_numbers_of_its_own():
    files = sorted((DATA_DIR / SOFTMAX).glob("sections/*.md")) + sorted((DATA_DIR / SOFTMAX).glob("exercises/*/exercise.md"))
    assert len(files) == 8 + len(EXERCISES)
    for path in files:
        assert typed_numbers(path) <= {"0", "1", "2"}, path.name


@needs_torch
def test_the_graphs_match_torch_and_the_chain_rule_agrees_with_p_minus_y():
    numbers = lesson_numbers(SOFTMAX)
    for graph, logits in (("chain", [2.0, 1.0, -1.0]), ("guess", [0.0, 1.0, -1.0])):
        z = torch.tensor(logits, dtype=F64, requires_grad=True)
        loss = torch.nn.functional.cross_entropy(z.unsqueeze(0), torch.tensor([0]))
        loss.backward()
        p = torch.softmax(z.detach(), dim=0).tolist()
        assert math.isclose(numbers[graph]["L"]["data"], loss.item(), rel_tol=1e-12)
        assert math.isclose(numbers[graph]["p0"]["data"], p[0], rel_tol=1e-12)
        grads = [numbers[graph][f"z{k}"]["grad"] for k in range(3)]
        assert close(grads, z.grad.tolist())
        # the shortcut, by hand: p - y with y one-hot at class 0
        assert close(grads, [q - (k == 0) for k, q in enumerate(by_hand_softmax(logits))])
        assert math.isclose(numbers[graph]["p0"]["grad"], -1 / p[0], rel_tol=1e-12)  # d(-log p)/dp = -1/p
    # Large logits: torch's stable cross_entropy and the engine's log-sum-exp agree, and equal the shifted scores'.
    z = torch.tensor([1000.0, 999.0, 997.0], dtype=F64, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(z.unsqueeze(0), torch.tensor([0]))
    loss.backward()
    assert math.isclose(numbers["big"]["L"]["data"], loss.item(), rel_tol=1e-12)
    assert close([numbers["big"][f"z{k}"]["grad"] for k in range(3)], z.grad.tolist())
    assert math.isclose(numbers["big"]["L"]["data"], -math.log(by_hand_softmax([3, 2, 0])[0]), rel_tol=1e-12)
    with pytest.raises(OverflowError):  # what the naive first box does with these scores
        math.exp(1000.0)


def test_predictions_are_checked_against_the_numbers_by_hand():
    p = by_hand_softmax([0.0, 1.0, -1.0])
    by_hand = {"s": 1 + math.e + math.exp(-1), "p0": p[0], "dp0": -1 / p[0], "dz0": p[0] - 1}
    for key, value in by_hand.items():
        assert check_prediction(SOFTMAX, key, value)["correct"], key
        assert not check_prediction(SOFTMAX, key, value + 0.05)["correct"], key
    slip = check_prediction(SOFTMAX, "dz0", p[0])  # p without y
    assert not slip["correct"] and "target of class 0" in slip["hint"]


@needs_torch
def test_exercise_cases_match_torch():
    for case in exercise_cases("stable-softmax"):
        [logits] = case.args
        assert close(case.expected, torch.softmax(torch.tensor(logits, dtype=F64), dim=0).tolist())
        assert math.isclose(sum(case.expected), 1.0, rel_tol=1e-12)
    for case in exercise_cases("cross-entropy-gradient"):
        logits, target = case.args
        z = torch.tensor(logits, dtype=F64, requires_grad=True)
        torch.nn.functional.cross_entropy(z.unsqueeze(0), torch.tensor([target])).backward()
        assert close(case.expected, z.grad.tolist())
    for case in exercise_cases("classifier-step"):
        points, labels, w, b, lr = case.args
        tw = torch.tensor(w, dtype=F64, requires_grad=True)
        tb = torch.tensor(b, dtype=F64, requires_grad=True)
        loss = torch.nn.functional.cross_entropy(torch.tensor(points, dtype=F64) @ tw.T + tb, torch.tensor(labels))
        loss.backward()
        want = [loss.item()] + (tw - lr * tw.grad).flatten().tolist() + (tb - lr * tb.grad).tolist()
        assert close(case.expected, want)
    # By hand: at zero weights every class gets 1/3, so the loss is log 3 for every point.
    zero = exercise_cases("classifier-step")[1]
    assert math.isclose(zero.expected[0], math.log(3), rel_tol=1e-12)


QUIZ_KEYS = {  # each key worked out by hand from the question's given numbers
    "gradient-right-class": 0.7 - 1, "gradient-other-class": 0.2, "loss-of-a-probability": math.log(1 + math.exp(-2)),
}


def test_quiz_keys_are_right_explained_and_named_slips_get_their_hint():
    for question in lesson_data(SOFTMAX)["quiz"]:
        qid = question["id"]
        if question["kind"] == "number":
            assert math.isclose(question["answer"], QUIZ_KEYS[qid], rel_tol=1e-12)
            result = check_quiz_answer(SOFTMAX, qid, repr(QUIZ_KEYS[qid]))
            assert not check_quiz_answer(SOFTMAX, qid, repr(QUIZ_KEYS[qid] + 0.05))["correct"]
        else:
            result = check_quiz_answer(SOFTMAX, qid, str(question["answer_index"] + 1))
            assert not check_quiz_answer(SOFTMAX, qid, str(question["answer_index"] % len(question["options"]) + 2))["correct"]
        assert result["correct"] and result["reason"] and "{{" not in result["reason"], qid
    forgot = check_quiz_answer(SOFTMAX, "gradient-right-class", "0.7")
    assert not forgot["correct"] and "the gradient is p - y" in forgot["hint"]


ALL = [(exercise, language) for exercise in EXERCISES for language in LANGUAGES]
STARTER_SAYS = {  # what a failing test of each starter says, in every language
    "stable-softmax": "An exponential overflowed",
    "cross-entropy-gradient": "dL/dz0",
    "classifier-step": "W and b come back as they went in",
}


@pytest.mark.parametrize("exercise_id,language", ALL, ids=[f"{e}-{lang}" for e, lang in ALL])
def test_reference_passes_and_starter_fails(exercise_id, language, grade_once):
    _, failed = graded_reference_and_starter(grade_once, exercise_id, language, hidden_at_least=4)
    # Python raises OverflowError on the large scores ("error"); JavaScript returns NaN there ("failed").
    assert failed["verdict"] in ("failed", "error"), failed["message"]
    said = " ".join(str(t.get("hint") or t.get("message") or "") for t in failed["tests"]) + str(failed.get("message"))
    assert STARTER_SAYS[exercise_id] in said, failed["tests"]


def test_the_lesson_passes_lessons_check(grade_once):
    from chainrule.lessons.validate import check_lesson_folder

    assert check_lesson_folder(DATA_DIR / SOFTMAX, grade_with=grade_once) == []


MISTAKES = [
    ("stable-softmax", "shifted-not-divided", [("return [e / total for e in exps]", "return exps")], "did not divide by the sum"),
    ("cross-entropy-gradient", "forgot-y", [("pk - (1.0 if k == target else 0.0)", "pk")], "take 1 off at the target"),
    ("cross-entropy-gradient", "sign-flipped", [("pk - (1.0 if k == target else 0.0)", "(1.0 if k == target else 0.0) - pk")],
     "you computed y - p"),
    ("classifier-step", "forgot-y", [("(p[k] - (1.0 if k == label else 0.0)) / n", "p[k] / n")], "subtract 1 at each point"),
    ("classifier-step", "ascent", [("w - lr * g", "w + lr * g"), ("bk - lr * g", "bk + lr * g")], "a step up the slope"),
    ("classifier-step", "summed", [("(p[k] - (1.0 if k == label else 0.0)) / n", "p[k] - (1.0 if k == label else 0.0)")],
     "not divided by their number"),
]


@pytest.mark.parametrize("exercise_id,mistake,replacements,says", MISTAKES, ids=[f"{m[0]}-{m[1]}" for m in MISTAKES])
def test_each_classic_mistake_is_named(exercise_id, mistake, replacements, says):
    assert_mistake_named(exercise_id, replacements, says)


@pytest.mark.parametrize("exercise_id", ["stable-softmax", "cross-entropy-gradient"])
def test_an_unstable_exp_is_named_where_it_overflows(exercise_id):
    """JavaScript's Math.exp(1000) is Infinity, and Infinity / Infinity is NaN: the cases with large scores say
    why, and the others pass (float('inf') stands for JavaScript's Infinity here)."""
    exercise = get_exercise(exercise_id)
    cases = list(exercise.cases)

    def naive(logits: list[float], *target: int) -> list[float]:
        exps = [math.inf if z > 709.79 else math.exp(z) for z in logits]
        p = [e / sum(exps) if not math.isinf(e) else math.nan for e in exps]
        return p if not target else [q - (k == target[0]) for k, q in enumerate(p)]

    raws = [naive(*case.args) for case in cases]
    failing = [not all_same_graded(raw, case.expected) for raw, case in zip(raws, cases)]
    assert any(failing) and not all(failing)
    hints = diagnose_run(exercise, cases, raws, failing).hints
    for case, hint, fails in zip(cases, hints, failing):
        assert fails == (max(case.args[0]) > 709.79), case.name
        assert not fails or "overflowed" in hint, (case.name, hint)


def test_a_learners_odd_output_is_diagnosed_without_a_crash():
    assert_odd_output_is_diagnosed(EXERCISES)
