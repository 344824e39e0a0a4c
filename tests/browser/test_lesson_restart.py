"""An open lesson tab across a restart of its server, at desktop (1280 px) and phone (390 px) width, in a real
Chromium: a signed-in tab keeps working (and only it), and what was typed during the outage reaches the
restarted server.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from lesson_pages import LESSON, SIZES, lesson, open_at, saved_code

from conftest import kill_lesson_server, start_lesson_server, stop_lesson_server
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------- a signed-in tab survives a restart


@pytest.mark.parametrize("size", SIZES)
def test_a_signed_in_tab_survives_a_restart(open_page, server_factory, tmp_path: Path, size, browser) -> None:
    from conftest import free_port

    port = free_port()
    first = server_factory(tmp_path, port)
    context, page, log = open_at(open_page, first, size)
    lesson(page, first, complete=False)
    secret = tmp_path / "session_secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    stop_lesson_server(first.process)

    second = server_factory(tmp_path, port)
    assert second.token != first.token  # every start prints a fresh link
    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert page.locator("#messages .message").count() == 0
    saved = page.evaluate(
        """() => fetch('/api/progress/backprop/predictions/n', {method: 'PUT',
              headers: {'Content-Type': 'application/json'}, body: JSON.stringify({value: 0.88})}).then(r => r.status)""")
    assert saved == 200
    # The old link does not work on the new server, and a browser never signed in is still refused.
    stranger = browser.new_context()
    try:
        response = stranger.new_page().goto(first.url)
        assert response.status == 401
        response = stranger.new_page().goto(f"{second.origin}/lessons/{LESSON}")
        assert response.status == 401
    finally:
        stranger.close()
    assert log.page_errors == []


# ---------------------------------------------------------------- a restart does not strand the tab


@pytest.mark.parametrize("size", SIZES)
def test_the_open_tab_survives_a_restart_and_keeps_what_was_typed(open_page, tmp_path: Path, size) -> None:
    """Kill the server by its PID, type during the outage, start it again with the same command: the
    same tab reconnects by itself, what was typed reaches the server, and the lesson goes on."""
    from conftest import free_port

    data = tmp_path / "data"
    data.mkdir()
    # The port of "the last start" (a free one of our own: another server may hold the default meanwhile).
    (data / "lesson-port").write_text(f"{free_port()}\n")
    first = start_lesson_server(data, remembered_port=True)
    second = None
    try:
        context, page, log = open_at(open_page, first, size)
        lesson(page, first)
        exercise = page.locator("article.exercise").first.get_attribute("data-exercise")
        kill_lesson_server(first)
        editor = page.locator(f".editor[data-editor='{exercise}'] .cm-content")
        editor.click()
        page.keyboard.press("Control+End")
        page.keyboard.type("\n# typed while the server was down\n")
        page.wait_for_selector("html[data-connection='lost'] #connection-notice")
        # One notice for the outage, not an error per failed call.
        assert page.locator("#messages .message").count() == 1
        assert "reconnects by itself" in page.locator("#connection-notice").inner_text()
        stored = page.evaluate("k => localStorage.getItem(k)", f"chainrule:draft:{exercise}/python")
        assert "# typed while the server was down" in stored

        second = start_lesson_server(data, remembered_port=True)
        assert second.origin == first.origin  # the same address: the tab's links and cookie still work
        page.wait_for_selector("html[data-connection='ok']", timeout=30_000)
        assert page.locator("#connection-notice").count() == 0
        # The draft leaves this browser once the restarted server has it.
        page.wait_for_function("k => localStorage.getItem(k) === null", arg=f"chainrule:draft:{exercise}/python", polling=PAGE_POLL_MS)
        assert "# typed while the server was down" in saved_code(page)[f"{exercise}/python"]
        # Continue in the same tab: a prediction is checked and saved by the restarted server.
        answer = page.evaluate(
            """() => fetch('/api/progress/backprop/predictions/dn', {method: 'PUT', credentials: 'same-origin',
                 headers: {'Content-Type': 'application/json'}, body: JSON.stringify({value: 0.5})}).then(r => r.status)""")
        assert answer == 200
        page.reload()
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert "# typed while the server was down" in page.locator(f".editor[data-editor='{exercise}'] .cm-content").inner_text()
        assert not log.page_errors
    finally:
        for server in (first, second):
            if server is not None:
                stop_lesson_server(server.process)
