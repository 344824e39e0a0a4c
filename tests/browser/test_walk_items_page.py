"""What the teacher's walk tripped on (issue 43, item 7), as the pages show it in Chromium at 1280 and 390 px, each
checked with axe-core:

- the grid marks a piece of work done after its due date with the word "late" beside its square (and says so to a
  screen reader), on a real `chainrule serve` (PostgreSQL and a worker when the session has it, else SQLite), and
  the teacher's page of a class that is no LMS course asks for nothing that is not there (no 404);
- a closed class's learners see its banner at the top of every page they open, before anything is refused;
- an LMS teacher who opens the course's link (in a window of its own: the real LTI platform of tests/lti_platform.py
  and a real tool) lands on the teacher's page, linked as "Teacher's page" in the navigation, whose LMS panels
  name the course by its title.

tests/test_class_walk.py and test_lti.py check the same data over HTTP, on both backends."""

from __future__ import annotations

import pytest
from class_pages import PASSWORD, csrf_header, new_context, submit_form

from conftest import WIDTHS, axe_violations
from lti_world import LtiWorld
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)

BACKPROP_DUE = "Due date of Backpropagation: the chain rule on a graph"


def at_each_width(page, check, just_loaded: bool = False) -> None:
    """check() at 1280 px, then at 390 px (the page reloaded at that width), with axe-core each time. just_loaded:
    the page was loaded at 1280 px a moment ago (page.goto), so it is read as it is there, not loaded again."""
    for index, (width, height) in enumerate(WIDTHS.values()):
        page.set_viewport_size({"width": width, "height": height})
        if index or not just_loaded:
            page.reload()
        check()
        assert axe_violations(page) == [], (page.url, width)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (page.url, width)


def test_late_work_on_the_grid_and_a_closed_class_s_banner(browser, due_class):
    ada = due_class.join("Ada")
    wrote = ada.put("/api/lessons/backprop/explanation", json={"text": "Each node passes its gradient back.",
                                                               "ticked": []}, headers=csrf_header(ada))
    assert wrote.status_code == 200, wrote.text

    context = new_context(browser)
    page = context.new_page()
    missing: list[str] = []
    page.on("response", lambda answer: missing.append(answer.url) if answer.status == 404 else None)
    page.goto(due_class.teacher_link)
    submit_form(page, {"password": PASSWORD})
    row = page.locator("tr[data-due='backprop']")
    row.get_by_label(BACKPROP_DUE).fill("2020-01-01T00:00")
    row.get_by_role("button", name="Save").click()
    page.wait_for_function("() => document.querySelector(\"tr[data-due='backprop']\").textContent.includes('2020-01-01')", polling=PAGE_POLL_MS)

    def the_late_square() -> None:
        late = page.locator("tr[data-learner-row='Ada'] td[data-late]")
        late.first.wait_for()
        assert late.count() == 1  # her explanation, written after the date; nothing else of hers is done
        assert late.locator(".late-word").text_content() == "late" and late.locator(".late-word").is_visible()
        assert late.locator("[role=img]").get_attribute("aria-label").endswith("; done late, after its due date")

    at_each_width(page, the_late_square)
    assert page.locator("#lms-course").count() == 0 and missing == [], missing  # no LMS part asked for

    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("#class-people button[data-state='closed']").click()
    page.wait_for_function("() => document.getElementById('people-state').textContent.includes('closed')", polling=PAGE_POLL_MS)
    assert page.locator("#class-state-banner").count() == 0  # a closed class's teacher still changes it
    context.close()

    learner = new_context(browser)
    page = learner.new_page()
    page.goto(due_class.base + "/sign-in")
    submit_form(page, {"class_name": due_class.class_name, "name": "Ada", "password": PASSWORD})
    for path in ("/", "/lessons/backprop"):
        page.set_viewport_size({"width": 1280, "height": 900})  # loaded at 1280 px (the last check left it at 390)
        page.goto(due_class.base + path)

        def the_banner() -> None:
            banner = page.locator("#class-state-banner")
            assert banner.is_visible() and banner.get_attribute("role") == "status"
            assert "You can still open every lesson and your own work" in banner.text_content()

        at_each_width(page, the_banner, just_loaded=True)
    learner.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with LtiWorld.start(tmp_path_factory.mktemp("lti-walk")) as started:
        yield started


def test_an_lms_teacher_lands_on_the_teacher_s_page_whose_lms_panels_say_titles(browser, world):
    link = world.add_link("chemistry", None)  # the course's own link: the whole path
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    context.set_default_timeout(60_000)
    course = context.new_page()
    course.goto(f"{world.lms_url}/course/chemistry?user=curie&link={link}&window=1")
    with context.expect_page() as opened:
        course.locator("#open").click()
    page = opened.value
    page.wait_for_url(world.tool_url + "/teacher")

    def the_teacher_s_page() -> None:
        assert page.url == world.tool_url + "/teacher"
        assert page.locator("nav a[href='/teacher']").text_content() == "Teacher's page"
        assert page.get_by_role("link", name="Marie Curie").count() == 0
        page.locator("#lms-course:not([hidden])").wait_for()
        assert page.locator("#lms-title").text_content() == "In the LMS course: Chemistry"
        page.locator("tr[data-member='Marie Curie']").wait_for()
        assert page.locator("tr[data-member='Ada Lovelace'] td").nth(2).text_content() == "not yet"

    at_each_width(page, the_teacher_s_page)
    context.close()
