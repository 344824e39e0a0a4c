"""The path's end-to-end walks share these: each lesson's hand-worked predictions (section 04) and numeric quiz
keys (section 06), making the predictions and answering the quiz through the page, where each lesson's
recap leads, and the checks every state a walk reaches must pass (StateChecks: axe-core and overflow).

Predictions and quiz keys are worked out by hand (math.tanh for the one tanh), never read back from the page."""

from __future__ import annotations

import json
import math
from pathlib import Path

from lesson_pages import SPEC_PREDICTIONS

from conftest import axe_violations

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


# What axe-core's rules can see change between two states of a part of the page: the kinds of element it holds,
# a kind being a tag, classes, attribute names, the values of the attributes that change a role or what takes the
# focus, and whether it has text of its own. A mark moving from one row to the next, one more entry of a kind
# already there, numbers, coordinates and texts changing from step to step, and what is drawn inside a picture
# are not a new state.
STATE = """(scope) => {
  const kept = ['role', 'tabindex', 'type', 'hidden', 'disabled', 'open', 'aria-hidden', 'aria-live', 'aria-disabled',
                'aria-expanded', 'aria-pressed', 'aria-current'];
  const root = document.querySelector(scope);
  // A picture (an svg, role img) is one element to axe-core: what is drawn inside it is not a state.
  return [...new Set([root, ...root.querySelectorAll('*')].filter((el) => !el.parentElement.closest('svg')).map((el) => {
    const names = el.getAttributeNames().filter((n) => !n.startsWith('data-') && !['style', 'class'].includes(n)).sort();
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    return [el.tagName, [...el.classList].sort().join('.'), names.map((n) => kept.includes(n) ? `${n}=${el.getAttribute(n)}` : n).join(','),
            el.getClientRects().length ? 'shown' : 'unseen', own ? 'text' : ''].join('|');
  }))].sort().join('\\n');
}"""

# Overflow: the page never scrolls sideways; at desktop width no graph is larger than its frame (no box cut off).
OVERFLOW = """([scope, framesFit]) => {
  const out = [];
  const page = document.documentElement.scrollWidth;
  if (page > innerWidth) out.push(`the page is ${page} px wide in a ${innerWidth} px window`);
  if (framesFit) for (const frame of document.querySelector(scope).querySelectorAll('.graph-figure')) {
    if (frame.scrollWidth > frame.clientWidth + 1) out.push(`${frame.closest('[id]').id}: a ${frame.scrollWidth} px graph in a ${frame.clientWidth} px frame`);
  }
  return out;
}"""


class StateChecks:
    """The suite's axe-core and overflow checks on every state a walk reaches (issue 42 item 10), not only at
    its end: check(scope, where) after each step, gate and answer. The overflow check (a few reads) runs every
    time; axe-core (WCAG 2.1 A and AA, on the part of the page that changed) once per state that differs in what
    its rules can see (STATE), so a walk of forty steps costs a few axe runs, not forty."""

    def __init__(self, page, size: str):
        self.page = page
        self.frames_fit = size == "desktop"
        self.audited: set[tuple[str, str]] = set()

    def check(self, scope: str, where) -> None:
        overflow = self.page.evaluate(OVERFLOW, [scope, self.frames_fit])
        assert overflow == [], (where, overflow)
        state = (scope, self.page.evaluate(STATE, scope))
        if state not in self.audited:
            self.audited.add(state)
            found = axe_violations(self.page, within=scope)
            assert found == [], (where, found)
