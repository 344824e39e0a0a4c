"""axe-core (vendored, WCAG 2.1 A and AA rules) on every page at desktop and phone width: no serious
or critical violation. The lesson page is audited once everything is on it, again with the feedback of
a prediction and a quiz answer shown, and the review page with a question due."""

from __future__ import annotations

import json

import pytest

from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)

LESSON = "backprop"


@pytest.fixture(scope="module")
def browser(desktop_chromium):
    """This audit runs in the full `chromium`, the browser a learner opens (the other browser tests drive its
    headless shell: tests/conftest.py)."""
    return desktop_chromium


@pytest.mark.parametrize("size", WIDTHS, ids=list(WIDTHS))
def test_no_serious_or_critical_violation_on_any_page(browser, due_review_server, size) -> None:
    from conftest import new_page

    width, height = WIDTHS[size]
    context, page, log = new_page(browser, due_review_server, width=width, height=height, bypass_csp=True,
                                  wait_until="commit")
    try:
        found = {}
        page.goto(due_review_server.origin + "/")
        page.wait_for_selector("main[data-ready='true']")
        found["path"] = axe_violations(page)
        sideways = {"path": page.evaluate("document.documentElement.scrollWidth")}

        page.goto(f"{due_review_server.origin}/lessons/{LESSON}")
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        found["lesson"] = axe_violations(page)
        # With feedback on the page: a wrong prediction's hint, a wrong quiz answer's hint, the graph mid-way
        # (tests/browser/test_prediction_retry_page.py audits the reveals after the second try).
        predict = page.locator("#predict-player")
        while page.locator("form.prediction-form").count() == 0:
            predict.locator("button.next").click()
        page.locator("form.prediction-form input").fill("0.5")
        page.locator("form.prediction-form input").press("Enter")
        page.locator(".prediction-hint .hint").wait_for()  # wrong: its hint and one more try
        form = page.locator("#section-06 form[data-question='product-gradient']")
        form.locator("input").fill("5")
        form.locator("input").press("Enter")
        page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='product-gradient']\").dataset.correct !== undefined", polling=PAGE_POLL_MS)
        page.locator("#see-it-work-player input[type=range]").focus()
        page.keyboard.press("End")
        found["lesson with feedback"] = axe_violations(page)

        page.goto(due_review_server.origin + "/review")
        page.wait_for_selector("main[data-ready='true']")
        assert page.get_attribute("main", "data-due") == "1"
        found["review"] = axe_violations(page)
        sideways["review"] = page.evaluate("document.documentElement.scrollWidth")
        assert all(scroll <= width for scroll in sideways.values()), sideways  # no sideways scrolling
        keep_screenshot(page, f"axe-review-{size}.png", full_page=True)
        problems = {where: violations for where, violations in found.items() if violations}
        assert not problems, json.dumps(problems, indent=1)
        assert log.outside(due_review_server.origin) == []
    finally:
        context.close()
