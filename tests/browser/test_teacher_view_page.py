"""The teacher's page in Chromium while a class works (issue 29): a teacher (New York time, a touch screen) and
two learners in separate browser contexts against a real `chainrule serve`. Without a reload the grid shows
Ada's hint (a mark on the cell) and Bea's failing run as "tried", titles instead of ids, times in the
teacher's zone; Ada's explanation (HTML-looking text) is shown as text beside the key idea she ticked; at
390 px the grid scrolls sideways with the names kept and a tapped heading names its column; axe-core finds
nothing serious at 1280 and 390 px; a learner who opens /teacher gets a page saying it is for teachers."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from class_pages import EXERCISE, PASSWORD, submit_form
from lesson_pages import run_tests, set_editor_text

from chainrule import lessons
from class_process import ClassServer
from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS

ZONE = "America/New_York"
WRITTEN = "<img src=x onerror=\"document.title='owned'\"> The sweep starts at the output with 1."


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = ClassServer.start(tmp_path_factory.mktemp("teacher-view"), None, class_name="Teacher view")
    try:
        yield server
    finally:
        server.stop()


def learner(browser, server, name: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(server.invite)
    submit_form(page, {"name": name, "password": PASSWORD})
    page.goto(server.base + "/lessons/backprop")
    page.wait_for_selector(f"[data-editor='{EXERCISE}'] .cm-content")
    return context, page


def test_the_teacher_watches_two_learners_work(browser, served):
    teacher = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True, timezone_id=ZONE,
                                  locale="en-GB", has_touch=True)
    teacher.set_default_timeout(60_000)
    page = teacher.new_page()
    page.goto(served.teacher_link)
    submit_form(page, {"password": PASSWORD})
    assert page.url == served.base + "/teacher"
    ada, ada_page = learner(browser, served, "Ada", 1280, 900)
    bea, bea_page = learner(browser, served, "Bea", 390, 844)
    try:
        page.wait_for_selector("tr[data-learner-row='Bea']")  # both joined: the page refreshed by itself
        drawn = int(page.get_attribute("main", "data-refreshes"))
        # Ada opens the first hint and explains the lesson, ticking one key idea; Bea's file does not load.
        ada_page.locator(f"article[data-exercise='{EXERCISE}'] button.show-hint").click()
        ada_page.wait_for_selector(f"article[data-exercise='{EXERCISE}'] .hints li")
        ada_page.fill("#explanation-text", WRITTEN)
        ada_page.locator(".explain-form button[type=submit]").click()
        ada_page.locator("#idea-seed-one").check()
        ada_page.wait_for_function("() => document.querySelector('.explain-form .status').textContent === 'Ticks saved.'", polling=PAGE_POLL_MS)
        set_editor_text(bea_page, EXERCISE, "def neuron_grads(:\n")
        run_tests(bea_page, EXERCISE)

        # No reload: the page asks with its ETag and redraws when the overview changed.
        title = lessons.lesson_data("backprop")["exercises"][0]["title"]
        page.wait_for_function(
            "title => [...document.querySelectorAll(\"tr[data-learner-row='Bea'] [role=img]\")]"
            ".some((n) => n.getAttribute('aria-label') === `${title}: tried, not passed yet`)", arg=title, polling=PAGE_POLL_MS)
        page.wait_for_function(
            "() => document.querySelector(\"tr[data-learner-row='Ada'] td[data-exercise='neuron-grads'] .cell\").dataset.mark === 'H'", polling=PAGE_POLL_MS)
        assert int(page.get_attribute("main", "data-refreshes")) > drawn
        ada_cell = page.locator(f"tr[data-learner-row='Ada'] td[data-exercise='{EXERCISE}'] .cell")
        assert ada_cell.get_attribute("aria-label") == f"{title}: not started; 1 hint opened"  # no code yet
        assert page.locator(f"tr[data-exercise='{EXERCISE}'] td[data-label='Exercise']").text_content() == title
        # Bea's square says "tried" once her file is kept; her run's diagnosis comes when the run is graded
        # (later on a busy machine), with a refresh of its own.
        page.wait_for_function("id => document.querySelector(`tr[data-exercise='${id}']`).textContent"
                               ".includes('error: SyntaxError')", arg=EXERCISE, polling=PAGE_POLL_MS)

        # Times in the teacher's own zone, labelled.
        assert f"Last active (your time, {ZONE})" in page.locator("table.class-grid thead").text_content()
        last = page.locator("tr[data-learner-row='Bea'] td[data-last-active]")
        local = datetime.fromisoformat(last.get_attribute("data-last-active")).astimezone(ZoneInfo(ZONE))
        assert local.strftime("%H:%M") in last.text_content()

        # Ada's words side by side with Bea's (none), as text: no element made of them.
        page.select_option("#explanations-lesson", "backprop")
        card = page.locator("article.explanation-card[data-explanation='Ada']")
        card.locator(".explanation-text").wait_for()
        assert card.locator(".explanation-text").text_content() == WRITTEN
        assert card.locator("img").count() == 0 and page.title() != "owned"
        seed = lessons.lesson_data("backprop")["explain"]["key_ideas"][0]["text"]
        assert card.locator(".ticked-ideas li").all_text_contents() == [seed]
        assert "Not written yet." in page.locator("article.explanation-card[data-explanation='Bea']").text_content()

        # Ada's timeline: the hint she opened, and her explanation.
        page.locator("button[data-learner]", has_text="Ada").click()
        page.wait_for_selector("#class-timeline li[data-event='hint']")
        assert f"opened hint 1 of “{title}”" in page.locator("#class-timeline").text_content()
        assert page.locator("#class-timeline .explanation-text").text_content() == WRITTEN

        for width, height in WIDTHS.values():
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], width
            keep_screenshot(page, f"teacher-view-{width}.png")
        # At 390 px the grid scrolls sideways and the learner's name stays in view; a tapped heading names its column.
        grid = page.locator("#class-grid")
        assert grid.evaluate("box => box.scrollWidth > box.clientWidth")
        grid.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        name = page.locator("tr[data-learner-row='Ada'] th[scope=row]").bounding_box()
        view = grid.bounding_box()
        assert view["x"] - 1 <= name["x"] <= view["x"] + 1, (name, view)
        heading = page.locator(f"button.column-name[data-name$='exercise: {title}']")
        heading.scroll_into_view_if_needed()
        heading.tap()
        assert title in page.locator("#grid-column-name").text_content()
        page.locator("#grid-title").scroll_into_view_if_needed()
        keep_screenshot(page, "teacher-view-grid-390.png")
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, "the teacher's page scrolls sideways at 390 px"

        # A learner at /teacher: a page that says it is for teachers, not the API's JSON.
        answer = bea_page.goto(served.base + "/teacher")
        assert answer.status == 403 and answer.headers["content-type"].startswith("text/html")
        assert bea_page.locator("h1").text_content() == "This page is for teachers"
    finally:
        for context in (teacher, ada, bea):
            context.close()
