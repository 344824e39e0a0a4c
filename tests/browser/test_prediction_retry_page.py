"""A wrong prediction or quiz answer is a moment to learn (issue 42, item 12), by keyboard alone, at desktop
(1280 px) and phone (390 px) width, in a real Chromium against the real server: a slip that the lesson folder
names gets its own hint and one more try, without the answer; a right second try says so (and is not a
first-try right); a second wrong one shows the answer as before; a wrong option says why it is wrong. The
hint is announced (a status region that also describes the field) and the focus stays where the learner
goes on; axe-core finds nothing serious in each state.

The slips' numbers and the answers are worked out by hand from the neuron (math.tanh), never read from the
page: the page shows the named hint only when the engine computed the same number from the folder's rule.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from lesson_pages import LESSON, SIZES, has_number, lesson, open_at, visible_text

from chainrule.lessons.loader import DATA_DIR
from conftest import axe_violations, keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)

# The neuron of section 04: n = x1*w1 + x2*w2 + b, o = tanh(n).
X1, W1, X2, W2, B = 2.0, -3.0, 0.0, 1.0, 6.8813735870195432
N = X1 * W1 + X2 * W2 + B
OUT = math.tanh(N)
QUIZ = {q["id"]: q for q in json.loads((DATA_DIR / LESSON / "quiz.json").read_text())["questions"]}
STEPS = {s["key"]: s for s in json.loads((DATA_DIR / LESSON / "lesson.json").read_text())["predict"]["steps"]}

FOCUSED = "() => { const a = document.activeElement; return [a.tagName, a.id, a.className]; }"


def step_to_gate(page) -> str:
    """Press Enter on the focused Next until a prediction's field takes the focus; its key."""
    for _ in range(40):
        if page.evaluate("() => document.activeElement.closest('form.prediction-form') !== null"):
            return page.evaluate("() => document.activeElement.closest('form.prediction-form').dataset.key")
        page.keyboard.press("Enter")
    raise AssertionError(f"no prediction took the focus; the focus is on {page.evaluate(FOCUSED)}")


def type_and_enter(page, text: str) -> None:
    page.keyboard.press("Control+A")
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def no_serious_violation(page, within: str, where: str) -> None:
    found = axe_violations(page, within=within)
    assert not found, (where, json.dumps(found, indent=1))


@pytest.mark.parametrize("size", SIZES)
def test_a_wrong_prediction_and_quiz_answer_get_a_hint_then_one_more_try_by_keyboard(
    open_page, server_factory, tmp_path: Path, size
) -> None:
    server = server_factory(tmp_path)
    context, page, log = open_at(open_page, server, size, bypass_csp=True)
    lesson(page, server)
    section = page.locator("#section-04")
    page.locator("#predict-player button.next").focus()

    # n: the weighted sum without the bias, the slip "left out the bias": its hint, with b from the engine.
    assert step_to_gate(page) == "n"
    type_and_enter(page, f"{X1 * W1 + X2 * W2:g}")
    hint = section.locator("form.prediction-form .prediction-hint")
    hint.locator(".hint").wait_for()
    assert hint.get_attribute("role") == "status"  # announced as it appears
    assert hint.locator(".hint").get_attribute("data-mistake") == "left out the bias"
    assert f"{B:.4f}" in hint.inner_text()
    assert not has_number(visible_text(page, "#section-04"), f"{N:.4f}")  # the answer is still not shown
    assert page.evaluate(FOCUSED)[1] == "prediction-n"  # the focus stays in the field, for the second try
    described = page.get_attribute("#prediction-n", "aria-describedby").split()
    assert hint.get_attribute("id") in described  # read again with the field
    assert "one more try" in section.locator(".prediction-list li[data-key='n']").inner_text()
    assert section.locator("form.prediction-form button[type=submit]").inner_text() == "Submit second try"
    keep_screenshot(page.locator("#section-04"), f"prediction-hint-{size}.png")
    no_serious_violation(page, "#section-04", "prediction hint")
    # The second try, right: said so, not marked as a first-try right, and the step waits for Next.
    type_and_enter(page, f"{N:.4f}")
    feedback = section.locator(".prediction-feedback[data-key='n']")
    feedback.wait_for()
    assert "Right, on your second try." in feedback.inner_text()
    item = section.locator(".prediction-list li[data-key='n']")
    assert "wrong" in item.get_attribute("class") and "right" not in item.get_attribute("class").split()
    assert "prediction-next" in page.evaluate(FOCUSED)[2]

    # o: an answer that matches no named slip gets the prediction's own hint; wrong again, the answer.
    page.keyboard.press("Enter")  # Next: play this step
    assert step_to_gate(page) == "o"
    type_and_enter(page, "0.5")
    hint.locator(".hint").wait_for()
    assert hint.locator(".hint").get_attribute("data-mistake") == ""
    assert hint.locator(".hint").inner_text().strip() == STEPS["o"]["hint"]
    type_and_enter(page, "0.5")
    feedback = section.locator(".prediction-feedback[data-key='o']")
    feedback.wait_for()
    text = feedback.inner_text()
    assert "Not quite." in text and f"{OUT:.4f}" in text and feedback.locator(".reason").inner_text().strip()
    assert "prediction-next" in page.evaluate(FOCUSED)[2]
    no_serious_violation(page, "#section-04", "prediction revealed")

    # The quiz: the numeric slip "forgot the gradient that came back" (b alone), then the right answer.
    form = page.locator("#section-06 form[data-question='product-gradient']")
    given = QUIZ["product-gradient"]["given"]
    form.locator("input").focus()
    type_and_enter(page, f"{given['b']:g}")
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='product-gradient']\").dataset.retry === 'true'", polling=PAGE_POLL_MS)
    assert form.locator(".hint").get_attribute("data-mistake") == "forgot the gradient that came back"
    assert not has_number(form.locator(".feedback").inner_text(), f"{given['b'] * given['upstream']:g}")
    assert "feedback" in page.evaluate(FOCUSED)[2]  # the hint is read from where the focus went
    page.keyboard.press("Shift+Tab")  # Check answer
    page.keyboard.press("Shift+Tab")  # the field
    type_and_enter(page, f"{given['b'] * given['upstream']:g}")
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='product-gradient']\").dataset.correct === 'true'", polling=PAGE_POLL_MS)
    assert form.get_attribute("data-practice") == "true"  # the first answer rated the review card

    # A choice: the wrong option's own explanation, then the right option.
    choice = page.locator("#section-06 form[data-question='addition-node']")
    question = QUIZ["addition-node"]
    choice.locator("input[type=radio]").first.focus()
    page.keyboard.press("Space")  # the first option: "Half of g to each"
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED)[0] == "BUTTON"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='addition-node']\").dataset.retry === 'true'", polling=PAGE_POLL_MS)
    assert choice.locator(".hint").inner_text().strip() == question["why_wrong"][0]
    assert question["options"][question["answer_index"]].rstrip(".") not in choice.locator(".feedback").inner_text()
    page.keyboard.press("Shift+Tab")  # Check answer
    page.keyboard.press("Shift+Tab")  # the chosen option
    page.keyboard.press("ArrowDown")  # the next option: the right one
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='addition-node']\").dataset.correct === 'true'", polling=PAGE_POLL_MS)

    # Wrong twice: the second answer shows the right one, and why the chosen one is wrong.
    order = page.locator("#section-06 form[data-question='reverse-order']")
    question = QUIZ["reverse-order"]
    order.locator("input[type=radio]").first.focus()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='reverse-order']\").dataset.retry === 'true'", polling=PAGE_POLL_MS)
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")  # the same option again
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='reverse-order']\").dataset.retry === 'false'", polling=PAGE_POLL_MS)
    shown = order.locator(".feedback").inner_text()
    assert "Not quite." in shown and question["options"][question["answer_index"]].rstrip(".") in shown
    assert question["why_wrong"][0] in shown and order.locator(".reason").inner_text().strip()
    keep_screenshot(page.locator("#section-06"), f"quiz-hint-and-reveal-{size}.png")
    no_serious_violation(page, "#section-06", "quiz hints and reveals")
    sideways = page.evaluate("document.documentElement.scrollWidth")
    assert sideways <= page.viewport_size["width"], sideways
    assert log.page_errors == [] and log.outside(server.origin) == []
