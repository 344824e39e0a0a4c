"""Item analysis on the teacher's page, in Chromium against a real `chainrule serve` (SQLite): three learners
answer backprop's quiz through the lesson API and two run forward-any-order (one passes); the teacher asks for
the analysis with the keyboard alone, reads each chart's table, opens the learners behind the exercise and goes
from one to their runs; axe-core finds nothing serious at 1280 and 390 px, and nothing scrolls the page
sideways on a phone. A class with no work yet says so."""

from __future__ import annotations

import pytest
from class_pages import csrf_header, teacher_page

from class_process import ClassServer
from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS
from similar_code import EXERCISE, SOLUTIONS, starter

# Each learner's first answers to backprop's quiz (the lesson's keys, or a wrong one), and their run.
ANSWERS = {"Kay": {"product-gradient": "6", "tanh-gradient": "0.51", "sum-of-uses": "8"},
           "Kim": {"product-gradient": "6", "tanh-gradient": "1", "sum-of-uses": "8"},
           "Rex": {"product-gradient": "2", "tanh-gradient": "1", "sum-of-uses": "15"}}
RUNS = {"Kay": SOLUTIONS["kahn"], "Rex": None}  # Rex hands in the starter as given: it fails


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = ClassServer.start(tmp_path_factory.mktemp("item-analysis"), None, class_name="Item analysis")
    try:
        for name, answers in ANSWERS.items():
            learner = server.join(name)
            for question, answer in answers.items():
                said = learner.post(f"/api/lessons/backprop/quiz/{question}", json={"answer": answer},
                                    headers=csrf_header(learner))
                assert said.status_code == 200, said.text
            if name in RUNS:
                graded = learner.post("/api/grade", headers=csrf_header(learner), json={
                    "exercise": EXERCISE, "language": "python", "source": RUNS[name] or starter()})
                assert graded.status_code == 200, graded.text
        yield server
    finally:
        server.stop()


def test_the_teacher_reads_the_item_analysis_by_keyboard_at_both_widths(browser, served):
    with teacher_page(browser, served) as page:
        ask = page.get_by_role("button", name="Analyse the class's answers")
        ask.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.activeElement && document.activeElement.id === 'items-state'", polling=PAGE_POLL_MS)
        assert page.locator("#items-state").text_content() == "Item analysis of 3 learners."
        scores = page.locator("[data-chart='scores backprop']")
        assert scores.locator("svg rect").count() == 5
        # Kay 3/3, Kim 2/3, Rex 0/3: one learner in each of the bands 0-20, 60-80 and 80-100.
        assert scores.locator("tbody tr").all_inner_texts() == [
            "0 % to 20 %\t1 learner", "20 % to 40 %\t0 learners", "40 % to 60 %\t0 learners",
            "60 % to 80 %\t1 learner", "80 % to 100 %\t1 learner"]
        day = page.locator("[data-chart='pass rate'] tbody tr")
        # 9 first answers (5 right) and 2 first runs (1 passed): 6 of 11 right, on the day they were made (two
        # days only for a module that runs across midnight UTC).
        assert day.locator("td").all_inner_texts() == ["11 first tries", "55 %"] or day.count() == 2
        row = page.locator("tr", has=page.locator(f"[data-item='computational-graphs/{EXERCISE}']"))
        assert row.locator("td").all_inner_texts()[:4] == ["2 learners", "1 learner (50 %)", "50 %", "\u2013"]
        page.locator(f"[data-item='computational-graphs/{EXERCISE}']").focus()
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.activeElement && document.activeElement.id === 'items-behind-title'", polling=PAGE_POLL_MS)
        assert page.locator("[data-behind]").all_inner_texts()[0].startswith("Rex: first try not right (run ")
        assert "Kay: first try right (run " in page.locator("[data-behind='Kay']").text_content()
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Open Rex's runs"
        page.keyboard.press("Enter")
        page.wait_for_selector("#feedback-runs article[data-run]")
        assert page.evaluate("document.activeElement.id") == "feedback-learner"
        keep_screenshot(page.locator("#class-items"), "item-analysis-1280.png")
        assert axe_violations(page, within="#class-items") == []

        page.set_viewport_size({"width": WIDTHS["phone"][0], "height": WIDTHS["phone"][1]})
        page.wait_for_function("() => document.documentElement.scrollWidth <= window.innerWidth", polling=PAGE_POLL_MS)
        chart = scores.locator("svg").bounding_box()
        assert chart["x"] >= 0 and chart["x"] + chart["width"] <= WIDTHS["phone"][0]
        assert axe_violations(page, within="#class-items") == []
        keep_screenshot(page.locator("#class-items"), "item-analysis-390.png")


def test_a_class_with_no_work_yet_says_so_instead_of_empty_charts(browser, served):
    with teacher_page(browser, served.add_class("No work yet")) as page:
        page.get_by_role("button", name="Analyse the class's answers").click()
        page.wait_for_selector("#items-state")
        assert page.locator("#items-state").text_content() == (
            "No learner has tried a quiz question or an exercise yet (0 learners in the class).")
        assert page.locator("#class-items svg, #class-items table").count() == 0
