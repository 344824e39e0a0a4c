"""Fresh numbers in review: a numeric question that comes back asks with new numbers each review,
and its key is the engine's. Expected answers here come from PyTorch (float64) and from finite
differences, read off the prompt the learner sees, never from the code under test."""

from __future__ import annotations

import io
import math
import re
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from chainrule.commands.review_session import run_review
from chainrule.lessons import check_quiz_answer, lesson_data, lesson_ids, quiz_question, review_variant
from chainrule.lessons.fresh import draw_numbers, engine_key, has_fresh_numbers
from chainrule.progress import open_store
from chainrule.web import create_app
from reference_torch import needs_torch, torch  # noqa: E402

LESSON = "backprop"
FRESH = ["product-gradient", "tanh-gradient", "sum-of-uses"]
START = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)
NUMBER = r"(-?\d+(?:\.\d+)?)"


def numbers_in(question_id: str, prompt: str) -> dict[str, float]:
    """The numbers a prompt states, read from its text."""
    patterns = {
        "product-gradient": rf"a = {NUMBER} and b = {NUMBER}\. .* gradient of {NUMBER}\.",
        "tanh-gradient": rf"t = {NUMBER}\. The gradient that comes back to t is {NUMBER}\.",
        "sum-of-uses": rf"sends {NUMBER} to a and the second sends {NUMBER}\.",
    }
    match = re.search(patterns[question_id], prompt)
    assert match, prompt
    values = [float(x) for x in match.groups()]
    names = {"product-gradient": ("a", "b", "upstream"), "tanh-gradient": ("t", "upstream"),
             "sum-of-uses": ("first", "second")}[question_id]
    return dict(zip(names, values))


def torch_answer(question_id: str, n: dict[str, float]) -> float:
    """The key by PyTorch autograd in float64, from the numbers the prompt states."""
    f64 = torch.float64
    if question_id == "product-gradient":
        a = torch.tensor(n["a"], dtype=f64, requires_grad=True)
        (a * n["b"] * n["upstream"]).backward()  # e = a*b, and e's gradient is `upstream`
        return a.grad.item()
    if question_id == "tanh-gradient":
        x = torch.tensor(math.atanh(n["t"]), dtype=f64, requires_grad=True)  # the input whose tanh is t
        (torch.tanh(x) * n["upstream"]).backward()
        return x.grad.item()
    a = torch.tensor(1.0, dtype=f64, requires_grad=True)
    (a * n["first"] + a * n["second"]).backward()  # two nodes read a and send back first and second
    return a.grad.item()


def finite_difference(question_id: str, n: dict[str, float], h: float = 1e-6) -> float:
    if question_id == "product-gradient":
        f = lambda a: a * n["b"] * n["upstream"]  # noqa: E731
        x = 1.0
    elif question_id == "tanh-gradient":
        f = lambda x: math.tanh(x) * n["upstream"]  # noqa: E731
        x = math.atanh(n["t"])
    else:
        f = lambda a: a * n["first"] + a * n["second"]  # noqa: E731
        x = 1.0
    return (f(x + h) - f(x - h)) / (2 * h)


def variants(question_id: str, count: int) -> list[str]:
    return [review_variant(LESSON, question_id, (START + timedelta(days=k)).isoformat()) for k in range(count)]


# ---------------------------------------------------------------- the recipe and the engine


def test_the_recipes_give_the_lessons_own_keys_for_the_lessons_own_numbers():
    questions = {q["id"]: q for q in lesson_data(LESSON)["quiz"]}
    assert [qid for qid, q in questions.items() if has_fresh_numbers(q)] == FRESH
    # Every written lesson's recipes, so that a new lesson's cannot drift from its own key either.
    for lesson in lesson_ids():
        for question in lesson_data(lesson)["quiz"]:
            if has_fresh_numbers(question):
                key = engine_key(question, question["given"])
                assert key == pytest.approx(question["answer"], abs=1e-9), (lesson, question["id"])
                for variant in variants(question["id"], 5):  # every draw builds and checks
                    prompt = quiz_question(lesson, question["id"], variant)["prompt"]
                    assert "{{" not in prompt


@needs_torch
@pytest.mark.parametrize("question_id", FRESH)
def test_every_review_variant_is_checked_against_torch_and_finite_differences(question_id):
    tolerance = lesson_data(LESSON)["tolerance"]
    prompts = set()
    for variant in variants(question_id, 40):
        prompt = quiz_question(LESSON, question_id, variant)["prompt"]
        prompts.add(prompt)
        stated = numbers_in(question_id, prompt)
        expected = torch_answer(question_id, stated)
        assert expected == pytest.approx(finite_difference(question_id, stated), abs=1e-6)
        right = check_quiz_answer(LESSON, question_id, repr(expected), variant)
        assert right["correct"] and not right["invalid"], (prompt, expected, right)
        assert float(right["expected"]) == pytest.approx(expected, abs=5e-5)
        assert not check_quiz_answer(LESSON, question_id, repr(expected + 3 * tolerance), variant)["correct"]
        # The reason works with the numbers shown, not the lesson's.
        assert right["reason"].endswith(f"{right['expected']}.") or f"{right['expected']}." in right["reason"]
    assert len(prompts) >= 30, "forty reviews should mostly show different numbers"


@pytest.mark.parametrize("question_id", FRESH)
def test_a_review_never_repeats_the_lessons_numbers_and_the_lesson_keeps_them(question_id):
    question = next(q for q in lesson_data(LESSON)["quiz"] if q["id"] == question_id)
    lesson_prompt = quiz_question(LESSON, question_id)["prompt"]
    assert numbers_in(question_id, lesson_prompt) == {k: float(v) for k, v in question["given"].items()}
    for variant in variants(question_id, 200):
        assert draw_numbers(question, variant) != question["given"]
    one = variants(question_id, 1)[0]
    assert quiz_question(LESSON, question_id, one) == quiz_question(LESSON, question_id, one)  # a reload keeps them


def test_choice_questions_come_back_unchanged():
    for qid in ("addition-node", "reverse-order"):
        assert quiz_question(LESSON, qid, "abc123") == quiz_question(LESSON, qid)


# ---------------------------------------------------------------- two reviews of one card: the page's API


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@needs_torch
def test_two_reviews_of_the_same_card_on_the_page_show_different_numbers(tmp_path):
    clock = Clock()
    app = create_app("test-token-0123456789", tmp_path / "data", port=8765, clock=clock)
    shown = []
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        client.headers.update({"X-Chainrule-Token": "test-token-0123456789"})
        client.post(f"/api/lessons/{LESSON}/quiz/product-gradient", json={"answer": "6"})
        for _ in range(2):
            clock.now += timedelta(days=400)
            due = client.get("/api/review/due").json()["due"]
            assert [d["question_id"] for d in due] == ["product-gradient"]
            item = due[0]
            again = client.get("/api/review/due").json()["due"][0]
            assert again["prompt"] == item["prompt"]  # a reload shows the same numbers
            expected = torch_answer("product-gradient", numbers_in("product-gradient", item["prompt"]))
            # Answered against the numbers shown (the variant), the engine agrees with torch.
            body = {"answer": repr(expected), "variant": item["variant"]}
            answered = client.post(f"/api/review/{LESSON}/product-gradient", json=body).json()
            assert answered["correct"] is True, (item, answered)
            shown.append(item["prompt"])
        bad = client.post(f"/api/review/{LESSON}/product-gradient", json={"answer": "1", "variant": "not hex!"})
        assert bad.status_code == 422 and "variant" in bad.text
    app.state.services.close()
    assert shown[0] != shown[1]
    lesson_prompt = quiz_question(LESSON, "product-gradient")["prompt"]
    assert lesson_prompt not in shown


# ---------------------------------------------------------------- two reviews of one card: the terminal


@needs_torch
def test_two_reviews_of_the_same_card_in_the_terminal_show_different_numbers(tmp_path):
    clock = Clock()
    store = open_store(tmp_path, clock=clock, fuzzing=False)
    try:
        store.answer_question(LESSON, "tanh-gradient", "0.51", True)
        prompts = []
        for _ in range(2):
            clock.now += timedelta(days=400)
            [item] = store.due_reviews()
            prompt = quiz_question(LESSON, "tanh-gradient", review_variant(LESSON, "tanh-gradient", item["due"]))["prompt"]
            expected = torch_answer("tanh-gradient", numbers_in("tanh-gradient", prompt))
            out = io.StringIO()
            assert run_review(store, io.StringIO(f"{expected!r}\n\n"), out) == 0
            text = out.getvalue()
            assert f"[{LESSON}] {prompt}" in text, text
            assert "Right." in text and "Reviewed 1 question; 0 still due." in text, text
            prompts.append(prompt)
        assert prompts[0] != prompts[1]
        assert [entry["correct"] for entry in store.review_log(LESSON, "tanh-gradient")] == [True, True, True]
    finally:
        store.close()


# ---------------------------------------------------------------- every lesson's numeric questions


NUMERIC = [(lesson, q["id"]) for lesson in lesson_ids() for q in lesson_data(lesson)["quiz"] if q["kind"] == "number"]
# The functions a `compute` expression may call, as PyTorch computes them.
TORCH_FUNCTIONS = None if torch is None else {"tanh": torch.tanh, "exp": torch.exp, "log": torch.log,
                                              "relu": torch.relu, "sigmoid": torch.sigmoid, "abs": torch.abs}


def torch_compute(question: dict, numbers: dict[str, float]) -> float:
    """The question's `compute` (Python syntax: + - * / and names) evaluated with PyTorch float64 tensors."""
    names = {name: torch.tensor(float(value), dtype=torch.float64, requires_grad=True)
             for name, value in (question["given"] | numbers).items()}
    out = eval(question["compute"]["expression"], {"__builtins__": {}}, TORCH_FUNCTIONS | names)  # noqa: S307 (our own data)
    wrt = question["compute"].get("wrt")
    if wrt is None:
        return out.item()
    out.backward()
    return names[wrt].grad.item()


@needs_torch
@pytest.mark.parametrize("lesson,question_id", NUMERIC, ids=[f"{lesson}/{q}" for lesson, q in NUMERIC])
def test_every_numeric_question_of_every_lesson_comes_back_with_fresh_numbers(lesson, question_id):
    from chainrule.lessons import format_number
    from chainrule.lessons.fresh import fresh_problems

    question = next(q for q in lesson_data(lesson)["quiz"] if q["id"] == question_id)
    assert has_fresh_numbers(question) and fresh_problems(question) == []
    lesson_prompt = quiz_question(lesson, question_id)["prompt"]
    prompts = set()
    for day in range(12):
        variant = review_variant(lesson, question_id, (START + timedelta(days=day)).isoformat())
        numbers = draw_numbers(question, variant)
        prompt = quiz_question(lesson, question_id, variant)["prompt"]
        assert prompt != lesson_prompt and all(format_number(v) in prompt for v in numbers.values()), prompt
        prompts.add(prompt)
        if "graph" in question["fresh"]:
            continue  # the graph rules are checked against torch above, from the prompt's own numbers
        expected = torch_compute(question, numbers)
        assert check_quiz_answer(lesson, question_id, repr(expected), variant)["correct"], (prompt, expected)
        assert not check_quiz_answer(lesson, question_id, repr(expected + 1), variant)["correct"]
    assert len(prompts) >= 8
