"""The teacher's due dates and regrades on the teacher's page, in Chromium against a real `chainrule serve`
(PostgreSQL and a `chainrule worker` when the session has it, else SQLite): a lesson's date set in its field,
one learner's extension, extensions from a CSV, each learner's credit as of their own due date redrawn after
each; an exercise regraded (who would change, apply, revert); a learner's own dates on the path and lesson
pages; axe-core finds nothing serious at 1280 and 390 px and the pages do not scroll sideways on a phone.

One server (and worker) serves the module; each test has a class of its own on it (ClassServer.add_class;
the fixtures due_dates_server and due_class are in conftest.py)."""

from __future__ import annotations

import re
import subprocess
import sys

from class_pages import (
    PASSWORD,
    ada_started_and_the_teacher_in,
    credit_cell,
    desktop_page,
    submit_form,
    the_teacher_puts,
)

from chainrule.classes import open_class_store
from chainrule.grading import reference_source
from class_process import ClassServer
from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS


def keep_an_old_pass(due_class: ClassServer, learner_id: int) -> None:
    """A run the exercise's older cases passed: its code forgets tanh's derivative, which the cases fail now."""
    source = reference_source("neuron-grads", "python").replace("dn = 1 - out**2", "dn = 1")
    store = open_class_store(due_class.env["CHAINRULE_DATA_DIR"], due_class.env.get("CHAINRULE_DATABASE"))
    try:
        store.for_learner(learner_id).record_submission("neuron-grads", "python", source, {"status": "pass"})
    finally:
        store.close()


def test_the_teacher_sets_a_date_extends_it_for_one_learner_and_from_a_csv(browser, due_class):
    with desktop_page(browser) as page:
        learner = ada_started_and_the_teacher_in(due_class, page)
        assert credit_cell(page, "Ada").text_content() == "3 of 8"  # 01-03, started; no date yet

        row = page.locator("tr[data-due='backprop']")
        row.get_by_label("Due date of Backpropagation: the chain rule on a graph").fill("2020-01-01T00:00")
        row.get_by_role("button", name="Save").click()
        page.wait_for_function("() => document.querySelector(\"tr[data-due='backprop']\").textContent.includes('2020-01-01 00:00 (UTC)')", polling=PAGE_POLL_MS)
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
        page.wait_for_function("() => document.querySelector('[data-deadline-status]').textContent === 'Extensions set: 1.'", polling=PAGE_POLL_MS)
        assert credit_cell(page, "Ada").text_content() == "0 of 8 · late work: 1"

        page.get_by_label("Many extensions at once").fill("Zed,backprop,+1\n")
        page.get_by_role("button", name="Set these extensions").click()
        page.wait_for_selector("text=row 1: there is no learner named 'Zed'")  # said on the page; nothing set

        keep_an_old_pass(due_class, learner.get("/api/class/me").json()["id"])
        page.locator("#regrade-exercise").select_option("neuron-grads")
        page.get_by_role("button", name="Check who would change").click()
        page.wait_for_selector("[data-regrade='graded']", timeout=120_000)
        ada = page.locator("tr[data-regrade-row='Ada']")
        assert [ada.locator(f"td[data-label='{label}']").text_content() for label in ("Before", "After", "Changes")] \
            == ["passed", "fails", "yes"]
        page.get_by_role("button", name="Apply: the new verdicts count").click()
        page.get_by_role("button", name="Yes, apply it").click()  # asked first
        page.wait_for_selector("[data-regrade='applied']")
        page.get_by_role("button", name="Revert").click()
        page.get_by_role("button", name="Yes, revert it").click()
        page.wait_for_selector("[data-regrade='reverted']")

        for name, (width, height) in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], width
            section = page.locator("#class-deadlines")
            keep_screenshot(section, f"teacher-deadlines-{name}.png")
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (width, overflow)


def test_a_learner_sees_their_own_due_dates_on_the_path_and_in_the_lesson(browser, due_class):
    teacher = the_teacher_puts(due_class, [("/api/class/deadlines/policy", {"late": "10%"}),
                                 ("/api/class/deadlines/due", {"lesson_id": "backprop", "due": "2020-01-01 00:00"}),
                                 ("/api/class/deadlines/due", {"lesson_id": "backprop", "exercise_id": "neuron-grads",
                                                               "due": "2099-01-01 12:00"})])

    with desktop_page(browser) as page:
        page.goto(due_class.invite)
        submit_form(page, {"name": "Ada", "password": PASSWORD})
        assert page.url == due_class.base + "/"
        due = page.locator("[data-lesson='backprop'] .lesson-due")
        assert due.text_content() == "Was due 2020-01-01 00:00 (UTC). Credit so far: 0 of 8."
        assert due.get_attribute("data-past-due") == "true"
        assert page.locator("[data-lesson='computational-graphs'] .lesson-due").count() == 0  # no date there

        page.goto(due_class.base + "/lessons/backprop")
        page.wait_for_selector("#main[data-complete='true']")
        assert page.locator("#main .lesson-due").text_content() == (
            "Was due 2020-01-01 00:00 (UTC). Credit so far: 0 of 8. "
            "After a due date, late work loses 10 % of its credit per day late.")
        assert page.locator("article[data-exercise='neuron-grads'] .exercise-due").text_content() == \
            "Due 2099-01-01 12:00 (UTC)."
        assert page.locator(".exercise-due").count() == 1  # the other exercises have the lesson's date
        assert axe_violations(page) == []  # the past date's colour included

        ada = next(entry for entry in teacher.get("/api/class/deadlines").json()["learners"] if entry["name"] == "Ada")
        the_teacher_puts(due_class, [("/api/class/deadlines/extensions",
                                      {"learner_id": ada["id"], "lesson_id": "backprop", "due": "2099-02-01"})], teacher)
        page.goto(due_class.base + "/")
        assert due.text_content() == "Due 2099-02-01 23:59 (UTC) (your own date). Credit so far: 0 of 8."
        assert due.get_attribute("data-past-due") == "false"
        for name, (width, height) in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], width
            keep_screenshot(page.locator("[data-lesson='backprop']"), f"learner-due-{name}.png")
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (width, overflow)


def test_a_learner_reads_due_dates_in_their_own_time_zone_with_the_classs_beside_it(browser, due_class):
    """Issue 39 item 8: the class's dates are Europe/Berlin's wall clock; a learner whose browser is in New York
    reads each in New York's time with the class's beside it (Berlin is UTC+1 and New York UTC-5 in December and
    January, 6 hours apart), and a learner in Berlin reads the one date."""
    the_teacher_puts(due_class, [("/api/class/deadlines/policy", {"time_zone": "Europe/Berlin", "late": "no-credit"}),
                                 ("/api/class/deadlines/due", {"lesson_id": "backprop", "due": "2020-01-01 00:00"}),
                                 ("/api/class/deadlines/due", {"lesson_id": "backprop", "exercise_id": "neuron-grads",
                                                               "due": "2099-12-04 23:59"})])
    with desktop_page(browser, "America/New_York") as page:
        page.goto(due_class.invite)
        submit_form(page, {"name": "Noor", "password": PASSWORD})
        mine = page.evaluate("fetch('/api/class/deadlines/mine').then(r => r.json())")
        assert mine["lessons"][0]["due_at"] == "2019-12-31T23:00:00Z"  # midnight in Berlin, UTC+1
        due = page.locator("[data-lesson='backprop'] .lesson-due")
        assert due.text_content() == ("Was due 2019-12-31 18:00 your time (America/New_York); 2020-01-01 00:00 "
                                      "(Europe/Berlin) for the class. Credit so far: 0 of 8.")
        page.goto(due_class.base + "/lessons/backprop")
        page.wait_for_selector("#main[data-complete='true']")
        assert page.locator("article[data-exercise='neuron-grads'] .exercise-due").text_content() == (
            "Due 2099-12-04 17:59 your time (America/New_York); 2099-12-04 23:59 (Europe/Berlin) for the class.")
    with desktop_page(browser, "Europe/Berlin") as page:
        page.goto(due_class.invite)
        submit_form(page, {"name": "Jon", "password": PASSWORD})
        assert page.locator("[data-lesson='backprop'] .lesson-due").text_content() == \
            "Was due 2020-01-01 00:00 (Europe/Berlin). Credit so far: 0 of 8."


def test_every_regrade_is_listed_with_its_state_and_apply_and_revert_ask_first(browser, due_class):
    """Issue 39 item 2 (the page): the teacher's page lists every regrade of the class, those made with `chainrule
    class regrade` too, with its state; applying and reverting each ask first, by keyboard as well (Escape or
    Cancel changes nothing)."""
    learner = due_class.join("Ada")
    keep_an_old_pass(due_class, learner.get("/api/class/me").json()["id"])

    def regrade(*argv: str) -> str:  # the administrator's command, as a process against the class's database
        done = subprocess.run([sys.executable, "-m", "chainrule", "class", "regrade", due_class.class_name, *argv],
                              env=due_class.env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        return re.match(r"Regrade (\d+) of ", done.stdout).group(1)  # its number, as the command says it

    first = regrade("neuron-grads")
    assert regrade("--apply", first) == first and regrade("--revert", first) == first
    second = regrade("neuron-grads", "--best")

    with desktop_page(browser) as page:
        page.goto(due_class.teacher_link)
        page.locator("input[name='password']").fill(PASSWORD)
        with page.expect_navigation():
            page.locator("form.class-form button[type=submit]").click()
        page.wait_for_selector("#regrade-list")

        def listed() -> dict[str, tuple[str, str]]:
            rows = page.locator("#regrade-list tbody tr")
            return {rows.nth(i).get_attribute("data-regrade-entry"): (
                rows.nth(i).get_attribute("data-state"), rows.nth(i).locator("td[data-label='State']").text_content())
                for i in range(rows.count())}

        assert listed() == {first: ("reverted", "reverted"), second: ("graded", "graded, not applied")}
        page.get_by_role("button", name=f"Show regrade {second} of neuron-grads").click()
        page.wait_for_selector(f"[data-regrade='graded'][data-regrade-id='{second}']")

        def state() -> str:
            return page.evaluate(f"fetch('/api/class/regrades/{second}').then(r => r.json()).then(r => r.state)")

        apply = page.get_by_role("button", name="Apply: the new verdicts count")
        apply.focus()
        page.keyboard.press("Enter")
        asking = page.get_by_role("group", name="Apply the regrade of neuron-grads? Standing changes for 1 learner.")
        asking.wait_for()
        assert page.evaluate("document.activeElement.textContent") == "Cancel"  # the safe choice first
        assert axe_violations(page) == []
        page.keyboard.press("Escape")
        asking.wait_for(state="detached")
        assert page.evaluate("document.activeElement.textContent") == "Apply: the new verdicts count"
        assert state() == "graded"  # nothing changed
        page.keyboard.press("Enter")
        asking.wait_for()
        page.keyboard.press("Shift+Tab")
        assert page.evaluate("document.activeElement.textContent") == "Yes, apply it"
        page.keyboard.press("Enter")
        page.wait_for_selector(f"[data-regrade='applied'][data-regrade-id='{second}']")
        page.wait_for_selector(f"#regrade-list tr[data-regrade-entry='{second}'][data-state='applied']")
        assert state() == "applied"

        page.get_by_role("button", name="Revert").click()
        page.get_by_role("button", name="Cancel").click()
        assert state() == "applied"
        page.get_by_role("button", name="Revert").click()
        page.get_by_role("button", name="Yes, revert it").click()
        page.wait_for_selector(f"#regrade-list tr[data-regrade-entry='{second}'][data-state='reverted']")
        assert listed() == {first: ("reverted", "reverted"), second: ("reverted", "reverted")}
