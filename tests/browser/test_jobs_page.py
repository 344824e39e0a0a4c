"""A graded run as a job, in Chromium (issue 23): `chainrule serve` on PostgreSQL with no worker yet; the page
says the run is queued, says so again after a reload (it resumes the job), says when the database is away and
carries on, and shows the result once a `chainrule worker` process grades it."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import stop_lesson_server
from test_class_page import EXERCISE, PASSWORD, class_server, start_worker, submit_form  # noqa: F401 (fixture)
from test_lesson_page import reference, set_editor_text

@contextmanager
def database_away(url: str):
    """New connections fail (the socket is hidden) and the open ones are ended, until the block ends."""
    import psycopg

    place = Path(re.search(r"host=([^&]+)", url).group(1)) / ".s.PGSQL.5432"
    hidden = place.with_name("away")
    with psycopg.connect(url, autocommit=True) as admin:
        place.rename(hidden)
        try:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
            yield
        finally:
            hidden.rename(place)


STATUS = f"article[data-exercise='{EXERCISE}'] .run-status"


def says(page, selector: str, words: str) -> None:
    """Wait until the element's text includes ``words``."""
    page.wait_for_function("([selector, words]) => document.querySelector(selector)?.textContent.includes(words)",
                           arg=[selector, words])


def status_says(page, words: str) -> None:
    says(page, STATUS, words)


def signed_in_on_the_lesson(browser, class_server):
    """(context, page, the class database's URL): Ada joined and on the lesson with the exercises."""
    base, _, invite, env = class_server
    if "CHAINRULE_DATABASE" not in env:
        pytest.skip("runs wait for workers, and the class database can go away, only in a class kept in PostgreSQL")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(invite)
    submit_form(page, {"name": "Ada", "password": PASSWORD})
    page.goto(base + "/lessons/backprop")
    page.wait_for_selector(f"[data-editor='{EXERCISE}'] .cm-content")
    return context, page, env["CHAINRULE_DATABASE"]


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
