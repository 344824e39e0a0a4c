"""The teacher's due dates on the teacher's page, in Chromium against a real `chainrule serve` (PostgreSQL when
the session has it, else SQLite): a lesson's date set in its field, one learner's extension, extensions from a
CSV, each learner's credit as of their own due date redrawn after each; axe-core finds nothing serious at
1280 and 390 px and the page does not scroll sideways on a phone."""

from __future__ import annotations

import pytest

from class_process import ClassServer
from conftest import WIDTHS, axe_violations

PASSWORD = "correct horse battery"


@pytest.fixture
def server(request, tmp_path):
    database = None
    try:
        database = request.getfixturevalue("postgres_url")
    except pytest.skip.Exception:
        pass
    started = ClassServer.start(tmp_path, database, class_name="Due dates")
    try:
        yield started
    finally:
        started.stop()


def credit_cell(page, name: str):
    return page.locator(f"tr[data-credit-row='{name}'] td[data-lesson='backprop']")


def test_the_teacher_sets_a_date_extends_it_for_one_learner_and_from_a_csv(browser, server, screenshots_dir):
    learner = server.join("Ada")
    token = next(value for name, value in learner.cookies.items() if name.endswith("chainrule_csrf"))
    made = learner.put("/api/progress/backprop/predictions/n", json={"value": 0.5}, headers={"X-CSRF-Token": token})
    assert made.status_code == 200, made.text

    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    context.set_default_timeout(30_000)
    try:
        page = context.new_page()
        page.goto(server.teacher_link)
        page.locator("input[name='password']").fill(PASSWORD)
        with page.expect_navigation():
            page.locator("form.class-form button[type=submit]").click()
        assert page.url == server.base + "/teacher"
        page.wait_for_selector("tr[data-credit-row='Ada']")
        assert credit_cell(page, "Ada").text_content() == "3 of 8"  # 01-03, started; no date yet

        row = page.locator("tr[data-due='backprop']")
        row.get_by_label("Due date of Backpropagation: the chain rule on a graph").fill("2020-01-01T00:00")
        row.get_by_role("button", name="Save").click()
        page.wait_for_function("() => document.querySelector(\"tr[data-due='backprop']\").textContent.includes('2020-01-01 00:00 (UTC)')")
        assert credit_cell(page, "Ada").text_content() == "0 of 8 · late work: 1"

        page.locator("#extend-learner").select_option(label="Ada")
        page.locator("#extend-lesson").select_option("backprop")
        page.get_by_label("Their own due date").fill("2099-01-01")
        page.get_by_role("button", name="Extend", exact=True).click()
        page.wait_for_selector("#extension-list")
        assert "Ada, backprop: due 2099-01-01 23:59 (UTC)" in page.locator("#extension-list").text_content()
        assert credit_cell(page, "Ada").text_content() == "3 of 8 · extended to 2099-01-01 23:59 (UTC)"

        page.get_by_label("Many extensions at once").fill("learner,lesson,due\nAda,backprop,none\n")
        page.get_by_role("button", name="Set these extensions").click()
        page.wait_for_function("() => document.querySelector('[data-deadline-status]').textContent === 'Extensions set: 1.'")
        assert credit_cell(page, "Ada").text_content() == "0 of 8 · late work: 1"

        page.get_by_label("Many extensions at once").fill("Zed,backprop,+1\n")
        page.get_by_role("button", name="Set these extensions").click()
        page.wait_for_selector("text=row 1: there is no learner named 'Zed'")  # said on the page; nothing set

        for name, (width, height) in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], width
            section = page.locator("#class-deadlines")
            section.screenshot(path=str(screenshots_dir / f"teacher-deadlines-{name}.png"))
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (width, overflow)
    finally:
        context.close()
