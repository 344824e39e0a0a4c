"""The path-sum view of "Forward mode and reverse mode" in a real Chromium against the real server, at desktop
(1280 px) and phone (390x844) size: walked path by path by the keyboard alone (Enter on Next step, an arrow key
on the function's radio buttons), its live caption and table following; axe-core finds nothing serious in it,
at every step, and it does not overflow the page.

Expected texts are hand-derived from the lesson's graph y = x·tanh(w·x) at x = 0.5, w = 2 (local derivatives
w, 1 - tanh(1)², x and tanh(1); tests/test_path_sum.py checks the engine's numbers against PyTorch) and the
counts by hand (3 paths, 7 multiplications path by path, 5 edges; 18 paths, 96 and 15 for six inputs).
"""

from __future__ import annotations

import math

import pytest

from chainrule.number_text import format_number
from conftest import axe_violations

pytestmark = pytest.mark.timeout(300)

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
HOLDER = "#path-plot"
SLOPE = 1 - math.tanh(1) ** 2  # do/du at u = w·x = 1


@pytest.fixture(scope="module", params=list(SIZES))
def page(request, browser, lesson_server):
    """One signed-in page per screen size, on the lesson, for the whole file."""
    from conftest import new_page

    width, height = SIZES[request.param]
    context, page, log = new_page(browser, lesson_server, width=width, height=height, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{lesson_server.origin}/lessons/forward-and-reverse-mode", wait_until="commit")
    page.wait_for_selector(f"{HOLDER}[data-step='0']", timeout=60_000)
    yield page
    assert errors == []
    assert log.outside(lesson_server.origin) == []
    context.close()


def sound(page) -> None:
    """Nothing serious for axe in the view, and it fits the page's width."""
    assert axe_violations(page, within=HOLDER) == []
    assert page.evaluate(f"() => document.querySelector('{HOLDER}').scrollWidth "
                         f"<= document.querySelector('{HOLDER}').clientWidth + 1")
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")


def next_by_keyboard(page, step: int) -> str:
    page.focus(f"{HOLDER} button[data-action='next']")
    page.keyboard.press("Enter")
    page.wait_for_selector(f"{HOLDER}[data-step='{step}']")
    return page.locator(f"{HOLDER} .fit-caption").inner_text()


def test_the_plain_graph_path_by_path_by_keyboard(page):
    tally = page.locator(f"{HOLDER} .path-tally")
    assert "3 paths from the inputs to y" in page.locator(f"{HOLDER} .fit-caption").inner_text()
    assert "0 of 7" in tally.inner_text() and "one per edge, 5" in tally.inner_text()
    sound(page)
    first = next_by_keyboard(page, 1)
    assert first.startswith("Path 1 of 3, from x: x → u → o → y.")
    assert f"(3 multiplications): 1 × {format_number(2.0)} × {format_number(SLOPE)} × {format_number(0.5)} = " \
           f"{format_number(2 * SLOPE * 0.5)}." in first
    assert f"dy/du = {format_number(SLOPE * 0.5)} once" in first
    assert page.locator(f"{HOLDER} .path-chain .path-shared").count() == 5  # u, o, y and the two edges between
    sound(page)
    second = next_by_keyboard(page, 2)
    assert second.startswith("Path 2 of 3, from x: x → y.") and "shares none of it" in second
    # x's two paths end here: their sum, and the backward pass's gradient, SLOPE·w·x + tanh(1).
    both = format_number(2 * SLOPE * 0.5 + math.tanh(1))
    assert f"the 2 paths from x is {both}; the backward pass gives dy/dx = {both}." in second
    third = next_by_keyboard(page, 3)
    assert f"the 1 path from w is {format_number(0.5 * SLOPE * 0.5)}" in third
    assert "7 of 7" in tally.inner_text()
    # The last step leaves focus on the controls (Restart), not on the page's body.
    assert page.evaluate("() => document.activeElement.dataset.action") == "reset"
    sound(page)
    # The table a screen reader reads: one row per path, the current one marked, and each input's sums.
    page.locator(f"{HOLDER} .plot-table-view summary").press("Enter")
    rows = page.locator(f"{HOLDER} table.plot-table").nth(0).locator("tbody tr")
    assert rows.count() == 3 and rows.nth(2).get_attribute("aria-current") == "step"
    sums = page.locator(f"{HOLDER} table.plot-table").nth(1).locator("tbody tr").all_inner_texts()
    assert [row.split("\t")[:2] for row in sums] == [["x", "2"], ["w", "1"]]
    sound(page)


def test_six_inputs_by_keyboard(page):
    page.focus("#path-function-plain")
    page.keyboard.press("ArrowDown")  # the radio group's next choice: six inputs
    page.wait_for_selector(f"{HOLDER}[data-function='gather-paths'][data-step='0']")
    tally = page.locator(f"{HOLDER} .path-tally").inner_text()
    assert "0 of 96" in tally and "one per edge, 15" in tally
    assert "18 paths" in page.locator(f"{HOLDER} .fit-caption").inner_text()
    first = next_by_keyboard(page, 1)
    assert first.startswith("Path 1 of 18, from x1: x1 → t1 →") and "dy/dt1 = " in first
    sound(page)
