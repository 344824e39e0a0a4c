"""The teacher's hand on the gradebook on the teacher's page, in Chromium against a real `chainrule serve`
(PostgreSQL when the session has it, else SQLite): a lesson's credit given by hand with the keyboard alone
(each field reached with Tab, the change confirmed before it is saved), an excuse reviewed, taken back, then
saved; the credit table and the audit log redrawn after each; axe-core finds nothing serious at 1280 and 390 px
and the page does not scroll sideways on a phone."""

from __future__ import annotations

from class_pages import ada_started_and_the_teacher_in, credit_cell, desktop_page

from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS


def test_the_teacher_gives_a_credit_by_hand_with_the_keyboard_and_excuses_after_confirming(browser, due_class):
    with desktop_page(browser) as page:
        ada_started_and_the_teacher_in(due_class, page)
        page.wait_for_selector("#audit-page")
        assert credit_cell(page, "Ada").text_content() == "3 of 8"  # 01-03, started
        assert page.locator("#audit-page").text_content() == "Page 1 of 1 (0 changes, newest first)"

        page.locator("#mark-lesson").select_option("backprop")
        assert page.locator("#mark-credit-hint").text_content() == "a number from 0 to 8 (its sections)"
        page.locator("input[name='mark-action'][value='override']").focus()
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "mark-credit"
        page.keyboard.type("6")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "mark-reason"
        page.keyboard.type("judged her explanation by hand")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # "Review the change": nothing is saved before the confirmation
        confirm = page.locator("#mark-confirm-text")
        assert confirm.text_content() == ("About to give 6 as the credit of Ada, Backpropagation: the chain rule on a "
                                          "graph, because: judged her explanation by hand")
        assert page.evaluate("document.activeElement.textContent") == "Save the change"
        assert page.locator("tr[data-audit]").count() == 0
        page.keyboard.press("Enter")
        status = page.locator("[data-mark-status]")
        status.wait_for()
        page.wait_for_function("() => document.querySelector('[data-mark-status]').textContent.startsWith('Saved')", polling=PAGE_POLL_MS)
        assert status.text_content() == "Saved: Ada, Backpropagation: the chain rule on a graph: 6 of 8."
        page.wait_for_function("() => document.querySelector(\"tr[data-credit-row='Ada'] td[data-lesson='backprop']\")"
                               ".textContent === '6 of 8 · given by hand'", polling=PAGE_POLL_MS)
        row = page.locator("tr[data-audit='override']")
        assert [row.locator(f"td[data-label='{label}']").text_content() for label in ("Who", "Learner", "Before", "After",
                                                                                       "Reason")] == [
            "Teacher", "Ada", "credit: 3 of 8; mark: none", "credit: 6 of 8; mark: {credit: 6, kind: override}",
            "judged her explanation by hand"]

        page.get_by_label("Excuse it (counts neither for nor against)").check()
        assert page.locator("#mark-credit").is_disabled()
        page.get_by_label("Reason (required; kept in the audit log)").fill("ill that week")
        page.get_by_role("button", name="Review the change").click()
        page.get_by_role("button", name="Go back").click()  # taken back: nothing saved
        assert page.locator("#mark-confirm").is_hidden() and page.locator("tr[data-audit]").count() == 1
        page.get_by_role("button", name="Review the change").click()
        page.get_by_role("button", name="Save the change").click()
        page.wait_for_selector("tr[data-audit='excuse']")
        page.wait_for_function("() => document.querySelector(\"tr[data-credit-row='Ada'] td[data-lesson='backprop']\")"
                               ".textContent === 'excused'", polling=PAGE_POLL_MS)
        assert page.locator("#audit-page").text_content() == "Page 1 of 1 (2 changes, newest first)"
        assert page.locator("#mark-list").text_content() == (
            "Ada, backprop: excused, because: ill that week")

        for name, (width, height) in WIDTHS.items():
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], width
            keep_screenshot(page.locator("#class-marks"), f"teacher-marks-{name}.png")
            overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, (width, overflow)
