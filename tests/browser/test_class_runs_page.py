"""What the exercise page says about code and runs when something went wrong, in Chromium (issue 27, "also
from the walk"): `chainrule serve` on PostgreSQL for the first two, `chainrule lesson` for the third.

- The class database away while a learner types: the page says the code is kept and not saved yet, sends
  it again, and once the database is back says "Saved" and takes its error message away.
- A run that ended without a grade (its workers died with it twice): after a reload the page says so, and
  shows the older result as the last *graded* run, not as "your last run".
- A stored run without a verdict is said by its status, never "Verdict: undefined (undefined)".
"""

from __future__ import annotations

import pytest
from class_pages import EXERCISE, database_away, says, signed_in_on_the_lesson
from lesson_pages import reference, set_editor_text

from polling import PAGE_POLL_MS

ARTICLE = f"article[data-exercise='{EXERCISE}']"


@pytest.mark.no_worker
def test_code_typed_while_the_database_is_away_is_saved_when_it_is_back_and_the_page_says_so(browser, class_server):
    context, page, url = signed_in_on_the_lesson(browser, class_server)
    try:
        with database_away(url):
            set_editor_text(page, EXERCISE, "# typed while the class database was away\n")
            says(page, f"{ARTICLE} .save-status", "Not saved")
            says(page, "#messages", "Could not save your code (HTTP 503)")
        says(page, f"{ARTICLE} .save-status", "Saved (Python).")
        page.wait_for_function("() => !document.querySelector('#messages .message')", polling=PAGE_POLL_MS)
        assert page.locator("#messages").is_hidden()
        page.reload()
        page.wait_for_function("id => window.chainruleEditors && window.chainruleEditors[id]", arg=EXERCISE, polling=PAGE_POLL_MS)
        assert page.evaluate("id => window.chainruleEditors[id].getText()", EXERCISE).startswith(
            "# typed while the class database was away")
    finally:
        context.close()


@pytest.mark.no_worker
def test_after_a_reload_the_page_says_the_latest_run_was_not_graded(browser, class_server):
    from chainrule.grading import grade
    from chainrule.progress import open_store
    from chainrule.progress.run_jobs import RunJobs

    context, page, url = signed_in_on_the_lesson(browser, class_server)
    store = open_store(database=url)
    try:
        ada = page.evaluate("() => fetch('/api/class/me').then(r => r.json()).then(me => me.id)")
        solution = reference(EXERCISE, "python")
        store.for_learner(ada).record_submission(EXERCISE, "python", solution, grade(EXERCISE, "python", solution))
        # A later run whose workers died with it twice: it ends "crashed", not graded.
        jobs = RunJobs(store)
        job, _ = jobs.submit(ada, EXERCISE, "python", "# a later try\n" + solution, "a-later-click")
        for _ in range(3):  # taken, taken again after its worker died, then ended
            jobs.start(job, "a-worker-that-dies")

        page.reload()
        results = f"{ARTICLE} .results"
        says(page, results, "Your latest run was not graded.")
        text = page.locator(results).inner_text()
        assert "The grader stopped 2 times while running this code" in text
        assert "your last graded run" in text and "your last run" not in text.replace("your last graded run", "")
        assert page.locator(results).get_attribute("data-status") == "pass"  # the older result, said as such
    finally:
        store.close()
        context.close()


def test_a_stored_run_without_a_verdict_is_said_by_its_status(open_page, server_factory, tmp_path):
    from chainrule.progress import open_store

    data = tmp_path / "data"
    store = open_store(data)
    try:  # a row as an older version or a file brought in may hold it: a status, no verdict
        store.record_submission(EXERCISE, "python", "def neuron_grads(*a):\n    return []\n",
                                {"status": "fail", "tests": [], "message": "1 of 3 tests passed."})
    finally:
        store.close()
    server = server_factory(data)
    context, page, log = open_page(server, wait_until="commit")
    page.goto(f"{server.origin}/lessons/backprop")
    results = f"{ARTICLE} .results"
    says(page, results, "Some tests failed.")
    text = page.locator(results).inner_text()
    assert "undefined" not in text and "1 of 3 tests passed." in text
    assert page.locator(results).get_attribute("data-verdict") == ""
    assert not log.page_errors
