"""A graded run as a job, in Chromium (issue 23): `chainrule serve` on PostgreSQL with no worker yet; the page
says the run is queued, says so again after a reload (it resumes the job), says when the database is away and
carries on, and shows the result once a `chainrule worker` process grades it."""

from __future__ import annotations

import pytest
from class_pages import EXERCISE, database_away, says, signed_in_on_the_lesson, start_worker
from lesson_pages import reference, set_editor_text

from conftest import stop_lesson_server

STATUS = f"article[data-exercise='{EXERCISE}'] .run-status"


def status_says(page, words: str) -> None:
    says(page, STATUS, words)


@pytest.mark.no_worker
def test_the_page_follows_a_queued_run_across_a_reload_until_a_worker_grades_it(browser, class_server):
    context, page, url = signed_in_on_the_lesson(browser, class_server)
    env = class_server[3]
    worker = None
    try:
        set_editor_text(page, EXERCISE, reference(EXERCISE, "python"))
        with page.expect_response(lambda r: r.url.endswith("/api/grade")) as response:
            page.locator(f"article[data-exercise='{EXERCISE}'] button.run-tests").click()
        assert response.value.status == 202, response.value.text()
        status_says(page, "Queued: your run is next for a grader.")

        page.reload()
        status_says(page, "Queued: your run is next for a grader.")
        assert page.locator(f"article[data-exercise='{EXERCISE}'] button.run-tests").is_disabled()

        # PostgreSQL away for a moment: the page says so, keeps the run, and carries on when it is back.
        with database_away(url):
            status_says(page, "The class server cannot reach its database; your run is kept.")
        worker = start_worker(env)
        status_says(page, "All tests passed.")
        assert page.locator(f"article[data-exercise='{EXERCISE}'] .results").get_attribute("data-status") == "pass"
        assert page.locator("#messages .message").count() == 0  # the outage was said in the run's status, not as an error
    finally:
        if worker is not None:
            stop_lesson_server(worker)
        context.close()
