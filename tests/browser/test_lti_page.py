"""Issue 30 in Chromium: chainrule inside an LMS's course page, both real processes (tests/lti_platform.py with
lti1p3platform on 127.0.0.1, `chainrule serve` on localhost: another site). A teacher adds a lesson by deep
linking inside the LMS's frame; a learner launches it in the frame, passes both exercises in the lesson page,
and each change of the lesson's score reaches the LMS gradebook exactly once; the teacher's page shows the
LMS's roster (who has not opened chainrule yet); another learner opens the link in a window of its own. The
picker and the teacher's page pass axe-core. The frame's cookies are partitioned (CHIPS): Chromium here blocks third-party cookies that
are not."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lesson_pages import reference  # noqa: E402

from conftest import axe_violations  # noqa: E402
from lti_world import LtiWorld  # noqa: E402
from polling import PAGE_POLL_MS

LESSON = "computational-graphs"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with LtiWorld.start(tmp_path_factory.mktemp("lti-browser")) as started:
        yield started


def tool_frame(page):
    page.wait_for_selector("#tool")
    return page.locator("#tool").element_handle().content_frame()


def pass_exercise(page, frame, exercise: str) -> None:
    content = frame.locator(f"[data-editor='{exercise}'] .cm-content")
    content.click()
    page.keyboard.press("Control+A")
    content.evaluate("""(node, text) => {
        const data = new DataTransfer();
        data.setData('text/plain', text);
        node.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
    }""", reference(exercise, "python"))
    frame.locator(f"article[data-exercise='{exercise}'] button.run-tests").click()
    frame.wait_for_function(
        "id => { const r = document.querySelector(`article[data-exercise='${id}'] .results`);"
        " return r && !r.hasAttribute('aria-busy') && r.dataset.status; }", arg=exercise, timeout=120_000, polling=PAGE_POLL_MS)
    status = frame.locator(f"article[data-exercise='{exercise}'] .results").get_attribute("data-status")
    assert status == "pass", frame.locator(f"article[data-exercise='{exercise}'] .results").text_content()


def test_launch_lesson_pass_and_score_in_the_lms_gradebook_exactly_once(browser, world):
    teacher = browser.new_context(viewport={"width": 1400, "height": 1000}, bypass_csp=True)  # axe-core goes in
    learner = browser.new_context(viewport={"width": 1400, "height": 1000})
    for context in (teacher, learner):
        context.set_default_timeout(60_000)
    try:
        # The teacher adds the lesson from inside the LMS (deep linking in its frame).
        page = teacher.new_page()
        page.goto(f"{world.lms_url}/course/physics?user=hopper&link=dl:physics")
        frame = tool_frame(page)
        frame.wait_for_selector("form.lti-pick")
        assert axe_violations(frame) == []
        frame.locator(f"#choice-{LESSON}").check()
        frame.locator("form.lti-pick button[type=submit]").click()
        frame.wait_for_selector("p.added")  # the LMS's page, in the frame: the link is made
        link = frame.locator("p.added").get_attribute("data-link")
        columns = [item for item in world.state()["line_items"].values() if item.get("resourceId") == LESSON]
        assert len(columns) == 1 and columns[0]["scoreMaximum"] == 8, columns

        # A learner opens it in the course page's frame, and passes both exercises.
        page = learner.new_page()
        page.goto(f"{world.lms_url}/course/physics?user=ada&link={link}")
        frame = tool_frame(page)
        frame.wait_for_selector("main[data-ready='true']")
        assert frame.url.endswith(f"/lessons/{LESSON}"), frame.url
        cookies = {cookie["name"]: cookie for cookie in learner.cookies(world.tool_url)}
        assert cookies["chainrule_session"]["sameSite"] == "None" and cookies["chainrule_session"]["secure"]

        def posts() -> list[dict]:
            return [post for post in world.state()["score_posts"] if post["userId"] == "ada"
                    and post["line_item"] == columns[0]["id"]]

        pass_exercise(page, frame, "forward-values")
        # The sender sends the score as it stands every 2 s: a second pass within those 2 s would be sent as
        # one change (right, but then this test would not see each change once).
        world.wait(lambda: [post for post in posts() if post["scoreGiven"] == 3], what="the score after one pass")
        pass_exercise(page, frame, "forward-any-order")

        world.wait(lambda: [post for post in posts() if post["scoreGiven"] == 4], what="the score after both passes")
        result = world.state()["results"][f"{columns[0]['id']} ada"]
        assert result["scoreGiven"] == 4 and result["scoreMaximum"] == 8

        # The teacher's page, in the teacher's frame: the LMS's roster (who has not opened chainrule yet) and
        # the scores, all in the gradebook.
        teacher_frame = tool_frame(teacher.pages[0])
        teacher_frame.goto(world.tool_url + "/teacher")
        teacher_frame.wait_for_selector("tr[data-member='Cyd Charisse']")
        assert teacher_frame.locator("tr[data-member='Cyd Charisse'] td").nth(2).text_content() == "not yet"
        assert teacher_frame.locator("tr[data-member='Ada Lovelace'] td").nth(2).text_content() == "yes"
        assert "Every score is in the LMS gradebook" in teacher_frame.locator("#lms-scores").text_content()
        assert axe_violations(teacher_frame) == []
        # The whole path's column is the teacher's choice, off until they turn it on (issue 39, item 8).
        toggle = teacher_frame.get_by_label("A column for the whole path (72 points: every lesson's sections)")
        assert not toggle.is_checked()
        assert teacher_frame.locator("#path-column-state").text_content().startswith("Off: only the lessons linked")
        toggle.check()
        teacher_frame.wait_for_function("() => document.querySelector('#path-column-state').textContent.startsWith('On:')", polling=PAGE_POLL_MS)
        assert teacher_frame.evaluate("fetch('/api/class/lms/path-column').then(r => r.json())")["path_column"] is True
        # Turned on, the column makes the score sender score every learner again: once Ada's whole-path score
        # has reached its own column, a round has looked at her lesson's score again after both were sent, and
        # the lesson's column still has each change once.
        world.wait(lambda: [post for post in world.state()["score_posts"] if post["userId"] == "ada"
                            and post["line_item"] != columns[0]["id"]], what="the whole path's score")
        given = [post["scoreGiven"] for post in posts()]
        assert given == [3, 4], given  # started (the reading, 01-03), then the exercises' section (05): once each
        toggle.uncheck()
        teacher_frame.wait_for_function("() => document.querySelector('#path-column-state').textContent.startsWith('Off:')", polling=PAGE_POLL_MS)

        # Another learner opens the same link in a window of its own.
        page = learner.new_page()
        page.goto(f"{world.lms_url}/course/physics?user=bea&link={link}&window=1")
        with page.expect_popup() as opened:
            page.locator("#open").click()
        window = opened.value
        window.wait_for_selector("main[data-ready='true']")
        assert re.search(rf"/lessons/{LESSON}$", window.url), window.url
        assert window.evaluate("fetch('/api/class/me').then(r => r.json())")["name"] == "Bea Noether"
    finally:
        teacher.close()
        learner.close()
