"""Class mode end to end in Chromium: one `chainrule serve` process for the module (on PostgreSQL when the test
session has it, else SQLite), each test in a class of its own made by `chainrule class create`; a teacher and
two learners in separate browser contexts; the teacher's grid and CSV show both; neither learner sees the
other; the teacher's page has no serious axe-core violation at 1280 and 390 px."""

from __future__ import annotations

import csv
import io

from class_pages import EXERCISE, PASSWORD, submit_form
from lesson_pages import reference, run_tests, set_editor_text

from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS

QUESTION = "product-gradient"  # its right answer is 6


def learner_works(browser, invite: str, base: str, name: str, answer: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.goto(invite)
    submit_form(page, {"name": name, "password": PASSWORD})
    assert page.url == base + "/"
    page.goto(base + "/lessons/backprop")
    page.wait_for_selector(f"[data-editor='{EXERCISE}'] .cm-content")
    set_editor_text(page, EXERCISE, reference(EXERCISE, "python") + f"\n# {name}'s own code\n")
    run_tests(page, EXERCISE)
    assert page.locator(f"article[data-exercise='{EXERCISE}'] .results").get_attribute("data-status") == "pass"
    form = page.locator(f"#section-06 form[data-question='{QUESTION}']")
    form.locator("input").fill(answer)
    form.locator("input").press("Enter")
    page.wait_for_function(
        "q => document.querySelector(`#section-06 form[data-question='${q}']`).dataset.correct !== undefined",
        arg=QUESTION, polling=PAGE_POLL_MS)
    return context, page


def test_a_learner_adds_a_personal_export_on_the_account_page(browser, own_class, tmp_path):
    """The file `chainrule progress export` wrote at home, added in class; the page passes axe-core."""
    import json

    from chainrule.progress import open_store

    home = open_store(tmp_path / "home", fuzzing=False)
    try:
        home.record_submission(EXERCISE, "python", "# done at home", {"status": "pass"})
        (tmp_path / "home.json").write_text(json.dumps(home.export_data()), encoding="utf-8")
    finally:
        home.close()
    base, _, invite, _ = own_class
    context = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(invite)
        submit_form(page, {"name": "Cal", "password": PASSWORD})
        page.locator("nav a", has_text="Cal").click()
        page.wait_for_url(base + "/account")
        page.locator("#import-file").set_input_files(str(tmp_path / "home.json"))
        page.wait_for_function("() => document.getElementById('import-result').textContent !== ''", polling=PAGE_POLL_MS)
        assert "1 submissions" in page.locator("#import-result").text_content()
        exported = page.evaluate("() => fetch('/api/class/progress/export').then(r => r.text())")
        assert "# done at home" in exported
        for width, height in WIDTHS.values():
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], width
    finally:
        context.close()


def test_a_teacher_sees_two_learners_who_never_see_each_other(browser, own_class):
    base, teacher_link, invite, _ = own_class
    teacher = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    teacher.set_default_timeout(30_000)
    teacher_page = teacher.new_page()
    teacher_page.goto(teacher_link)
    submit_form(teacher_page, {"password": PASSWORD})
    assert teacher_page.url == base + "/teacher", teacher_page.content()[:3000]

    ada, ada_page = learner_works(browser, invite, base, "Ada", "6")
    bea, bea_page = learner_works(browser, invite, base, "Bea", "5")
    try:
        # Neither learner sees the other: not in their progress, not in their export, not in the teacher's API.
        for page, other in ((ada_page, "Bea"), (bea_page, "Ada")):
            progress = page.evaluate("() => fetch('/api/progress/backprop').then(r => r.text())")
            assert f"{other}'s own code" not in progress
            exported = page.evaluate("() => fetch('/api/class/progress/export').then(r => r.text())")
            assert f"{other}'s own code" not in exported
            assert page.evaluate("() => fetch('/api/class/overview').then(r => r.status)") == 403

        teacher_page.reload()
        teacher_page.wait_for_selector("tr[data-learner-row='Bea']")
        for name, right in (("Ada", True), ("Bea", False)):
            row = teacher_page.locator(f"tr[data-learner-row='{name}']")
            assert row.locator(f"td[data-exercise='{EXERCISE}'] .cell.passed").count() == 1
            assert row.locator(f"[aria-label$=': {'right' if right else 'wrong'} at the first answer']").count() == 1
        bar_cell = teacher_page.locator(f"tr[data-exercise='{EXERCISE}']")
        assert "100 %" in bar_cell.text_content()
        # The recall FSRS predicts now for the question both answered: the server's text, as it wrote it.
        overview = teacher_page.evaluate("() => fetch('/api/class/overview').then(r => r.json())")
        asked = next(q for q in overview["questions"] if q["question_id"] == QUESTION)
        assert asked["recall_cards"] == 2 and asked["recall_now_text"].endswith(" %")
        recall_cell = teacher_page.locator(f"tr[data-question='{QUESTION}']").locator(
            "td[data-label='Recall now (predicted)']")
        assert recall_cell.text_content() == asked["recall_now_text"]

        csv_text = teacher_page.evaluate("() => fetch('/teacher/gradebook.csv').then(r => r.text())")
        rows = {row[0]: row for row in csv.reader(io.StringIO(csv_text))}
        assert rows["Ada"][3] == "1" and rows["Bea"][3] == "1"  # exercises passed
        assert rows["Ada"][4] == "1" and rows["Bea"][4] == "0"  # quiz right at the first answer

        teacher_page.locator("button[data-learner]", has_text="Bea").click()
        teacher_page.wait_for_selector("#class-timeline pre")
        assert "Bea's own code" in teacher_page.locator("#class-timeline").text_content()

        for width, height in WIDTHS.values():
            teacher_page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(teacher_page) == [], width
            keep_screenshot(teacher_page, f"class-teacher-{width}.png", full_page=True)
            overflow = teacher_page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"the teacher's page scrolls sideways at {width} px"
    finally:
        for context in (teacher, ada, bea):
            context.close()


def test_a_signed_in_learner_runs_an_expression_in_the_playground(browser, own_class):
    """Class mode asks every change for its CSRF token: the playground's run carries it like any other call.
    a*b + c at a = 2, b = -3, c = 0.5 (the first three names' starting values) is -5.5 (by hand)."""
    base, _, invite, _ = own_class
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.set_default_timeout(30_000)
    try:
        page = context.new_page()
        page.goto(invite)
        submit_form(page, {"name": "Dee", "password": PASSWORD})
        page.goto(base + "/playground")
        page.wait_for_selector("main[data-ready='true']")  # the example has run (or failed) by then
        before = int(page.get_attribute("main", "data-runs") or "0")
        page.fill("#pg-expression", "a*b + c")
        page.click("#pg-run")
        page.wait_for_function(f"() => Number(document.querySelector('main').dataset.runs || 0) > {before}", polling=PAGE_POLL_MS)
        assert page.get_attribute("#pg-results", "data-state") == "current", page.text_content("#pg-status")
        assert "out = -5.5" in page.text_content("#pg-status")
    finally:
        context.close()
