"""Issue 30, item 7 in Chromium: a learner joins a class through a real OpenID provider (npm's oidc-provider
as a process, its own sign-in and consent pages), a provider that is down is said on the page and the password
form stays, and a token the provider issued for another audience is refused with its cause."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conftest import axe_violations  # noqa: E402
from oidc_world import OidcWorld  # noqa: E402
from polling import PAGE_POLL_MS


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with OidcWorld.start(tmp_path_factory.mktemp("sso-browser")) as started:
        yield started


def through_provider(page, login: str) -> None:
    """The provider's development pages: its sign-in (any password), then its consent."""
    page.wait_for_selector("input[name=login]")
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "anything")
    page.click("button[type=submit]")
    page.wait_for_selector("button[type=submit]")
    with page.expect_navigation(url=lambda url: url.startswith("http://localhost")):
        page.click("button[type=submit]")


def test_sign_in_through_a_real_provider_a_provider_down_and_a_token_for_another_audience(browser, world):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    try:
        page = context.new_page()
        page.goto(world.invite)
        page.click("text=Join with School")
        through_provider(page, "ada-7f3")
        page.wait_for_selector("main[data-ready='true']")
        assert page.url == world.tool_url + "/"
        assert page.evaluate("fetch('/api/class/me').then(r => r.json())")["name"] == "Ada Lovelace"

        other = context.browser.new_context(viewport={"width": 390, "height": 844})  # a phone, signed out
        other.set_default_timeout(60_000)
        try:
            page = other.new_page()
            page.goto(world.tool_url + "/sign-in")
            page.click("text=Sign in with Down")
            page.wait_for_selector("[data-cause='provider-unreachable']")
            assert "cannot be reached" in page.locator("main").text_content()
            page.click("text=Back to the sign-in page")
            page.wait_for_selector("input[name=password]")  # the password form is still there

            world.set_mode("School", id_token_audience="another-application")
            try:
                page.click("text=Sign in with School")
                through_provider(page, "ada-7f3")
                page.wait_for_selector("[data-cause='wrong-audience']")
            finally:
                world.set_mode("School", id_token_audience="")
            assert page.evaluate("fetch('/api/class/me').then(r => r.status)") == 401
        finally:
            other.close()
    finally:
        context.close()


def password_form(page, values: dict[str, str]) -> None:
    for name, value in values.items():
        page.locator(f"input[name='{name}']").fill(value)
    with page.expect_navigation():
        page.locator("form.class-form button[type=submit]").click()


def test_turning_passwords_off_names_who_would_be_locked_out_and_asks_first(browser, world):
    """Issue 39 item 7 on the teacher's page: Cyd joined with a password and has no linked account; turning
    passwords off lists her, with how many, and goes ahead only when the teacher confirms; then her password
    sign-in says what she can do instead of sending her to a school account she has not linked."""
    from oidc_world import PASSWORD

    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    context.set_default_timeout(60_000)
    try:
        page = context.new_page()
        page.goto(world.invite)
        password_form(page, {"name": "Cyd", "password": PASSWORD})
        context.clear_cookies()
        page.goto(world.teacher_link)
        password_form(page, {"password": PASSWORD})
        page.wait_for_selector("#lock-out-warning")  # the teacher's own account is not linked yet: no toggle
        assert page.locator("#passwords-toggle").count() == 0
        assert page.locator("#lock-out-warning").text_content().startswith("Passwords stay on while a teacher")
        page.click("text=Link with School")
        through_provider(page, "hopper-9a0")
        page.wait_for_selector("#passwords-toggle")
        page.click("#passwords-toggle")
        asking = page.get_by_role("group", name="Turning passwords off locks out 1 person: they have no linked "
                                                "school account.")
        asking.wait_for()
        assert asking.locator("[data-locked-out]").all_text_contents() == ["Cyd (learner)"]
        assert axe_violations(page) == []
        page.get_by_role("button", name="Keep passwords on").click()
        asking.wait_for(state="detached")
        assert page.locator("#sign-in-state").text_content().startswith("Learners sign in with a password")
        page.click("#passwords-toggle")
        page.get_by_role("button", name="Turn passwords off anyway").click()
        page.wait_for_function("() => document.querySelector('#sign-in-state').textContent.startsWith('Passwords are off')", polling=PAGE_POLL_MS)
        assert page.locator("#lock-out-warning").text_content() == "1 person cannot sign in now (no linked school account):"

        other = browser.new_context(viewport={"width": 390, "height": 844})
        other.set_default_timeout(60_000)
        try:
            cyd = other.new_page()
            cyd.goto(world.tool_url + "/sign-in")
            password_form(cyd, {"class_name": "Physics 2b", "name": "Cyd", "password": PASSWORD})
            said = cyd.locator("#form-error").text_content()
            assert "your account is not linked to one yet: ask your teacher to turn passwords on" in said, said
        finally:
            other.close()
        page.click("#passwords-toggle")  # on again
        page.wait_for_function("() => document.querySelector('#sign-in-state').textContent.startsWith('Learners')", polling=PAGE_POLL_MS)
    finally:
        context.close()
