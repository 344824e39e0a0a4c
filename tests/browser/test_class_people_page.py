"""The class's people and feedback on runs in Chromium (issue 29, items 6 and 7): `chainrule class create` and
`chainrule serve --workers 1` as real processes (on PostgreSQL when the session has it, else SQLite); the
teacher, a learner and a second teacher in separate browser contexts.

The teacher copies the invite, makes a new one, adds a second teacher and comments on a line of the learner's
run with Markdown that holds HTML, a javascript: link and an http link; the learner sees it rendered as text
on the lesson page (under the exercise) and on the account page, and answers; the second teacher sees the
answer, renames the learner and closes the class, after which the learner's answer is refused; then keeps the
learner's work as a file and removes them. Every page
involved has no serious axe-core violation at 1280 and 390 px."""

from __future__ import annotations

from pathlib import Path

import pytest
from class_pages import EXERCISE, PASSWORD, class_database, new_context, submit_form

from chainrule.classes import open_class_store
from class_process import ClassServer
from conftest import WIDTHS, axe_violations, keep_screenshot
from polling import PAGE_POLL_MS

HOSTILE = ("Why **twice**? <img src=x onerror=\"document.title='pwned'\"> see [the notes](https://example.org/n) "
           "and [this](javascript:document.title='pwned')\n\n- one\n- two\n\n```\n<b>not bold</b>\n```")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def server(request, tmp_path):
    served = ClassServer.start(tmp_path, class_database(request), class_name="People class")
    try:
        yield served
    finally:
        served.stop()


def no_serious_violations(page) -> None:
    for width, height in WIDTHS.values():
        page.set_viewport_size({"width": width, "height": height})
        assert axe_violations(page) == [], (page.url, width)


def test_teacher_learner_and_second_teacher_manage_people_and_talk_about_a_run(browser, server):
    base = server.base
    ada = new_context(browser, 390, 844)
    ada_page = ada.new_page()
    ada_page.goto(server.invite)
    submit_form(ada_page, {"name": "Ada", "password": PASSWORD})
    ada_id = ada_page.evaluate("() => fetch('/api/class/me').then(r => r.json()).then(me => me.id)")
    store = open_class_store(Path(server.env["CHAINRULE_DATA_DIR"]), server.env.get("CHAINRULE_DATABASE"))
    try:  # a run as the grader keeps one
        store.for_learner(ada_id).record_submission(EXERCISE, "python", "x = 1\ny = x * 2\nprint(y)\n",
                                                    {"status": "fail"})
    finally:
        store.close()

    teacher = new_context(browser)
    teacher.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = teacher.new_page()
    page.goto(server.teacher_link)
    submit_form(page, {"password": PASSWORD})
    assert page.url == base + "/teacher"
    people = page.locator("#class-people")
    invite = people.locator("#invite-link")
    assert invite.input_value() == server.invite  # the link `chainrule class create` printed
    assert people.locator("#people-seats-text").text_content() == "1 learner; no seat limit"
    people.get_by_role("button", name="Copy").click()
    page.wait_for_function("() => document.getElementById('invite-said').textContent === 'Copied.'", polling=PAGE_POLL_MS)
    assert page.evaluate("() => navigator.clipboard.readText()") == server.invite
    people.get_by_role("button", name="Make a new invite link").click()
    page.wait_for_function("old => document.getElementById('invite-link').value !== old", arg=server.invite, polling=PAGE_POLL_MS)
    assert page.evaluate("() => document.activeElement.id") == "invite-link"
    people.locator("#teacher-name").fill("Ms Brown")
    people.get_by_role("button", name="Add the teacher").click()
    second_link = people.locator("#teacher-link").input_value()
    assert second_link.startswith(base + "/set-password/")
    assert "it works for 7 days" in people.locator("label[for='teacher-link']").text_content()

    feedback = page.locator("#class-feedback")
    feedback.locator("#feedback-learner").select_option(label="Ada")
    run = feedback.locator("article.run-thread")
    run.locator("select[name=line]").select_option(label="line 2")
    run.locator("textarea").fill(HOSTILE)
    run.get_by_role("button", name="Comment").click()
    comment = run.locator("li.comment")
    comment.wait_for()
    assert "On line 2" in comment.locator(".comment-meta").text_content()
    no_serious_violations(page)

    def rendered_safely(where) -> None:
        body = where.locator(".comment-body").first
        assert body.locator("strong").text_content() == "twice"
        assert body.locator("img, script, b").count() == 0  # HTML in a comment stays text
        assert "<img src=x" in body.text_content() and "<b>not bold</b>" in body.locator("pre").text_content()
        [link] = body.locator("a").all()  # the javascript: link is text, the https one a link
        assert (link.get_attribute("href"), link.get_attribute("rel")) == ("https://example.org/n", "noopener noreferrer")
        assert "[this](javascript:" in body.text_content()
        assert body.locator("li").all_text_contents() == ["one", "two"]

    rendered_safely(comment)

    # Ada sees it under the exercise on the lesson page, and answers.
    ada_page.goto(base + "/lessons/backprop")
    thread = ada_page.locator(f"article[data-exercise='{EXERCISE}'] .teacher-comments")
    thread.locator("li.comment").first.wait_for()
    rendered_safely(thread)
    assert ada_page.title() != "pwned"
    thread.locator("select[name=line]").select_option(label="line 2")
    thread.locator("textarea").fill("It *doubles* x.")
    thread.get_by_role("button", name="Answer").click()
    thread.locator("li.comment").nth(1).wait_for()
    assert thread.locator("li.comment").nth(1).locator("em").text_content() == "doubles"
    ada_page.goto(base + "/account")
    ada_page.locator("#comment-threads li.comment").nth(1).wait_for()
    rendered_safely(ada_page.locator("#comment-threads"))
    no_serious_violations(ada_page)
    keep_screenshot(ada_page, "account-comments-390.png", full_page=True)

    # The second teacher signs up with the link, sees Ada's answer, renames her and closes the class.
    brown = new_context(browser, 390, 844)
    brown_page = brown.new_page()
    brown_page.goto(second_link)
    submit_form(brown_page, {"password": PASSWORD})
    assert brown_page.url == base + "/teacher"
    latest = brown_page.locator("#class-feedback .latest-answers li.comment")
    assert "doubles" in latest.locator("em").text_content()
    latest.get_by_role("button", name="Open Ada's runs").click()
    answer = brown_page.locator("#feedback-runs li.comment").nth(1)
    assert "Ada" in answer.locator(".comment-meta").text_content() and "doubles" in answer.text_content()
    row = brown_page.locator("#class-people li[data-person='Ada']")
    row.get_by_role("button", name="Rename Ada").click()
    row.get_by_role("textbox", name="New name").fill("Ada L.")
    row.get_by_role("button", name="Save the name").click()
    brown_page.locator("#class-people li[data-person='Ada L.']").wait_for()
    brown_page.locator("#class-people").get_by_role("button", name="Close the class").click()
    brown_page.wait_for_function("() => document.getElementById('people-state').textContent.includes('closed')", polling=PAGE_POLL_MS)
    assert brown_page.locator("#invite-link").count() == 0
    no_serious_violations(brown_page)
    keep_screenshot(brown_page.locator("#class-people"), "class-people-390.png")

    # Closed: Ada reads, but her answer is refused with the reason on the page.
    ada_page.goto(base + "/account")
    assert "Ada L." in ada_page.locator("main").text_content()
    ada_page.locator("#comment-threads textarea").first.fill("One more thing")
    ada_page.locator("#comment-threads").get_by_role("button", name="Answer").first.click()
    ada_page.locator("#messages .message.error").wait_for()
    assert "is closed" in ada_page.locator("#messages").text_content()

    # The second teacher keeps Ada's work as a file, then removes her: every session of hers ends.
    row = brown_page.locator("#class-people li[data-person='Ada L.']")
    row.get_by_role("button", name="Remove Ada L.").click()
    with brown_page.expect_download() as download:
        row.get_by_role("link", name="Download Ada L.'s work first").click()
    assert "x = 1" in Path(download.value.path()).read_text(encoding="utf-8")
    row.get_by_role("button", name="Remove Ada L. for good").click()
    brown_page.wait_for_function("() => document.getElementById('people-said').textContent.startsWith('Removed Ada L.')", polling=PAGE_POLL_MS)
    assert ada_page.evaluate("() => fetch('/api/class/me').then(r => r.status)") == 401
    for made in (ada, teacher, brown):
        made.close()
