"""Driven plots in a real Chromium against the real server, at desktop (1280 px) and phone (390x844) size: each
of the three lessons' driven plot is driven by the keyboard alone (arrow keys, Home, End on a real
<input type=range>), and its plot, live caption and table follow; axe-core finds nothing serious in it and it
does not overflow the page.

Expected texts are the slider stops of the lessons' driven.json (what a learner chooses) and facts known
without the server: 31 rows for 30 descent steps and the start; a network whose training was recorded every
4 of 80 steps has 21 rows. The numbers themselves are checked against NumPy in tests/test_driven_plots.py.
"""

from __future__ import annotations

import pytest

from conftest import axe_violations
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(scope="module", params=list(SIZES))
def signed_in(request, browser, lesson_server):
    """One signed-in browser context per screen size for the whole file, and one page in it that each test loads
    its lesson in (a new page would cost Chromium a renderer of its own): (page, the page's script errors)."""
    from conftest import new_page

    width, height = SIZES[request.param]
    context, page, log = new_page(browser, lesson_server, width=width, height=height, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, errors
    assert log.outside(lesson_server.origin) == []
    context.close()


def open_driven(signed_in, server, lesson: str, name: str):
    """The size's page with `lesson` loaded anew and its driven plot `name` drawn; (page, the script errors the
    page raises from now on: the list of the tests before is emptied, each test having checked it)."""
    page, errors = signed_in
    errors.clear()
    page.goto(f"{server.origin}/lessons/{lesson}", wait_until="commit")
    page.wait_for_selector(f"#driven-{name}[data-answers='1']", timeout=60_000)
    return page, errors


def answers(page, name: str) -> int:
    return int(page.get_attribute(f"#driven-{name}", "data-answers") or "0")


def press(page, name: str, control: str, key: str) -> None:
    """Press `key` on the control's slider (focused as Tab would leave it) and wait for the server's new plot."""
    before = answers(page, name)
    page.focus(f"#driven-{name}-{control}")
    page.keyboard.press(key)
    page.wait_for_function(f"() => Number(document.querySelector('#driven-{name}').dataset.answers) > {before}", polling=PAGE_POLL_MS)


def sound(page, name: str) -> None:
    """Nothing serious for axe in the plot, and the plot fits the page's width."""
    assert axe_violations(page, within=f"#driven-{name}") == []
    assert page.evaluate(f"() => document.querySelector('#driven-{name}').scrollWidth "
                         f"<= document.querySelector('#driven-{name}').clientWidth + 1")
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")


def rows(page, name: str, table: int = 0) -> int:
    return page.locator(f"#driven-{name} table.plot-table").nth(table).locator("tbody tr").count()


def test_the_learning_rate_and_the_start_by_keyboard(signed_in, lesson_server):
    page, errors = open_driven(signed_in, lesson_server, "gradient-descent-linear-regression", "descent")
    caption = page.locator("#driven-descent .driven-caption")
    assert "learning rate 0.05, from w = 0, b = 0" in caption.inner_text()
    assert rows(page, "descent") == 31
    assert page.locator("#driven-descent .driven-contour .descent-path").count() == 1
    press(page, "descent", "lr", "ArrowRight")  # 0.05 -> 0.08, the next stop
    assert page.get_attribute("#driven-descent-lr", "aria-valuetext") == "0.08"
    assert "learning rate 0.08" in caption.inner_text()
    press(page, "descent", "lr", "End")  # 0.16: past 2 / 13.4, the largest curvature of this loss: it diverges
    assert "learning rate 0.16" in caption.inner_text()
    press(page, "descent", "w", "ArrowLeft")  # the start moves: w = 0 -> -1
    assert "from w = -1, b = 0" in caption.inner_text()
    assert page.locator("#driven-descent .driven-value").first.inner_text() == "0.16"
    sound(page, "descent")
    assert errors == []


def test_the_network_redrawn_as_it_trains_by_keyboard(signed_in, lesson_server):
    page, errors = open_driven(signed_in, lesson_server, "a-network-learns", "moons")
    page.wait_for_selector("#driven-moons[data-trained='true']")
    caption = page.locator("#driven-moons .driven-caption")
    assert caption.inner_text().startswith("8 neurons per hidden layer, learning rate 1, seed 1: after 80 steps")
    assert rows(page, "moons") == 21
    press(page, "moons", "width", "ArrowLeft")  # 8 -> 6
    page.wait_for_selector("#driven-moons[data-trained='true']")
    assert caption.inner_text().startswith("6 neurons per hidden layer")
    press(page, "moons", "seed", "Home")
    page.wait_for_selector("#driven-moons[data-trained='true']")
    assert "seed 0:" in caption.inner_text()
    assert rows(page, "moons", 1) == 17  # the grid's 16 cells have 17 rows of points
    sound(page, "moons")
    assert errors == []


TANGENT_ENDS = """() => { const l = document.querySelector('#driven-nudge .nudge-curve line.nudge-tangent');
    return ['x1', 'y1', 'x2', 'y2'].map((a) => l.getAttribute(a)); }"""
ERROR_POINTS = """() => document.querySelector('#driven-nudge .nudge-errors polyline.fit-loss')
    .getAttribute('points').trim().split(/\\s+/).length"""


def test_the_nudge_on_a_log_slider_by_keyboard(signed_in, lesson_server):
    page, errors = open_driven(signed_in, lesson_server, "slopes-and-the-chain-rule", "nudge")
    caption = page.locator("#driven-nudge .driven-caption")
    assert "With h = 0.001" in caption.inner_text()
    assert "the tangent has slope 12." in caption.inner_text()  # f = (2x + 1)^2: f'(1) = 4 (2 + 1) = 12
    assert rows(page, "nudge") == 16  # h = 1, 0.1, ..., 1e-15
    # The picture: the tangent line on the curve, and the error curve over every h (16 and the chosen one).
    assert page.locator("#driven-nudge .nudge-curve line.nudge-tangent").count() == 1
    assert page.evaluate(ERROR_POINTS) == 17
    tangent = page.evaluate(TANGENT_ENDS)
    press(page, "nudge", "h", "Home")
    assert "With h = 1e-15" in caption.inner_text()
    press(page, "nudge", "at", "ArrowRight")  # x = 1 -> 1.5: f'(1.5) = 4 (3 + 1) = 16
    assert "the tangent has slope 16." in caption.inner_text()
    assert page.evaluate(TANGENT_ENDS) != tangent  # the tangent is drawn anew at the new point
    sound(page, "nudge")
    assert errors == []
