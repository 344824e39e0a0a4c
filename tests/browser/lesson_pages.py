"""What the lesson-page tests share: the lesson they open, the two screen sizes, opening a page at a size,
reading what a page shows (a box's text, whether an element is on screen), and working an exercise as a
learner does (choosing its language, pasting code into its editor, running its tests)."""

from __future__ import annotations

import re

from conftest import WIDTHS
from polling import PAGE_POLL_MS

LESSON = "backprop"
LESSONS = ["computational-graphs", "backprop", "gradient-descent-linear-regression"]
SIZES = list(WIDTHS)
LANGUAGES = ("python", "javascript", "typescript")  # the languages an exercise is done in
# The right predictions of section 04, hand-derived from the lesson spec (the neuron).
SPEC_PREDICTIONS = {"n": 0.8814, "o": 0.7071, "dn": 0.5, "db": 0.5, "dw1": 1.0, "dw2": 0.0}


def open_at(open_page, server, size, **options):
    """A signed-in page at one of SIZES (options: new_page's, bypass_csp=True for axe-core). It returns once the
    sign-in's answer is in (the cookie is set): the test goes on to the page it needs and waits for what it needs
    there."""
    width, height = WIDTHS[size]
    return open_page(server, width=width, height=height, wait_until="commit", **options)


def at_each_width(page, check) -> None:
    """Run `check` on what the page shows now at each width in SIZES (desktop first), ending at desktop: a run
    graded once is read at both widths, instead of grading it again on a second page."""
    for size in SIZES:
        width, height = WIDTHS[size]
        page.set_viewport_size({"width": width, "height": height})
        check()
    width, height = WIDTHS[SIZES[0]]
    page.set_viewport_size({"width": width, "height": height})


# Where a real mouse click on the element `selector` picks lands, found as Playwright's click finds it (scrolled into
# view if it is not, enabled, not covered by another element), without the two animation frames Playwright waits
# for the element to stand still: a walk through every step clicks hundreds of times, and what it checks after
# each click shows that the click took.
CLICK_POINT = """(selector) => {
  const el = document.querySelector(selector);
  if (!el) return {problem: `nothing matches ${selector}`};
  if (el.disabled) return {disabled: true};
  let r = el.getBoundingClientRect();
  if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {
    el.scrollIntoView({block: 'center', inline: 'nearest'});
    r = el.getBoundingClientRect();
  }
  const x = r.left + r.width / 2, y = r.top + r.height / 2, hit = document.elementFromPoint(x, y);
  if (!hit || !el.contains(hit)) return {problem: `${selector} is covered by ${hit ? hit.outerHTML.slice(0, 120) : 'nothing'}`};
  return {point: [x, y]};
}"""
MOST_CLICKS = 500  # a bound for a Next that never ends: a player or plot here has at most a hundred steps


def click(page, selector: str) -> None:
    """Click the element `selector` picks with the real mouse (CLICK_POINT); it must be enabled."""
    found = page.evaluate(CLICK_POINT, selector)
    assert "point" in found, (selector, found)
    page.mouse.click(*found["point"])


def click_until_disabled(page, selector: str) -> int:
    """Click the element `selector` picks (a player's or a plot's Next) with the real mouse until it is disabled;
    the number of clicks."""
    for clicks in range(MOST_CLICKS):
        found = page.evaluate(CLICK_POINT, selector)
        if found.get("disabled"):
            return clicks
        assert "point" in found, (selector, found)
        page.mouse.click(*found["point"])
    raise AssertionError(f"{selector} was still enabled after {MOST_CLICKS} clicks")


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



def reference(exercise: str, language: str) -> str:
    from chainrule.grading import reference_source

    return reference_source(exercise, language)


def set_editor_text(page, exercise: str, text: str) -> None:
    """Put `text` into the exercise's CodeMirror editor the way a learner pastes it (select all, paste)."""
    content = page.locator(f"[data-editor='{exercise}'] .cm-content")
    content.click()
    page.keyboard.press("Control+A")
    content.evaluate(
        """(node, text) => {
            const data = new DataTransfer();
            data.setData('text/plain', text);
            node.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
        }""",
        text,
    )
    assert page.evaluate("id => window.chainruleEditors[id].getText()", exercise) == text


def run_tests(page, exercise: str) -> dict:
    """Run the exercise's tests by its button; the server's answer (a result, or in class mode a queued job)."""
    block = page.locator(f"article[data-exercise='{exercise}']")
    with page.expect_response(lambda r: r.url.endswith("/api/grade"), timeout=120_000) as response:
        block.locator("button.run-tests").click()
    assert response.value.status in (200, 202), response.value.text()  # 202: queued for a worker (class mode)
    page.wait_for_function(
        "id => !document.querySelector(`article[data-exercise='${id}'] .results`).hasAttribute('aria-busy')", arg=exercise, polling=PAGE_POLL_MS
    )
    return response.value.json()


def choose_language(page, exercise: str, language: str) -> None:
    page.locator(f"#lang-{exercise}-{language}").check()
    page.wait_for_function(
        "([id, lang]) => document.querySelector(`article[data-exercise='${id}']`).dataset.language === lang",
        arg=[exercise, language], polling=PAGE_POLL_MS,
    )
