"""The review page in real Chromium, at 1280 and 390 px: a numeric question comes back with fresh
numbers (not the lesson's), keeps them across a reload and an undo, is checked against the numbers
shown (expected answers by PyTorch), and the due date is written in the page's one format."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from chainrule.lessons import quiz_question
from conftest import answered_days_ago, keep_screenshot
from polling import PAGE_POLL_MS

torch = pytest.importorskip("torch")

LESSON = "backprop"
NUMBER = r"(-?\d+(?:\.\d+)?)"


def tanh_key(prompt: str) -> float:
    t, upstream = (float(x) for x in re.search(
        rf"t = {NUMBER}\. The gradient that comes back to t is {NUMBER}\.", prompt).groups())
    x = torch.tensor(math.atanh(t), dtype=torch.float64, requires_grad=True)
    (torch.tanh(x) * upstream).backward()
    return x.grad.item()


@pytest.mark.parametrize("width", [1280, 390])
def test_review_page_asks_fresh_numbers(open_page, server_factory, tmp_path: Path,
                                        width: int) -> None:
    answered_days_ago(tmp_path, 400, (LESSON, "tanh-gradient", "0.49", False), (LESSON, "addition-node", "1", False))
    server = server_factory(tmp_path)
    context, page, log = open_page(server, width=width, wait_until="commit")
    page.goto(server.origin + "/review")
    page.wait_for_selector("main[data-ready='true']")
    assert page.get_attribute("main", "data-due") == "2"
    form = page.locator("#review-list form[data-question='tanh-gradient']")
    prompt = form.locator(".question-prompt").text_content()
    assert prompt != quiz_question(LESSON, "tanh-gradient")["prompt"]  # not the lesson's numbers
    page.reload()
    page.wait_for_selector("main[data-ready='true']")
    assert form.locator(".question-prompt").text_content() == prompt  # a reload keeps them

    # A wrong choice first: the right option is quoted, one full stop, no capital after "is".
    choice = page.locator("#review-list form[data-question='addition-node']")
    choice.locator("label", has_text="Half of g").click()
    choice.locator("button[type=submit]").click()
    page.wait_for_function("() => document.querySelector(\"#review-list form[data-question='addition-node']\").dataset.correct !== undefined", polling=PAGE_POLL_MS)
    feedback = choice.locator(".feedback").text_content()
    assert "The right answer: \u201cg to each of them, unchanged\u201d." in feedback
    assert ".." not in feedback and "answer is G" not in feedback

    key = tanh_key(prompt)
    form.locator("input").fill(f"{key:.4f}")
    form.locator("input").press("Enter")
    page.wait_for_function("() => document.querySelector(\"#review-list form[data-question='tanh-gradient']\").dataset.correct !== undefined", polling=PAGE_POLL_MS)
    assert form.get_attribute("data-correct") == "true", form.text_content()
    note = form.locator(".review-note").text_content()
    # The page's one date format: weekday, day, month and a time.
    assert re.search(r"(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)", note), note
    assert re.search(r"\d{1,2}:\d{2}", note), note
    keep_screenshot(page, f"review-fresh-{width}.png", full_page=True)

    # Undo puts the card back as it was: the same review, so the same numbers.
    page.locator("#undo-review").click()
    page.wait_for_function("() => document.querySelector('#undo-status').textContent.startsWith('Undone')", polling=PAGE_POLL_MS)
    status = page.locator("#undo-status").text_content()
    assert re.search(r"\d{1,2}:\d{2}", status), status
    page.wait_for_selector("#review-list form[data-question='tanh-gradient']:not([data-correct])")
    assert page.locator("#review-list form[data-question='tanh-gradient'] .question-prompt").text_content() == prompt
    width_used = page.evaluate("() => document.documentElement.scrollWidth")
    assert width_used <= width, width_used
    assert log.page_errors == [] and log.outside(server.origin) == []
    context.close()
