"""Web request state and errors handled once (issue 28, item 6): one cookie parser, one place for the
signed-in account, one error mapping with one body shape, security layers with one job each.

The source checks read src/ and fail when a second cookie parser, a second place that builds a 422, or a
ContextVar for the account appears; the behaviour checks run the real app in process."""

from __future__ import annotations

import inspect
import io
import re
import tokenize
from pathlib import Path

from fastapi.testclient import TestClient

from chainrule.web import compute_rate, create_app, forms, security
from class_world import Clock, World, csrf_of

SRC = Path(__file__).resolve().parents[1] / "src" / "chainrule"
WEB = SRC / "web"
ERROR_KEYS = {"detail", "field", "problems"}


def _code(path: Path) -> str:
    """The file's code without comments and strings (docstrings say "422" and "cookie" freely)."""
    kept = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type not in (tokenize.COMMENT, tokenize.STRING):
            kept.append(token.string)
    return " ".join(kept)


def _python_files() -> list[Path]:
    return sorted(path for path in SRC.rglob("*.py") if "runtime" not in path.parts and "data" not in path.parts)


# ---------------------------------------------------------------- source rules


def test_one_cookie_parser():
    """Only web/cookies.py splits a Cookie header; every reader gets every copy of a cookie from it."""
    parsers = []
    for path in _python_files():
        text = path.read_text(encoding="utf-8")
        if re.search(r"SimpleCookie|http\.cookies|\.cookies\b(?!\.py)|split\(\s*['\"];['\"]\s*\)", _code(path)) \
                or re.search(r"[\"']cookie[\"']\s*[,)]|b[\"']cookie[\"']", text):
            parsers.append(str(path.relative_to(SRC)))
    assert parsers == ["web/cookies.py"], parsers


def test_only_the_error_mapping_answers_422():
    """A 422 is built in web/error_answers.py only (from an InputError); elsewhere 422 may only be a key of an
    OpenAPI `responses` table."""
    builders = []
    for path in _python_files():
        tokens = [token for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
                  if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)]
        for index, token in enumerate(tokens):
            if token.type == tokenize.NUMBER and token.string == "422":
                following = tokens[index + 1].string if index + 1 < len(tokens) else ""
                if following != ":":  # a dict key: {422: {"model": ErrorBody, ...}}
                    builders.append(f"{path.relative_to(SRC)}:{token.start[0]}")
    assert [place for place in builders if not place.startswith("web/error_answers.py:")] == []
    assert len(builders) == 1, builders


# The one ContextVar of the package, and what it carries: no account.
CONTEXT_VARS = {"compute_cost.py": "a request's mark that it was charged to the compute rate (web/compute_rate.py)"}


def test_the_account_lives_in_the_request_state_only():
    """No ContextVar carries the account (it was published twice); the gate writes request.state."""
    for path in _python_files():
        assert "ContextVar" not in _code(path) or str(path.relative_to(SRC)) in CONTEXT_VARS, path
    gate = (WEB / "class_gate.py").read_text(encoding="utf-8")
    assert gate.count("state.update(account=") == 1


def test_each_security_layer_does_one_job_in_order(tmp_path):
    app = create_app("a-token-for-this-test", tmp_path, port=8765)
    layers = [entry.cls for entry in app.user_middleware]
    assert layers == [security.SecurityHeaders, security.HostCheck, security.OriginCheck, security.StaticTakesNoBody,
                      forms.FormLimits, security.TokenGate, security.BodyLimit, compute_rate.ComputeScope]
    for layer in layers:  # Starlette's shape: a class whose __call__ is one short job
        assert len(inspect.getsource(layer.__call__).splitlines()) <= 40, layer
    app.state.services.close()


# ---------------------------------------------------------------- behaviour


def test_every_refusal_and_every_422_has_the_one_shape(tmp_path):
    token = "a-token-for-this-test"
    app = create_app(token, tmp_path, port=8765)
    auth = {"X-Chainrule-Token": token}
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        answers = {
            "host": client.get("/api/path", headers=auth | {"host": "evil.example"}),
            "origin": client.put("/api/progress/code", headers=auth | {"origin": "http://127.0.0.1:9"}, json={}),
            "token": client.get("/api/path"),
            "size": client.put("/api/progress/code", headers=auth, content=b"x" * (300 * 1024)),
            "validation": client.put("/api/progress/code", headers=auth, json={"exercise": 3}),
            "language": client.post("/api/grade", headers=auth,
                                    json={"exercise": "neuron-grads", "language": "cobol", "source": "x"}),
            "key ideas": client.put("/api/lessons/backprop/explanation", headers=auth,
                                    json={"text": "x", "ticked": ["no-such-idea"]}),
            "playground": client.post("/api/playground", headers=auth, json={"expression": "x +", "values": {}}),
            "not found": client.get("/api/no-such-route", headers=auth),
        }
    app.state.services.close()
    expected = {"host": 403, "origin": 403, "token": 401, "size": 413, "validation": 422, "language": 422,
                "key ideas": 422, "playground": 422, "not found": 404}
    for what, answer in answers.items():
        assert answer.status_code == expected[what], (what, answer.text)
        assert set(answer.json()) == ERROR_KEYS, (what, answer.json())
        assert answer.headers["x-frame-options"] == "DENY" and answer.headers["cache-control"] == "no-store", what
    assert answers["language"].json()["field"] == "language"
    assert answers["key ideas"].json()["field"] == "ticked"
    assert answers["playground"].json()["problems"][0]["field"] == "expression"
    assert answers["validation"].json()["problems"][0]["field"] == "exercise"


def test_class_modes_import_refusal_has_the_one_shape(store_place):
    world = _world(store_place)
    try:
        bad = world.bea.post("/api/class/progress/import", content=b"{not json", headers={
            "content-type": "application/json", "X-CSRF-Token": world.bea.cookies["chainrule_csrf"]})
        assert bad.status_code == 422 and set(bad.json()) == ERROR_KEYS
    finally:
        world.store.close()


def _world(store_place) -> World:
    from chainrule.classes import CLASS_DATABASE
    from chainrule.progress import open_store

    clock = Clock()
    return World(open_store(**store_place("class"), clock=clock, fuzzing=False, file_name=CLASS_DATABASE), clock)


def test_a_cookie_planted_from_another_port_is_read_the_same_way_by_every_layer(store_place):
    """Cookies ignore ports: another port of the host can plant same-named cookies that the browser sends
    first. Every copy is read: a planted CSRF cookie does not hide Ada's own, and two different session
    cookies sign in nobody and are expired at every path of the request."""
    world = _world(store_place)
    try:
        ada = world.ada
        session, csrf = ada.cookies["chainrule_session"], ada.cookies["chainrule_csrf"]
        body = {"exercise": "neuron-grads", "language": "python", "source": "x = 1"}
        planted_csrf = {"Cookie": f"chainrule_csrf=planted.junk; chainrule_session={session}; chainrule_csrf={csrf}",
                        "X-CSRF-Token": csrf}
        stranger = world.client()
        assert stranger.put("/api/progress/code", headers=planted_csrf, json=body).status_code == 200
        mallory = world.bea.cookies["chainrule_session"]  # another learner's valid session, planted first
        two = stranger.get("/api/class/me", headers={"Cookie": f"chainrule_session={mallory}; chainrule_session={session}"})
        assert two.status_code == 401 and set(two.json()) == ERROR_KEYS
        expired = [value for value in two.headers.get_list("set-cookie") if "Max-Age=0" in value]
        assert {re.search(r"Path=([^;]+)", value).group(1) for value in expired} >= {"/", "/api", "/api/class",
                                                                                     "/api/class/me"}
        assert world.bea.get("/api/class/me").json()["name"] == "Bea"  # her own cookie alone still works
    finally:
        world.store.close()


def test_a_form_page_csrf_token_works_with_the_account_page(store_place):
    """The account page's sign-out form carries this session's own CSRF cookie, even beside a planted one."""
    world = _world(store_place)
    try:
        ada = world.ada
        ada.cookies.set("chainrule_csrf", "planted.junk", path="/account")
        page = ada.get("/account")
        out = ada.post("/sign-out", data={"csrf": csrf_of(page.text)})
        assert out.status_code == 303 and ada.get("/api/class/me").status_code == 401
    finally:
        world.store.close()
