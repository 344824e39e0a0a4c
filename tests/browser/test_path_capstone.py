"""The capstone, "Build the engine and train it", taken end to end in a real Chromium at desktop width: its graph,
its predictions, its five steps (each step's editor filled with the learner's own passing code of the step
before as soon as that step passes, in the same language), its quiz, explain-it-back and recap, then axe-core,
no sideways scrolling and a picture at 1280 and at 390 px on the finished lesson.

Predictions and quiz answers are worked out by hand (path_walk.py), never read back from the page; the steps are pasted
from the reference solutions and graded through the page (the first two in Python, so that the carried code can
be seen; then JavaScript, TypeScript, and Python again)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from keyboard_walk import assert_carried
from lesson_pages import choose_language, reference, run_tests, set_editor_text
from path_walk import CAPSTONE, CAPSTONE_PREDICTIONS, answer_quiz, make_predictions

from conftest import WIDTHS, axe_violations, new_page

pytestmark = pytest.mark.timeout(900)

STEPS = [("engine-value", "python"), ("engine-ops", "python"), ("engine-backward", "javascript"),
         ("engine-network", "typescript"), ("engine-training", "python")]
# o = tanh(1.5 × -0.8 + -0.5 × 0.6 + 0.4) = tanh(-1.1)
OUTPUT = f"{math.tanh(-1.1):.4f}"


def test_the_capstone_end_to_end(browser, server_factory, tmp_path: Path, screenshots_dir: Path) -> None:
    server = server_factory(tmp_path / "data")
    width, height = WIDTHS["desktop"]
    context, page, log = new_page(browser, server, width=width, height=height, bypass_csp=True, wait_until="commit")
    try:
        page.goto(f"{server.origin}/lessons/{CAPSTONE}")
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert page.locator("#messages .message").count() == 0
        assert page.locator("section.lesson-section").count() == 8
        note = page.locator("#assumes-note")  # opened first: it says what it builds on
        assert note.locator("a").all_text_contents()[:-1] == [
            "Backpropagation: the chain rule on a graph", "A network learns: two moons"]

        player = page.locator("#see-it-work-player")
        player.locator("input[type=range]").focus()
        page.keyboard.press("End")
        assert player.locator("button.next").is_disabled()
        assert player.locator("g.node[data-label='o'] .node-value").text_content() == OUTPUT

        make_predictions(page, CAPSTONE_PREDICTIONS)
        for number, (exercise, language) in enumerate(STEPS):
            block = page.locator(f"article[data-exercise='{exercise}']")
            choose_language(page, exercise, language)
            if number == 1:  # step 1 passed in Python: step 2 opens with that very code, its marker renamed
                assert_carried(page, "engine-value", exercise, "python")
            set_editor_text(page, exercise, reference(exercise, language))
            run_tests(page, exercise)
            assert block.locator(".results").get_attribute("data-status") == "pass", block.text_content()
        download = page.locator("article[data-exercise='engine-training'] a.download-code")
        assert download.is_visible()
        assert download.get_attribute("href") == "/api/exercises/engine-training/passing-code?language=python"

        answer_quiz(page, CAPSTONE)
        page.locator("#explanation-text").fill("Each Value sends its gradient back to its inputs, added up.")
        with page.expect_response(lambda r: r.url.endswith("/explanation") and r.request.method == "PUT") as saved:
            page.locator("#section-07 button[type=submit]").click()
        assert saved.value.status == 200
        assert page.locator("#section-08 .next-lesson a").count() == 0  # the last lesson of the path
        page.wait_for_selector("main[data-finished='true']")

        for size in ("phone", "desktop"):
            width, height = WIDTHS[size]
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], size
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
            page.locator("#section-05").screenshot(path=str(screenshots_dir / f"lesson-{CAPSTONE}-05-{size}.png"))
        assert log.outside(server.origin) == [] and log.page_errors == []
    finally:
        context.close()
