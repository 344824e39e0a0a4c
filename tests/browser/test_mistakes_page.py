"""Common mistakes on the teacher's page, in Chromium against a real `chainrule serve` (SQLite): Ada's backward
never seeds the gradient and Bea's products replace it (= for +=), both graded for real (Bea's name holds
markup); the teacher counts the class's mistakes with the keyboard alone, reads each mistake's runs, learners,
days and the hint the learner read (as text), and goes from a mistake to the run behind it; axe-core finds
nothing serious at 1280 and 390 px, and the tables do not make the page scroll sideways on a phone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from class_pages import PASSWORD, desktop_page, joined_and_graded, submit_form

from chainrule import lessons
from chainrule.grading import reference_source
from class_process import ClassServer
from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS

EXERCISE = "local-gradients"
# Bea's name holds markup: the page shows it as text.
BEA = "Bea <img src=x onerror=\"document.title='owned'\">"
OWN_HINTS = json.loads((Path(lessons.__file__).parent / "data" / "backprop" / "exercises" / "2-local-gradients"
                        / "exercise.json").read_text(encoding="utf-8"))["diagnoses"]


def handed_in() -> dict[str, str]:
    lessons.register_exercises()
    solution = reference_source(EXERCISE, "python")
    return {"Ada": solution.replace("out.grad = 1.0", "out.grad = 0.0"),
            BEA: solution.replace("self.grad += other.data", "self.grad = other.data")
            .replace("other.grad += self.data", "other.grad = self.data")}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = ClassServer.start(tmp_path_factory.mktemp("mistakes"), None, class_name="Common mistakes")
    try:
        for name, source in handed_in().items():
            assert joined_and_graded(server, name, EXERCISE, source)["status"] == "fail"
        yield server
    finally:
        server.stop()


def cell(row, label: str) -> str:
    return row.locator(f"td[data-label='{label}']").inner_text()


def test_the_teacher_counts_the_mistakes_by_keyboard_and_opens_a_run(browser, served):
    with desktop_page(browser) as page:
        page.goto(served.teacher_link)
        submit_form(page, {"password": PASSWORD})
        count = page.get_by_role("button", name="Count the class's mistakes")
        count.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.activeElement && document.activeElement.id === 'mistakes-state'", polling=PAGE_POLL_MS)
        assert "days are in the class's time zone, UTC" in page.locator("#mistakes-state").text_content()
        table = page.locator(f"[data-exercise='{EXERCISE}'] table")
        assert table.locator("tbody tr").evaluate_all("rows => rows.map((row) => row.dataset.mistake)") == [
            "chain-w", "nothing-reached", "reuse-one-share", "shared-wrong"]  # one run each: by name
        nothing = table.locator("tr[data-mistake='nothing-reached']")
        assert (cell(nothing, "Runs"), cell(nothing, "Learners")) == ("1 run", "1 learner")
        assert nothing.locator(".mistake-hint").text_content() == OWN_HINTS["nothing-reached"]
        assert nothing.locator("[data-open-run]").count() == 1 and "Ada" in cell(nothing, "Its runs")
        assert "1 run, 1 learner" in cell(nothing, "Per day")
        assert BEA in cell(table.locator("tr[data-mistake='reuse-one-share']"), "Its runs")
        assert page.locator("#class-mistakes img").count() == 0 and page.title() != "owned"

        page.wait_for_selector("#feedback-learner")  # "Feedback on runs" has loaded its learners (on a busy machine, later)
        page.keyboard.press("Tab")  # from the result: the first mistake's run (chain-w: Bea's)
        run_id = page.evaluate("document.activeElement.dataset.openRun")
        assert run_id and page.evaluate("document.activeElement.textContent").startswith(f"Run {run_id}: {BEA}, ")
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => document.activeElement && document.activeElement.dataset.run === '{run_id}'", polling=PAGE_POLL_MS)
        assert page.locator("#feedback-learner option:checked").text_content() == BEA
        page.locator("#mistakes-title").scroll_into_view_if_needed()
        keep_screenshot(page, "mistakes-1280.png")
        assert axe_violations(page, within="#class-mistakes") == []

        page.set_viewport_size({"width": WIDTHS["phone"][0], "height": WIDTHS["phone"][1]})
        page.wait_for_function("() => document.documentElement.scrollWidth <= window.innerWidth", polling=PAGE_POLL_MS)
        box = nothing.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTHS["phone"][0]  # a row is a card on a phone
        assert axe_violations(page, within="#class-mistakes") == []
        nothing.scroll_into_view_if_needed()
        keep_screenshot(page, "mistakes-390.png")


def test_a_learner_is_refused(served):
    learner = served.join("Cal")
    answer = learner.get("/api/class/mistakes")
    assert answer.status_code == 403 and "only a teacher of this class" in answer.text
