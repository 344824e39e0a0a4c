"""`--host` is judged loopback by what it resolves to, and no API answer or page may be cached.

The resolver tests run the real libc resolver on a private /etc/hosts: bubblewrap mounts a file of
ours over /etc/hosts for one command, so names can resolve anywhere without touching the machine.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from chainrule.loopback import is_loopback_bind
from chainrule.web import create_app

TOKEN = "test-token-0123456789"
HOSTS = """127.0.0.1 localhost
::1 localhost
203.0.113.7 127.0.0.1.example.test
127.0.0.1 half-local.test
203.0.113.8 half-local.test
127.0.0.9 local-alias.test
"""


@pytest.fixture
def private_hosts(tmp_path):
    """argv prefix that runs a command with our HOSTS as its /etc/hosts."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap (bwrap) is needed to give one command its own /etc/hosts")
    hosts = tmp_path / "hosts"
    hosts.write_text(HOSTS)
    prefix = [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(hosts), "/etc/hosts", "--"]
    probe = subprocess.run(prefix + ["true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot run here: {probe.stderr.decode(errors='replace').strip()}")
    return prefix


@pytest.mark.parametrize("host,loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("127.1", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("192.0.2.1", False), ("no-such-host.invalid", False),
])
def test_loopback_is_decided_by_the_addresses(host, loopback):
    assert is_loopback_bind(host) is loopback


def test_names_are_resolved_and_every_address_must_be_loopback(private_hosts):
    names = ["localhost", "local-alias.test", "127.0.0.1.example.test", "half-local.test"]
    code = f"from chainrule.loopback import is_loopback_bind; print([is_loopback_bind(n) for n in {names!r}])"
    done = subprocess.run(private_hosts + [sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, True, False, False]"


def test_lesson_refuses_a_127_name_that_resolves_elsewhere(private_hosts):
    done = subprocess.run(
        private_hosts + [sys.executable, "-m", "chainrule", "lesson", "--no-browser",
                         "--host", "127.0.0.1.example.test"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "looks like a loopback address" in done.stderr and "203.0.113.7" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- Cache-Control


@pytest.fixture
def client(tmp_path):
    app = create_app(TOKEN, tmp_path / "data", port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False) as test_client:
        yield test_client
    app.state.services.close()


def test_every_api_answer_and_page_says_no_store(client):
    auth = {"X-Chainrule-Token": TOKEN}
    answers = {
        "path": client.get("/api/path", headers=auth),
        "lesson": client.get("/api/lessons/backprop", headers=auth),
        "progress": client.get("/api/progress/backprop", headers=auth),
        "due": client.get("/api/review/due", headers=auth),
        "saved code": client.put("/api/progress/code", headers=auth,
                                 json={"exercise": "neuron-grads", "language": "python", "source": "x = 1"}),
        "invalid body": client.put("/api/progress/code", headers=auth, json={"exercise": 3}),
        "unknown address": client.get("/api/nothing-here", headers=auth),
        "no token": client.get("/api/path"),
        "wrong token": client.get("/api/path", headers={"X-Chainrule-Token": "wrong"}),
        "foreign host": client.get("/api/path", headers=auth | {"Host": "evil.example:8765"}),
        "page without cookie": client.get("/lessons/backprop"),
        "token link": client.get(f"/lessons/backprop?token={TOKEN}"),
    }
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {"path": 200, "lesson": 200, "progress": 200, "due": 200, "saved code": 200,
                        "invalid body": 422, "unknown address": 404, "no token": 401, "wrong token": 403,
                        "foreign host": 403, "page without cookie": 401, "token link": 303}
    assert {name: answer.headers.get("cache-control") for name, answer in answers.items()} == {
        name: "no-store" for name in answers}

    client.cookies.update(answers["token link"].cookies)
    page = client.get("/lessons/backprop")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"


def test_static_files_stay_cacheable(client):
    page = client.get(f"/lessons/backprop?token={TOKEN}")
    client.cookies.update(page.cookies)
    html = client.get("/lessons/backprop").text
    script = html.split('src="', 1)[1].split('"', 1)[0]
    assert script.startswith("/static/")
    answer = client.get(script)
    assert answer.status_code == 200 and answer.headers.get("cache-control") != "no-store"
