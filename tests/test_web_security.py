"""Each refusal of the lesson server's security layer, shown on the real app (docs/security.md)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from chainrule.web import create_app
from chainrule.web.security import DEFAULT_MAX_BODY, split_host

TOKEN = "secret-token-abcdefghijklmnop"
PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
AUTH = {"X-Chainrule-Token": TOKEN}
PREDICTION = "/api/progress/backprop/predictions/db"


@pytest.fixture
def app(tmp_path):
    application = create_app(TOKEN, tmp_path / "data", port=PORT)
    yield application
    application.state.services.close()


@pytest.fixture
def client(app):
    with TestClient(app, base_url=BASE) as test_client:
        yield test_client


# ---------------------------------------------------------------- the token


def test_api_without_token_is_401(client):
    response = client.get("/api/path")
    assert response.status_code == 401
    assert "missing session token" in response.json()["detail"]
    assert client.post("/api/grade", json={"exercise": "neuron-grads", "language": "python", "source": "x"}).status_code == 401


def test_api_with_wrong_token_is_403(client):
    for headers in ({"X-Chainrule-Token": "guess"}, {"X-Chainrule-Token": TOKEN + "x"}, {"X-Chainrule-Token": "\u00e9t\u00e9".encode("latin-1")}):
        response = client.get("/api/path", headers=headers)
        assert response.status_code == 403 and "wrong session token" in response.json()["detail"]
    client.cookies.set("chainrule_token", "guess")
    assert client.get("/api/path").status_code == 403


def test_token_in_query_does_not_open_the_api(client):
    assert client.get(f"/api/path?token={TOKEN}").status_code == 401


def test_api_accepts_header_or_cookie(client):
    assert client.get("/api/path", headers=AUTH).status_code == 200
    client.cookies.set("chainrule_token", TOKEN)
    assert client.get("/api/path").status_code == 200


def test_page_without_token_says_to_open_the_printed_link(client):
    for address in ("/", "/lessons/backprop", "/review"):
        response = client.get(address)
        assert response.status_code == 401
        assert "Open the link printed in your terminal" in response.text
        assert "lesson" not in response.headers.get("set-cookie", "")


def test_page_with_token_sets_a_strict_httponly_cookie_and_drops_the_token(client):
    response = client.get(f"/lessons/backprop?token={TOKEN}&section=04", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/lessons/backprop?section=04"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"chainrule_token={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    followed = client.get(response.headers["location"])
    assert followed.status_code == 200
    assert client.get("/api/path").status_code == 200  # the cookie now opens the API too


def test_page_with_wrong_token_is_401(client):
    response = client.get("/?token=guess", follow_redirects=False)
    assert response.status_code == 401 and "not the current one" in response.text


def test_redirect_never_leaves_the_server(client):
    response = client.get(f"//evil.example/?token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/") and not response.headers["location"].startswith("//")


def test_static_files_need_no_token(client):
    response = client.get("/static/does-not-exist.js")
    assert response.status_code == 404  # reached the static files, not the token check


# ---------------------------------------------------------------- Host (DNS rebinding)


@pytest.mark.parametrize("host", ["evil.example", f"evil.example:{PORT}", f"localhost.evil.example:{PORT}",
                                  f"127.0.0.1.nip.io:{PORT}", "127.0.0.1:9999", "", "[::1", f"localhost:{PORT}:1"])
def test_foreign_host_is_refused(client, host):
    response = client.get("/api/path", headers=AUTH | {"host": host})
    assert response.status_code == 403
    assert "is not allowed" in response.json()["detail"]


def test_page_with_foreign_host_is_refused_even_with_token(client):
    response = client.get(f"/?token={TOKEN}", headers={"host": "rebind.example"}, follow_redirects=False)
    assert response.status_code == 403 and "set-cookie" not in response.headers


@pytest.mark.parametrize("host", [f"localhost:{PORT}", f"127.0.0.1:{PORT}", f"[::1]:{PORT}", f"LOCALHOST:{PORT}"])
def test_loopback_hosts_with_our_port_are_allowed(client, host):
    assert client.get("/api/path", headers=AUTH | {"host": host}).status_code == 200


def test_extra_hosts_only_when_configured(tmp_path):
    app = create_app(TOKEN, tmp_path, port=PORT, extra_hosts=["lab-machine"])
    with TestClient(app, base_url=f"http://lab-machine:{PORT}") as remote:
        assert remote.get("/api/path", headers=AUTH).status_code == 200
    app.state.services.close()


def test_split_host():
    assert split_host("localhost:80") == ("localhost", 80)
    assert split_host("[::1]:8000") == ("[::1]", 8000)
    assert split_host("example") == ("example", None)
    assert split_host("a:b") is None and split_host("[::1]x") is None and split_host("") is None


# ---------------------------------------------------------------- Origin (cross-site requests)


@pytest.mark.parametrize("origin", ["http://evil.example", f"http://evil.example:{PORT}", "null",
                                    f"https://127.0.0.1:{PORT}", "http://127.0.0.1:9999", f"http://localhost:{PORT}/x"])
def test_state_changing_request_from_a_foreign_origin_is_refused(client, origin):
    for method in ("PUT", "POST"):
        address = PREDICTION if method == "PUT" else "/api/lessons/backprop/quiz/sum-of-uses"
        body = {"value": 0.5} if method == "PUT" else {"answer": "8"}
        response = client.request(method, address, json=body, headers=AUTH | {"origin": origin})
        assert response.status_code == 403, (method, origin)
        assert "is not this server" in response.json()["detail"]


def test_same_origin_or_no_origin_is_accepted(client):
    for headers in (AUTH | {"origin": BASE}, AUTH | {"origin": f"http://localhost:{PORT}"}, AUTH):
        assert client.put(PREDICTION, json={"value": 0.5}, headers=headers).status_code == 200


def test_foreign_origin_may_still_read_nothing_without_the_token(client):
    # A GET is not state-changing, but without the cookie (SameSite=Strict) it has no token.
    assert client.get("/api/path", headers={"origin": "http://evil.example"}).status_code == 401


# ---------------------------------------------------------------- body size


def test_oversized_body_is_413(client):
    source = "x" * (DEFAULT_MAX_BODY + 10)
    response = client.post("/api/grade", json={"exercise": "neuron-grads", "language": "python", "source": source},
                           headers=AUTH)
    assert response.status_code == 413
    assert "too large" in response.json()["detail"] and "256 KB" in response.json()["detail"]


def test_oversized_chunked_body_is_413(client):
    def chunks():
        for _ in range(40):
            yield b"y" * 10_000

    response = client.put("/api/progress/code", content=chunks(), headers=AUTH | {"content-type": "application/json"})
    assert response.status_code == 413


def test_body_under_the_limit_is_accepted(client):
    body = {"exercise": "neuron-grads", "language": "python", "source": "# " + "x" * 90_000}
    assert client.put("/api/progress/code", json=body, headers=AUTH).json() == {"saved": True}


def test_security_headers_on_every_response(client):
    for response in (client.get("/api/path", headers=AUTH), client.get("/api/path"), client.get("/")):
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"


def test_a_second_server_on_another_port_does_not_lock_this_one_out(client):
    # Cookies ignore ports: another chainrule server overwrote chainrule_token with its own token.
    client.cookies.set("chainrule_token", "token-of-the-other-server")
    assert client.get("/api/path").status_code == 403
    client.cookies.set(f"chainrule_token_{PORT}", TOKEN)  # set by our own redirect, only for our port
    assert client.get("/api/path").status_code == 200
    assert client.get("/").status_code == 200


def test_redirect_sets_the_port_specific_cookie_too(client):
    response = client.get(f"/?token={TOKEN}", follow_redirects=False)
    cookies = response.headers.get_list("set-cookie")
    assert [c.split("=", 1)[0] for c in cookies] == ["chainrule_token", f"chainrule_token_{PORT}"]
    assert all("HttpOnly" in c and "SameSite=Strict" in c for c in cookies)


def test_a_planted_cookie_sent_first_does_not_lock_the_learner_out(client):
    """A page on another port of this host can set same-named cookies (cookies ignore ports) that the
    browser sends before ours; the real cookie later in the header must still be accepted."""
    cookie = (f"chainrule_token=junk; chainrule_token_{PORT}=junk; "
              f"chainrule_token={TOKEN}; chainrule_token_{PORT}={TOKEN}")
    assert client.get("/api/path", headers={"Cookie": cookie}).status_code == 200
    only_junk = f"chainrule_token=junk; chainrule_token_{PORT}=junk"
    assert client.get("/api/path", headers={"Cookie": only_junk}).status_code == 403
