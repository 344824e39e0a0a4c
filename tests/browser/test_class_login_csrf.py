"""Login CSRF from another port of the same host, in Chromium (issue 27, item 12; docs/security.md).

A learner, Ada, is signed in to a real `chainrule serve`. An attacker serves a page on another port of the
same host (here a plain static server on 127.0.0.1). Cookies ignore ports, so that page's script can read
the class's CSRF cookie and plant cookies the class server will receive; browsers count the two ports as
one site, so SameSite does not stop its form either. The page tries both ways of putting Ada into the
attacker's account, where her code would then be saved: posting the sign-in form with the attacker's
name and password, and planting the attacker's own (validly signed) session cookie. Ada must stay Ada.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading

import pytest

from class_process import CLASS, PASSWORD, ClassServer, free_port
from polling import PAGE_POLL_MS

ATTACK_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Free answers</title></head><body>
<form id="f" method="post" action="{base}/sign-in?next=/">
  <input name="class_name" value="{class_name}"><input name="name" value="Mallory">
  <input name="password" value="{password}"><input name="csrf" id="csrf">
</form>
<script>
  const match = document.cookie.match(/(?:^|; )chainrule_csrf=([^;]+)/);
  document.title = match ? "read the CSRF cookie" : "no CSRF cookie";
  if (location.hash === "#plant") {{
    // Longer path: the browser sends this copy before the real one on every /api call.
    document.cookie = "chainrule_session={session}; path=/api";
    document.title = "planted";
  }} else {{
    document.getElementById("csrf").value = match ? decodeURIComponent(match[1]) : "";
    document.getElementById("f").submit();
  }}
</script></body></html>
"""


@pytest.fixture
def attack(tmp_path):
    """(the class server, the attack page's address on another port of 127.0.0.1)."""
    server = ClassServer.start(tmp_path)
    mallory = server.join("Mallory")  # the attacker's own account, with a session cookie the attacker knows
    session = mallory.cookies["chainrule_session"]
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "attack.html").write_text(ATTACK_PAGE.format(
        base=server.base, class_name=CLASS, password=PASSWORD, session=session), encoding="utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "site"))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        yield server, f"http://127.0.0.1:{site.server_address[1]}/attack.html"
    finally:
        site.shutdown()
        site.server_close()
        server.stop()


def _who(page, base: str) -> str:
    answer = page.evaluate("url => fetch(url).then(async r => ({status: r.status, body: await r.text()}))",
                           base + "/api/class/me")
    return json.loads(answer["body"]).get("name") if answer["status"] == 200 else f"HTTP {answer['status']}"


def _sign_in_as_ada(page, base: str) -> None:
    page.goto(base + "/sign-in")
    for name, value in {"class_name": CLASS, "name": "Ada", "password": PASSWORD}.items():
        page.locator(f"input[name='{name}']").fill(value)
    with page.expect_navigation():
        page.locator("form.class-form button[type=submit]").click()


def test_a_page_on_another_port_cannot_sign_a_learner_into_its_account(browser, attack):
    server, attack_page = attack
    server.join("Ada")
    context = browser.new_context()
    context.set_default_timeout(60_000)
    try:
        page = context.new_page()
        _sign_in_as_ada(page, server.base)
        assert _who(page, server.base) == "Ada"

        # 1. The attack page posts the sign-in form with Mallory's name and the CSRF cookie it read.
        with page.expect_navigation(url=lambda url: url.startswith(server.base)) as sent:
            page.goto(attack_page)
        assert sent.value.status == 403 and "is not this server" in page.content()
        page.goto(server.base + "/")
        assert _who(page, server.base) == "Ada"

        # 2. The attack page plants Mallory's session cookie for this host, at a longer path.
        page.goto(attack_page + "#plant")
        page.wait_for_function("document.title === 'planted'", polling=PAGE_POLL_MS)
        page.goto(server.base + "/")
        assert _who(page, server.base) != "Mallory"  # two sign-ins arrived: neither is taken
        # The answer expired the planted copy: Ada signs in again and is Ada, on every address.
        _sign_in_as_ada(page, server.base)
        assert _who(page, server.base) == "Ada"
    finally:
        context.close()
