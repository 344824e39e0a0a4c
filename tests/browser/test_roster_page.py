"""A roster, sections and choosing several learners on the teacher's page, in Chromium (issue 43, item 6), on the
module's real `chainrule serve` (PostgreSQL when the session has it, else SQLite), a class of this test's own.

The teacher uploads a roster with a formula cell: nothing is imported and the page names the line; then a good
one. Two listed learners join (at 390 px) with their school e-mails and land in the class at once; the teacher
narrows the grid and the gradebook link to one section, then removes both learners with one action after its
second step, and adds a teaching assistant, whose page shows the roster and the people with no control that
changes them. The pages have no serious axe-core violation at 1280 and 390 px, with the import's error shown, with
a section chosen, and as the assistant sees it."""

from __future__ import annotations

import pytest
from class_pages import PASSWORD, new_context, submit_form

from conftest import WIDTHS, axe_violations
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)

BAD = b"name,e-mail,section\nDee Ray,dee@school.example,Monday\n=HYPERLINK(\"x\"),x@school.example,Monday\n"
GOOD = b"Name,E-mail,Section\nDee Ray,dee@school.example,Monday\nEli Fox,eli@school.example,Tuesday\n"


def no_serious_violations(page) -> None:
    for width, height in WIDTHS.values():
        page.set_viewport_size({"width": width, "height": height})
        assert axe_violations(page) == [], (page.url, width)
    page.set_viewport_size({"width": 1280, "height": 900})


def upload(page, data: bytes) -> None:
    roster = page.locator("#class-roster")
    roster.locator("#roster-file").set_input_files({"name": "roster.csv", "mimeType": "text/csv", "buffer": data})
    roster.get_by_role("button", name="Import the roster").click()


def test_a_teacher_imports_a_roster_filters_by_section_and_removes_two_at_once(browser, own_class):
    base, teacher_link, invite, _ = own_class
    teacher = new_context(browser)
    page = teacher.new_page()
    page.goto(teacher_link)
    submit_form(page, {"password": PASSWORD})
    assert page.url == base + "/teacher"

    upload(page, BAD)
    error = page.locator("#roster-said .form-error")
    error.wait_for()
    assert error.text_content().startswith("1 row cannot be imported, so nothing was: line 3: the cell")
    assert page.evaluate("() => document.activeElement.id") == "roster-said"
    assert page.locator("#roster-empty").is_visible()
    no_serious_violations(page)

    upload(page, GOOD)
    page.wait_for_function("() => document.getElementById('roster-said').textContent.startsWith('Imported')", polling=PAGE_POLL_MS)
    assert page.locator("#roster-said").text_content() == \
        "Imported: 2 people added to the roster, 0 people already on it updated."
    assert page.locator("#roster-table tbody tr").count() == 2

    for name, key in (("Dee", "dee@school.example"), ("Eli", "ELI@school.example")):
        phone = new_context(browser, 390, 844)
        learner = phone.new_page()
        learner.goto(invite)
        assert learner.locator("label[for='field-roster_key']").is_visible()
        submit_form(learner, {"name": name, "password": PASSWORD, "roster_key": key})
        assert learner.url == base + "/"  # in at once: a teacher listed them
        phone.close()

    page.reload()
    page.locator("#section-filter-box").wait_for()
    assert page.locator("#section-filter option").all_text_contents() == ["The whole class", "Monday", "Tuesday"]
    page.wait_for_function("() => document.querySelectorAll('[data-learner-row]').length === 2", polling=PAGE_POLL_MS)
    page.locator("#section-filter").select_option("Monday")
    page.wait_for_function("() => document.querySelectorAll('[data-learner-row]').length === 1", polling=PAGE_POLL_MS)
    assert page.locator("[data-learner-row]").get_attribute("data-learner-row") == "Dee"
    assert page.locator("#gradebook-link").get_attribute("href") == "/teacher/gradebook.csv?section=Monday"
    assert page.locator("#section-said").text_content().startswith("Showing section Monday only")
    assert page.locator("#roster-table tbody tr", has_text="Eli Fox").locator("td").last.text_content() == "Eli"
    no_serious_violations(page)

    people = page.locator("#class-people")
    people.get_by_label("Dee").check()
    people.get_by_label("Eli").check()
    people.get_by_role("button", name="Remove the chosen learners").click()
    assert page.evaluate("() => document.activeElement.dataset.confirm") == "no"  # the safe choice first
    people.get_by_role("button", name="Remove 2 learners for good").click()
    page.wait_for_function("() => document.getElementById('people-said').textContent === '2 learners removed.'", polling=PAGE_POLL_MS)
    assert people.locator("li[data-person]").count() == 0

    # A teaching assistant, added on the page: their page reads the roster and the people, and offers no change.
    people.locator("#assistant-name").fill("Tam")
    people.get_by_role("button", name="Add the assistant").click()
    link = people.locator("#assistant-link").input_value()
    assistant = new_context(browser, 390, 844)
    tam = assistant.new_page()
    tam.goto(link)
    submit_form(tam, {"password": PASSWORD})
    assert tam.url == base + "/teacher"
    tam.locator("#roster-empty").wait_for()  # the removed learners' roster entries went with them
    tam.locator("#class-people li[data-assistant='Tam']").wait_for()
    assert tam.locator("#assistant-note").is_visible() and tam.locator("#roster-file").count() == 0
    assert tam.locator("#class-people button, #class-people input").count() == 0
    no_serious_violations(tam)
    assistant.close()
    teacher.close()
