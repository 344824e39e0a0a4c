"""A teaching assistant's teacher's page offers nothing their role cannot do (issue 43, item 6), in Chromium at 1280
and 390 px, against a real `chainrule serve` (PostgreSQL and a worker when the session has it, else SQLite).

The class has a learner with a run and a regrade the teacher has not applied yet, so every changing control of the
due dates, credit by hand and regrade panels would be there for a teacher (the test checks that it is). The
assistant's page shows the same panels' data with no form, field or changing button in them: where the teacher
has controls, one sentence says they are a teacher's to change. Showing a regrade offers no Apply, a learner's
timeline no reset link. axe-core finds nothing serious at either width."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from class_pages import PASSWORD, new_context, submit_form

from chainrule.classes import open_class_store
from chainrule.grading import reference_source
from conftest import WIDTHS, axe_violations

pytestmark = pytest.mark.timeout(300)

PANELS = ("#class-deadlines", "#class-marks", "#class-regrade")
CHANGING = ":is(form, input, textarea, select)"


def a_graded_regrade(server) -> str:
    """Ada joins with a run the exercise's cases no longer pass; `chainrule class regrade` grades it again and
    leaves it waiting for a teacher to apply. The regrade's number."""
    learner = server.join("Ada")
    source = reference_source("neuron-grads", "python").replace("dn = 1 - out**2", "dn = 1")
    store = open_class_store(server.env["CHAINRULE_DATA_DIR"], server.env.get("CHAINRULE_DATABASE"))
    try:
        store.for_learner(learner.get("/api/class/me").json()["id"]).record_submission(
            "neuron-grads", "python", source, {"status": "pass"})
    finally:
        store.close()
    done = subprocess.run([sys.executable, "-m", "chainrule", "class", "regrade", server.class_name, "neuron-grads"],
                          env=server.env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return re.match(r"Regrade (\d+) of ", done.stdout).group(1)


def shown_regrade(page, number: str) -> None:
    page.get_by_role("button", name=f"Show regrade {number} of neuron-grads").click()
    page.wait_for_selector(f"[data-regrade='graded'][data-regrade-id='{number}']")


def test_an_assistant_s_page_offers_no_change_of_grades_or_people(browser, due_class):
    number = a_graded_regrade(due_class)

    # The teacher's page has the controls (so their absence below is the role's doing, not an empty class); the
    # teacher adds the assistant there.
    desk = new_context(browser)
    page = desk.new_page()
    page.goto(due_class.teacher_link)
    submit_form(page, {"password": PASSWORD})
    page.wait_for_selector("#mark-learner option", state="attached")
    page.wait_for_selector("tr[data-credit-row='Ada']")  # the due dates' panel is drawn (it loads on its own)
    page.wait_for_selector("#regrade-list")
    for panel in PANELS:
        assert page.locator(f"{panel} form").count() > 0 and page.locator(f"{panel} [data-teachers-only]").count() == 0
    shown_regrade(page, number)
    assert page.get_by_role("button", name="Apply: the new verdicts count").count() == 1
    people = page.locator("#class-people")
    people.locator("#assistant-name").fill("Tam")
    people.get_by_role("button", name="Add the assistant").click()
    link = people.locator("#assistant-link").input_value()
    desk.close()

    context = new_context(browser)
    tam = context.new_page()
    tam.goto(link)
    submit_form(tam, {"password": PASSWORD})
    for width, height in WIDTHS.values():
        tam.set_viewport_size({"width": width, "height": height})
        tam.goto(due_class.base + "/teacher")
        assert "where a teacher has buttons to change them" in tam.locator("#assistant-note").text_content()
        tam.wait_for_selector("tr[data-credit-row='Ada']")  # the due dates' data is there
        tam.wait_for_selector("#audit-log p")  # the audit log too
        tam.wait_for_selector("#regrade-list")
        for panel in PANELS:
            assert tam.locator(f"{panel} {CHANGING}").count() == 0, panel
            said = tam.locator(f"{panel} [data-teachers-only]")
            assert said.count() >= 1 and said.first.is_visible(), panel
            assert said.first.text_content().startswith("Only a teacher of the class can change ")
        assert [tam.locator("#class-deadlines button").count(), tam.locator("#class-marks button").count()] == [0, 0]
        shown_regrade(tam, number)
        assert tam.locator("#class-regrade button").all_text_contents() == ["Show"]  # reading it is all
        assert tam.locator("#regrade-state").text_content().endswith("Nothing counts until you apply it.")
        tam.locator("#class-grid [data-learner]").first.click()
        tam.wait_for_selector("#class-timeline h3")
        assert tam.get_by_role("button", name="Make a password reset link").count() == 0
        assert axe_violations(tam) == [], width
        assert tam.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), width
    context.close()
