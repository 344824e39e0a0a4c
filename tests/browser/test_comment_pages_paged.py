"""Issue 41, item 3, in Chromium: a run with more comments than a view shows (the latest 50) says so, and
"Show earlier comments" loads the rest 50 at a time, on the teacher's page and the learner's account page,
against `chainrule serve --workers 1` as a real process (SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest
from class_pages import EXERCISE, PASSWORD, new_context, submit_form

from chainrule.classes import open_class_store
from class_process import ClassServer

COMMENTS = 120  # a view shows 50: two pages back

pytestmark = pytest.mark.timeout(300)


def test_earlier_comments_load_on_request_on_both_pages(browser, tmp_path):
    server = ClassServer.start(tmp_path, None, class_name="Paged class")
    contexts = []  # closed at the end: a context left open keeps its pages in the session's browser
    try:
        ada = new_context(browser)
        contexts.append(ada)
        ada_page = ada.new_page()
        ada_page.goto(server.invite)
        submit_form(ada_page, {"name": "Ada", "password": PASSWORD})
        ada_id = ada_page.evaluate("() => fetch('/api/class/me').then(r => r.json()).then(me => me.id)")
        store = open_class_store(Path(server.env["CHAINRULE_DATA_DIR"]), None)
        try:  # a run as the grader keeps one, and the teacher's comments on it as the class keeps them
            run_id = store.for_learner(ada_id).record_submission(EXERCISE, "python", "x = 1\n", {"status": "fail"})

            def comment(conn):
                teacher = conn.execute("SELECT id FROM accounts WHERE role = 'teacher'").fetchone()[0]
                for number in range(COMMENTS):
                    conn.execute("INSERT INTO comments (learner_id, submission_id, author_id, line, body, at) "
                                 "VALUES (?, ?, ?, NULL, ?, ?)", (ada_id, run_id, teacher, f"note {number}",
                                                                   "2026-01-01T00:00:00+00:00"))

            store.database.write(comment)
        finally:
            store.close()

        teacher = new_context(browser)
        contexts.append(teacher)
        page = teacher.new_page()
        page.goto(server.teacher_link)
        submit_form(page, {"password": PASSWORD})
        feedback = page.locator("#class-feedback")
        feedback.locator("#feedback-learner").select_option(label="Ada")
        for where in (feedback, None):
            if where is None:  # the learner's account page
                ada_page.goto(server.base + "/account")
                where = ada_page.locator("#comment-threads")
            run = where.locator("article.run-thread")
            run.locator("li.comment").first.wait_for()
            assert run.locator("li.comment").count() == 50
            assert run.locator("li.comment").last.text_content().endswith(f"note {COMMENTS - 1}")
            earlier = run.get_by_role("button", name="Show earlier comments (70 more)")
            earlier.click()
            run.get_by_role("button", name="Show earlier comments (20 more)").click()
            run.locator("li.comment").nth(COMMENTS - 1).wait_for()
            assert run.locator("li.comment").first.locator(".comment-body").text_content() == "note 0"
            assert run.locator("li.comment").count() == COMMENTS
            assert run.get_by_role("button", name="Show earlier comments", exact=False).is_hidden()
    finally:
        for context in contexts:
            context.close()
        server.stop()
