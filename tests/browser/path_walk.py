"""The path's end-to-end walks share these: each lesson's hand-worked predictions (section 04) and numeric quiz
keys (section 06), making the predictions and answering the quiz through the page, and where each lesson's
recap leads.

Predictions and quiz keys are worked out by hand (math.tanh for the one tanh), never read back from the page."""

from __future__ import annotations

import json
import math
from pathlib import Path

from lesson_pages import SPEC_PREDICTIONS

DATA = Path(__file__).resolve().parents[2] / "src" / "chainrule" / "lessons" / "data"

# Hand-worked predictions of each lesson's section 04.
PREDICTIONS = {
    "computational-graphs": {"p": -3.0, "n": -0.5, "o": math.tanh(-0.5), "oo": math.tanh(-0.5) ** 2,
                             "y": math.tanh(-0.5) ** 2 + math.tanh(-0.5)},
    "backprop": SPEC_PREDICTIONS,
    "gradient-descent-linear-regression": {"f": 2.0, "r": -1.0, "L": 1.0, "dr": -2.0, "dw": -4.0, "db": -2.0},
}
# Hand-worked keys of the numeric quiz questions (the choice questions are answered from quiz.json's index).
NUMERIC_ANSWERS = {
    "product-gradient": "6", "tanh-gradient": "0.51", "sum-of-uses": "8",
    "evaluate-graph": "8", "shared-value": "2", "count-values": "7",
    "one-step": "0.9", "point-gradient": "6", "mean-squared-error": "4.6667",
}
NEXT = {"computational-graphs": "/lessons/backprop", "backprop": "/lessons/gradient-descent-linear-regression",
        "gradient-descent-linear-regression": "/lessons/a-network-learns"}


def quiz_of(lesson_id: str) -> list[dict]:
    return json.loads((DATA / lesson_id / "quiz.json").read_text(encoding="utf-8"))["questions"]


def make_predictions(page, expected: dict[str, float]) -> None:
    predict = page.locator("#section-04")
    player = page.locator("#predict-player")
    made = 0
    while made < len(expected):
        form = predict.locator("form.prediction-form")
        if form.count() == 0:
            player.locator("button.next").click()
            continue
        key = form.get_attribute("data-key")
        form.locator("input").fill(f"{expected[key]:.4f}")
        form.locator("input").press("Enter")
        made += 1
        page.wait_for_function("k => document.querySelector('#section-04').dataset.predictionsMade === String(k)",
                               arg=made)
    for key in expected:
        item = predict.locator(f".prediction-list li[data-key='{key}']")
        assert "right" in item.get_attribute("class"), (key, item.text_content())


def answer_quiz(page, lesson_id: str, numeric_answers: dict[str, str] = NUMERIC_ANSWERS) -> None:
    quiz = page.locator("#section-06")
    for question in quiz_of(lesson_id):
        form = quiz.locator(f"form[data-question='{question['id']}']")
        if question["kind"] == "number":
            form.locator("input").fill(numeric_answers[question["id"]])
            form.locator("input").press("Enter")
        else:
            form.locator("label", has_text=question["options"][question["answer_index"]]).click()
            form.locator("button[type=submit]").click()
        page.wait_for_function(
            "q => document.querySelector(`#section-06 form[data-question='${q}']`).dataset.correct !== undefined",
            arg=question["id"])
        assert form.get_attribute("data-correct") == "true", form.text_content()
        assert "comes back in review" in form.locator(".feedback").text_content().lower()
