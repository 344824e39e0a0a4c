"""What the lesson-page tests share: the lesson they open, the two screen sizes, opening a page at a size,
and reading what a page shows (a box's text, whether an element is on screen)."""

from __future__ import annotations

import re

from conftest import WIDTHS

LESSON = "backprop"
LESSONS = ["computational-graphs", "backprop", "gradient-descent-linear-regression"]
SIZES = list(WIDTHS)
# The right predictions of section 04, hand-derived from the lesson spec (the neuron).
SPEC_PREDICTIONS = {"n": 0.8814, "o": 0.7071, "dn": 0.5, "db": 0.5, "dw1": 1.0, "dw2": 0.0}


def open_at(open_page, server, size):
    """A signed-in page at one of SIZES. It returns once the sign-in's answer is in (the cookie is set): the test
    goes on to the page it needs and waits for what it needs there."""
    width, height = WIDTHS[size]
    return open_page(server, width=width, height=height, wait_until="commit")


def lesson(page, server, lesson_id=LESSON, complete=True):
    page.goto(f"{server.origin}/lessons/{lesson_id}", wait_until="commit")
    page.wait_for_selector("main[data-complete='true']" if complete else "main[data-ready='true']", timeout=60_000)


def box_text(page, holder: str, label: str, slot: str) -> str:
    return page.locator(f"#{holder} g.node[data-label='{label}'] .node-{slot}").text_content()


def in_view(page, selector: str) -> bool:
    return page.evaluate(
        """s => { const r = document.querySelector(s).getBoundingClientRect();
                  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }""",
        selector,
    )


def visible_text(page, selector: str) -> str:
    return page.evaluate("s => document.querySelector(s).innerText", selector)


def has_number(text: str, number: str) -> bool:
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", text) is not None


def saved_code(page, lesson_id=LESSON) -> dict:
    return page.evaluate(
        "id => fetch(`/api/progress/${id}`, {credentials: 'same-origin'}).then(r => r.json()).then(p => p.code)",
        lesson_id)

