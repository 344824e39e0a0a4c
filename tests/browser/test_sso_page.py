"""Issue 30, item 7 in Chromium: a learner joins a class through a real OpenID provider (npm's oidc-provider
as a process, its own sign-in and consent pages), a provider that is down is said on the page and the password
form stays, and a token the provider issued for another audience is refused with its cause."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oidc_world import OidcWorld  # noqa: E402


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
