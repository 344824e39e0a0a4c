"""Section 03's explorable graph and nudge check, at desktop (1280 px) and phone (390 px) width, in a real
Chromium against the real server: new inputs give the engine's numbers, a nudge moves the output by about
gradient times h, and a problem is said once at its field with no stale number looking current.

Expected numbers are hand-derived (a = 2, b = -3, c = 10, f = -2), never read from the page.
"""

from __future__ import annotations

import pytest
from graph_checks import overprints
from lesson_pages import SIZES, box_text, lesson

from conftest import WIDTHS, keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------- explore and nudge


@pytest.mark.parametrize("size", SIZES)
def test_explorable_graph_and_nudge_check(page_per_size, lesson_server, size) -> None:
    context, page, log = page_per_size(lesson_server, size)
    lesson(page, lesson_server)
    width = WIDTHS[size][0]
    # The lesson's numbers first (spec: L = -8, dL/da = 6).
    assert box_text(page, "explore", "L", "value") == "-8"
    assert box_text(page, "explore", "a", "grad") == "6"
    # a = 3: e = a*b = -9, d = e + c = 1, L = d*f = -2; dL/da = b*f = 6, dL/db = a*f = -6,
    # dL/dc = f = -2, dL/df = d = 1, dL/de = dL/dd = f = -2 (hand derivation).
    page.locator("#explore-a").fill("3")
    page.wait_for_function("() => document.querySelector(\"#explore g.node[data-label='L'] .node-value\").textContent === '-2'", polling=PAGE_POLL_MS)
    values = {"a": "3", "b": "-3", "c": "10", "f": "-2", "e": "-9", "d": "1", "L": "-2"}
    grads = {"a": "6", "b": "-6", "c": "-2", "f": "1", "e": "-2", "d": "-2", "L": "1"}
    for label in values:
        assert box_text(page, "explore", label, "value") == values[label]
        assert box_text(page, "explore", label, "grad") == grads[label]
    assert page.locator("#explore svg").bounding_box()["width"] <= width
    # Nudge b by 0.01: L = (3*b + 10)*(-2) moves by -6 * 0.01 = -0.06, so change / h = -6 = dL/db.
    page.locator("#nudge-input").select_option("b")
    page.locator("#nudge-h").fill("0.01")
    page.locator(".nudge-form button[type=submit]").click()
    result = page.locator(".nudge-result table")
    result.wait_for()
    cell = lambda row: result.locator(f"tr[data-row='{row}'] td").text_content()  # noqa: E731
    assert cell("before") == "-2" and cell("after") == "-2.06" and cell("change") == "-0.06"
    assert cell("ratio") == "-6" and cell("grad") == "-6"
    keep_screenshot(page.locator("#explore"), f"lesson-explore-{size}.png")
    # Not a number: the form says how to type one and sends nothing.
    page.locator("#explore-c").fill("ten")
    problem = page.locator(".explore > .field-error")
    problem.wait_for()
    assert problem.text_content().startswith("c: Type a number")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert log.outside(lesson_server.origin) == [] and log.page_errors == []


# ---------------------------------------------------------------- problems at their field, never stale numbers


@pytest.mark.parametrize("size", SIZES)
def test_explore_problems_are_said_once_at_their_field_and_no_stale_number_looks_current(page_per_size, lesson_server, size) -> None:
    context, page, log = page_per_size(lesson_server, size)
    lesson(page, lesson_server)
    status = page.locator(".explore-status")
    # a = 1e200 is out of the explorable range: said under the inputs, the graph marked as not run.
    page.locator("#explore-a").fill("1e200")
    page.wait_for_selector("#explore[data-stale='true']")
    assert page.locator("#explore-problem").inner_text().startswith("a: 1e200 is too large: type a number from -1000 to 1000")
    assert page.get_attribute("#explore-a", "aria-invalid") is not None
    assert "not for what is typed now" in status.inner_text() and "a = 2" in status.inner_text()
    assert "for your inputs" not in status.inner_text()
    # Nudging meanwhile: the same one problem, no banner, no table of numbers that were not run.
    for h in ("0", "1e-12", "0"):
        page.locator("#nudge-h").fill(h)
        page.locator(".nudge-form button[type=submit]").click()
        page.wait_for_function("() => !document.querySelector('#explore').hasAttribute('aria-busy')", polling=PAGE_POLL_MS)
    assert page.locator("#messages .message").count() == 0
    assert page.locator(".nudge-result table").count() == 0
    # A good a, a bad h: the problem moves to h, said once.
    page.locator("#explore-a").fill("3")
    page.wait_for_selector("#explore[data-stale='false']")
    assert page.locator("#explore-problem").inner_text() == ""
    assert "-2" in status.inner_text() and "for your inputs" in status.inner_text()  # a = 3: L = (3·-3 + 10)·-2 = -2
    page.locator("#nudge-h").fill("1e-12")
    page.locator(".nudge-form button[type=submit]").click()
    page.wait_for_selector("#explore[data-stale='true']")
    assert page.locator("#nudge-problem").inner_text().startswith("h must be a number with 1e-06 <= |h| <= 1")
    assert page.locator("#messages .message").count() == 0
    page.locator("#nudge-h").fill("0.01")
    page.locator(".nudge-form button[type=submit]").click()
    page.locator(".nudge-result table").wait_for()
    assert page.locator("#nudge-problem").inner_text() == "" and page.get_attribute("#explore", "data-stale") == "false"
    # Issue 32 item 2: long numbers widen their boxes; none prints over a label or out of its box.
    narrow = page.locator("#explore g.node[data-label='a'] rect").bounding_box()["width"]
    page.locator("#explore-a").fill("-999.9876")
    page.wait_for_function("() => document.querySelector(\"#explore g.node[data-label='a'] .node-value\").textContent === '-999.9876'", polling=PAGE_POLL_MS)
    assert page.locator("#explore g.node[data-label='e'] .node-value").text_content() == "2999.9628"  # -999.9876 * -3
    assert page.locator("#explore g.node[data-label='a'] rect").bounding_box()["width"] > narrow
    assert overprints(page, "#explore") == []
    assert not log.page_errors
