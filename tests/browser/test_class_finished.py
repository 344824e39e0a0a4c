"""Issue 28, item 2: "finished" has one rule and one builder of its inputs. A learner walks through a lesson
in Chromium against `chainrule serve` (a process); at each step the learner's lesson page, the path page, the
teacher's grid and the CSV gradebook agree on the sections finished. Before, a learner who typed code but
never ran it saw sections 01-03 finished while the teacher saw none."""

from __future__ import annotations

import csv
import io

from class_pages import EXERCISE, PASSWORD, submit_form
from lesson_pages import set_editor_text

from polling import PAGE_POLL_MS

CHOICE_OR_NUMBER = {"product-gradient": "6", "addition-node": "1", "tanh-gradient": "0.51", "reverse-order": "1",
                    "sum-of-uses": "8"}


def change(page, method: str, url: str, body: dict) -> None:
    """A change as the page's own script sends it (with class mode's CSRF token)."""
    status = page.evaluate(
        """async ([method, url, body]) => {
            const csrf = decodeURIComponent(document.cookie.match(/(?:^|; )chainrule_csrf=([^;]+)/)[1]);
            const answer = await fetch(url, {method, body: JSON.stringify(body), credentials: "same-origin",
                headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}});
            return answer.status;
        }""", [method, url, body])
    assert status == 200, (method, url, status)


def code_kept(page, key: str) -> str | None:
    """The code the server keeps under ``key`` (exercise/language), read by the page's own session."""
    return page.evaluate("key => fetch('/api/progress/backprop').then(r => r.json()).then(p => p.code[key] ?? null)", key)


def views(base: str, learner, teacher) -> dict:
    """Sections finished in backprop as each view shows them (nothing else of the path is touched)."""
    learner.goto(base + "/lessons/backprop")
    learner.wait_for_selector("#lesson-toc li[data-section]")
    learner.wait_for_function("() => document.getElementById('main').dataset.finished !== undefined", polling=PAGE_POLL_MS)
    ticked = learner.eval_on_selector_all("#lesson-toc li.finished[data-section]", "items => items.map(i => i.dataset.section)")
    learner.goto(base + "/")
    entry = learner.locator("li[data-lesson='backprop']")
    entry.locator(".lesson-progress-block").wait_for()
    path_state = entry.locator(".lesson-progress-block").get_attribute("data-state")
    teacher.goto(base + "/teacher")
    row = teacher.locator("tr[data-learner-row='Ada']")
    row.wait_for()
    grid = int(row.locator("td").nth(0).text_content().split(" of ")[0])
    rows = {r[0]: r for r in csv.reader(io.StringIO(
        teacher.evaluate("() => fetch('/teacher/gradebook.csv').then(r => r.text())")))}
    return {"lesson page": len(ticked), "grid": grid, "csv": int(rows["Ada"][1]), "path": path_state,
            "sections": ticked}


def test_every_view_of_a_learner_agrees_on_what_is_finished(browser, class_server):
    base, teacher_link, invite, _ = class_server
    teacher_context = browser.new_context(viewport={"width": 1280, "height": 900})
    learner_context = browser.new_context(viewport={"width": 1280, "height": 900})
    teacher_context.set_default_timeout(30_000)
    learner_context.set_default_timeout(30_000)
    try:
        teacher = teacher_context.new_page()
        teacher.goto(teacher_link)
        submit_form(teacher, {"password": PASSWORD})
        learner = learner_context.new_page()
        learner.goto(invite)
        submit_form(learner, {"name": "Ada", "password": PASSWORD})

        def step(expected_sections: list[str], path_state: str) -> None:
            seen = views(base, learner, teacher)
            assert seen["sections"] == expected_sections, seen
            assert seen["lesson page"] == seen["grid"] == seen["csv"] == len(expected_sections), seen
            assert seen["path"] == path_state, seen

        step([], "not started")
        # Code typed, never run: the reading before the work is finished, on every view.
        learner.goto(base + "/lessons/backprop")
        learner.wait_for_selector(f"[data-editor='{EXERCISE}'] .cm-content")
        typed = "def f():\n    return 1  # my first try\n"
        set_editor_text(learner, EXERCISE, typed)
        # Saved means the server keeps this text. (wait_for_function does not await a promise, so a fetch
        # there was no wait at all: the page moved on before the save and saw no code now and then.)
        learner.locator(f"[data-editor='{EXERCISE}']").locator("xpath=ancestor::*[.//*[contains(@class, 'save-status')]][1]")\
            .locator(".save-status", has_text="Saved (Python).").wait_for()
        assert code_kept(learner, f"{EXERCISE}/python") == typed
        step(["01", "02", "03"], "in progress")
        for key in ("n", "o", "dn", "db", "dw1", "dw2"):
            change(learner, "PUT", f"/api/progress/backprop/predictions/{key}", {"value": 0.5})
        step(["01", "02", "03", "04"], "in progress")
        for question, answer in CHOICE_OR_NUMBER.items():
            change(learner, "POST", f"/api/lessons/backprop/quiz/{question}", {"answer": answer})
        step(["01", "02", "03", "04", "06"], "in progress")
        change(learner, "PUT", "/api/lessons/backprop/explanation", {"text": "In my own words.", "ticked": []})
        step(["01", "02", "03", "04", "06", "07"], "in progress")
    finally:
        teacher_context.close()
        learner_context.close()
