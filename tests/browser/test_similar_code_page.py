"""Similar code on the teacher's page, in Chromium against a real `chainrule serve` (SQLite): Kay and Kim hand
in the same solution with every name changed (Kim's with a comment that looks like HTML), Rex one of his own;
the teacher asks for the exercise with the keyboard alone, gets the one pair with the two files side by side as
text, and goes from a side to that learner's runs; axe-core finds nothing serious at 1280 and 390 px, and the
pair does not make the page scroll sideways on a phone."""

from __future__ import annotations

import pytest
from class_pages import joined_and_graded, teacher_page

from class_process import ClassServer
from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS
from similar_code import COPIES, EXERCISE, SOLUTIONS

TRAP = "# </code></pre><img src=x onerror=\"document.title='owned'\">\n"
HANDED_IN = {"Kay": SOLUTIONS["kahn"], "Kim": TRAP + COPIES["kahn-renamed"], "Rex": SOLUTIONS["recursive"]}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = ClassServer.start(tmp_path_factory.mktemp("similar-code"), None, class_name="Similar code")
    try:
        for name, source in HANDED_IN.items():
            assert joined_and_graded(server, name, EXERCISE, source)["status"] == "pass"
        yield server
    finally:
        server.stop()


def test_the_teacher_finds_the_copied_pair_by_keyboard_and_reads_both_files(browser, served):
    with teacher_page(browser, served) as page:
        page.wait_for_selector(f"#similar-exercise option[value='{EXERCISE}']", state="attached")
        page.locator("#similar-exercise").focus()
        page.locator("#similar-exercise").select_option(EXERCISE)
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Find similar code"
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.activeElement && document.activeElement.id === 'similar-state'", polling=PAGE_POLL_MS)
        assert page.locator("#similar-state").text_content().startswith("1 pair of learners with code at least 60 % alike")
        pair = page.locator("[data-pair='Kay and Kim']")
        assert page.locator("[data-pair]").count() == 1 and pair.locator("h3").text_content().endswith("100 % similar")
        assert pair.locator("[data-side='Kim'] pre").text_content() == HANDED_IN["Kim"]  # as text, not HTML
        assert pair.locator("[data-side='Kay'] pre").text_content() == HANDED_IN["Kay"]
        assert page.title() != "owned" and pair.locator("img").count() == 0
        left, right = (pair.locator(f"[data-side='{name}']").bounding_box() for name in ("Kay", "Kim"))
        assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 1  # side by side
        page.keyboard.press("Tab")  # from the result: the first side's way to the learner's runs
        assert page.evaluate("document.activeElement.textContent") == "Open Kay's runs"
        page.keyboard.press("Enter")
        page.wait_for_selector("#feedback-runs article[data-run]")
        assert page.evaluate("document.activeElement.id") == "feedback-learner"
        assert HANDED_IN["Kay"].splitlines()[-1].strip() in page.locator("#feedback-runs").text_content()
        page.locator("#similar-title").scroll_into_view_if_needed()
        keep_screenshot(page, "similar-code-1280.png")
        assert axe_violations(page, within="#class-similar") == []

        page.set_viewport_size({"width": WIDTHS["phone"][0], "height": WIDTHS["phone"][1]})
        page.wait_for_function("() => document.documentElement.scrollWidth <= window.innerWidth", polling=PAGE_POLL_MS)
        top, below = (pair.locator(f"[data-side='{name}']").bounding_box() for name in ("Kay", "Kim"))
        assert top["y"] + top["height"] <= below["y"]  # one above the other
        assert axe_violations(page, within="#class-similar") == []
        pair.scroll_into_view_if_needed()
        keep_screenshot(page, "similar-code-390.png")
