"""Where a learner is in the lessons, at desktop (1280 px) and phone (390 px) width, in a real Chromium against
the real server: the contents mark finished sections and coming back continues at the first one not
finished, and the printed address opens the path (saying where to continue) or the one added lesson.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lesson_pages import LESSON, SIZES, SPEC_PREDICTIONS, lesson, open_at

from conftest import WIDTHS, keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------- finished sections, coming back


@pytest.mark.parametrize("size", SIZES)
def test_contents_mark_finished_sections_and_coming_back_continues(
    open_page, server_factory, tmp_path: Path, size
) -> None:
    from chainrule.lessons import exercise_ids, question_ids
    from chainrule.progress import open_store

    store = open_store(tmp_path)
    for key, value in SPEC_PREDICTIONS.items():
        store.save_prediction(LESSON, key, value, True)
    server = server_factory(tmp_path)
    context, page, log = open_at(open_page, server, size)
    lesson(page, server)

    def finished() -> list[str]:
        return page.locator("#lesson-toc li.finished").evaluate_all("nodes => nodes.map(n => n.dataset.section)")

    page.goto(server.origin + "/")
    page.wait_for_selector("main[data-ready='true']")
    assert page.locator(f".path-lesson[data-lesson='{LESSON}']").get_attribute("data-finished") == "false"
    lesson(page, server)
    assert finished() == ["01", "02", "03", "04"]
    assert "(finished)" in page.locator("#lesson-toc li[data-section='04']").text_content()
    assert page.locator("#lesson-finished").is_hidden()
    # Coming back: the page continues at the first section not finished.
    assert "05" in page.locator("#continue-note").text_content()
    top = page.evaluate("document.querySelector('#section-05').getBoundingClientRect().top")
    assert abs(top) < 40, top
    keep_screenshot(page, f"lesson-continue-{size}.png")

    for exercise in exercise_ids(LESSON):
        store.record_submission(exercise, "python", "# passed", {"status": "pass"})
    for question in question_ids(LESSON):
        store.answer_question(LESSON, question, "1", False)
    store.close()
    # The last piece done on the page itself: the contents update without a reload.
    page.locator("#explanation-text").fill("The output starts at 1; each box multiplies by its local slope.")
    page.locator("#section-07 button[type=submit]").click()
    page.wait_for_function("() => document.querySelector('main').dataset.finished === 'true'", timeout=20_000, polling=PAGE_POLL_MS)
    assert finished() == ["01", "02", "03", "04", "05", "06", "07", "08"]
    assert page.locator("#lesson-finished").is_visible()
    assert "finished this lesson" in page.locator("#lesson-finished").text_content()
    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert page.locator("#lesson-finished").is_visible() and page.locator("#continue-note").count() == 0
    page.goto(server.origin + "/")
    page.wait_for_selector("main[data-ready='true']")
    entry = page.locator(f".path-lesson[data-lesson='{LESSON}']")
    assert entry.get_attribute("data-finished") == "true" and "Finished." in entry.text_content()
    keep_screenshot(page, f"lesson-path-finished-{size}.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[size][0]
    assert log.page_errors == []


# ---------------------------------------------------------------- the landing page


@pytest.fixture(scope="module")
def added_lesson_server(tmp_path_factory):
    """A server started with one added lesson (made by `chainrule lessons new`) and a store of its own, for both
    sizes: opening its printed address writes nothing the other size reads (the address signs in, the lesson is
    read), so one server is started and one lesson made, not one each per size."""
    import subprocess
    import sys

    from conftest import start_lesson_server, stop_lesson_server

    folder = tmp_path_factory.mktemp("added")
    made = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "new", "my-own", "--title", "My own", "lessons"],
                          cwd=folder, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    added = start_lesson_server(folder / "data2", extra_args=["--lessons", str(folder / "lessons")])
    try:
        yield added
    finally:
        stop_lesson_server(added.process)


@pytest.mark.parametrize("size", SIZES)
def test_the_printed_address_opens_the_path_or_the_added_lesson(open_page, server_factory, tmp_path: Path, size,
                                                                added_lesson_server) -> None:
    server = server_factory(tmp_path / "data")
    context, page, log = open_at(open_page, server, size)  # opens the printed address
    page.wait_for_selector("main[data-page='path'][data-ready='true']")
    assert page.locator(".path-lesson").count() >= 3 and page.locator("#continue-note").count() == 0
    # Begun a lesson: the path says where to continue.
    assert page.evaluate("""() => fetch('/api/progress/backprop/predictions/n', {method: 'PUT', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json'}, body: JSON.stringify({value: '0.8814'})}).then(r => r.status)""") == 200
    page.reload()
    page.wait_for_selector("main[data-page='path'][data-ready='true']")
    assert page.locator("#continue-note a").get_attribute("href") == "/lessons/backprop"
    added = added_lesson_server
    assert "/lessons/my-own?" in added.url
    context, page, log = open_at(open_page, added, size)
    page.wait_for_selector("main[data-page='lesson'][data-lesson-id='my-own'][data-ready='true']")
