"""The lesson API behind the lesson page: the explorable graph (numbers checked against PyTorch),
feedback that survives a restart, practice answers that never rate a card, the session secret."""

from __future__ import annotations

import math
import stat
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from chainrule.web import create_app
from chainrule.web.session import cookie_value, load_or_create_secret
from reference_torch import needs_torch, torch

TOKEN = "test-token-0123456789"
BASE = "http://127.0.0.1:8765"
AUTH = {"X-Chainrule-Token": TOKEN}
EXPLORE = "/api/lessons/backprop/explore/section03"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def make_client(data_dir, clock, token=TOKEN, secret=None):
    app = create_app(token, data_dir, port=8765, clock=clock, session_secret=secret)
    client = TestClient(app, base_url=BASE)
    client.headers.update({"X-Chainrule-Token": token})
    return app, client


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(tmp_path, clock):
    app, test_client = make_client(tmp_path / "data", clock)
    with test_client:
        yield test_client
    app.state.services.close()


def torch_section03(a, b, c, f):
    leaves = {name: torch.tensor(value, dtype=torch.float64, requires_grad=True)
              for name, value in zip("abcf", (a, b, c, f))}
    L = (leaves["a"] * leaves["b"] + leaves["c"]) * leaves["f"]
    L.backward()
    return L.item(), {name: t.grad.item() for name, t in leaves.items()}


@needs_torch
@pytest.mark.parametrize("values", [{"a": 3}, {"a": -1.5, "b": 0.25, "c": 7, "f": 4}, {"f": 0}])
def test_explore_runs_the_engine_with_the_learners_inputs(client, values):
    body = client.post(EXPLORE, json={"values": values}).json()
    inputs = {"a": 2.0, "b": -3.0, "c": 10.0, "f": -2.0} | values
    expected_out, expected_grads = torch_section03(*(inputs[k] for k in "abcf"))
    nodes = {n["label"]: n for n in body["trace"]["nodes"]}
    assert nodes["L"]["data"] == pytest.approx(expected_out, abs=1e-12)
    for name, grad in expected_grads.items():
        assert nodes[name]["data"] == inputs[name]
        assert nodes[name]["grad"] == pytest.approx(grad, abs=1e-12)
    assert body["nudge"] is None


@needs_torch
def test_nudge_compares_change_over_h_with_the_gradient(client):
    h = 1e-3
    body = client.post(EXPLORE, json={"values": {"a": 3}, "nudge": {"input": "b", "h": h}}).json()
    before, grads = torch_section03(3, -3, 10, -2)
    after, _ = torch_section03(3, -3 + h, 10, -2)
    nudge = body["nudge"]
    assert nudge["input"] == "b" and nudge["h"] == h
    assert nudge["before"] == pytest.approx(before) and nudge["after"] == pytest.approx(after)
    assert nudge["change"] == pytest.approx(after - before)
    assert nudge["ratio"] == pytest.approx((after - before) / h)
    assert nudge["grad"] == pytest.approx(grads["b"])  # L is linear in b: the two agree exactly
    assert math.isclose(nudge["ratio"], nudge["grad"], rel_tol=1e-9)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"values": {"z": 1}}, "has no input 'z': its inputs are a, b, c, f"),
        ({"values": {"a": 1e9}}, "a: 1e9 is too large: type a number from -1000 to 1000"),
        ({"values": {"a": "1e400"}}, "a: 1e400 is too large: type a number from -1000 to 1000"),  # its size, not its digits
        ({"values": {}, "nudge": {"input": "a", "h": 0}}, "1e-06 <= |h| <= 1"),
        ({"values": {}, "nudge": {"input": "e", "h": 0.1}}, "cannot nudge 'e'"),
        ({"values": {"a": "two"}}, "a: Type a number"),
    ],
)
def test_explore_refuses_bad_input_with_what_is_allowed(client, body, words):
    response = client.post(EXPLORE, json=body)
    assert response.status_code == 422
    assert words in response.json()["detail"]


def test_explore_unknown_graph_is_404(client):
    response = client.post("/api/lessons/backprop/explore/nothing", json={"values": {}})
    assert response.status_code == 404
    assert "section03" in response.json()["detail"]


def test_trace_carries_both_layouts(client):
    body = client.get("/api/lessons/backprop/trace/neuron").json()
    assert set(body["layout"]) == {"wide", "narrow"}
    ids = {n["id"] for n in body["nodes"]}
    for shape in ("wide", "narrow"):
        assert set(body["layout"][shape]["boxes"]) == ids


def test_feedback_is_back_after_a_restart(tmp_path, clock):
    app, first = make_client(tmp_path, clock)
    with first:
        first.put("/api/progress/backprop/predictions/n", json={"value": 0.3})
        first.post("/api/lessons/backprop/quiz/tanh-gradient", json={"answer": "0.49"})
    app.state.services.close()
    app, second = make_client(tmp_path, clock, token="another-token-after-restart")
    with second:
        progress = second.get("/api/progress/backprop").json()
    app.state.services.close()
    n = progress["predictions"]["n"]
    assert n["correct"] is False and n["expected_text"] == "0.8814" and "0.8814" in n["reason"]
    tanh = progress["quiz"]["tanh-gradient"]
    assert tanh["correct"] is False and tanh["expected"] == "0.51" and tanh["reason"]
    assert tanh["practice"] is False


def test_only_the_first_lesson_answer_rates_the_card(client):
    url = "/api/lessons/backprop/quiz/product-gradient"
    first = client.post(url, json={"answer": "-6"}).json()
    retry = client.post(url, json={"answer": "6"}).json()
    assert (first["correct"], first["practice"]) == (False, False)
    assert (retry["correct"], retry["practice"]) == (True, True)
    assert retry["review"]["due"] == first["review"]["due"]  # the schedule is the first answer's
    store = client.app.state.services.store()
    log = store.review_log("backprop", "product-gradient")
    assert [(e["kind"], e["correct"]) for e in log] == [("quiz", False)]
    shown = client.get("/api/progress/backprop").json()["quiz"]["product-gradient"]
    assert shown["answer"] == "6" and shown["practice"] is True and shown["attempts"] == 2


def test_a_review_answer_when_not_due_is_practice(client, clock):
    quiz = client.post("/api/lessons/backprop/quiz/product-gradient", json={"answer": "6"}).json()
    early = client.post("/api/review/backprop/product-gradient", json={"answer": "6"}).json()
    assert early["practice"] is True and early["review"]["due"] == quiz["review"]["due"]
    clock.now = datetime.fromisoformat(quiz["review"]["due"]) + timedelta(minutes=1)
    due = client.post("/api/review/backprop/product-gradient", json={"answer": "6"}).json()
    assert due["practice"] is False and due["review"]["due"] != quiz["review"]["due"]
    again = client.post("/api/review/backprop/product-gradient", json={"answer": "5"}).json()
    assert again["practice"] is True and again["review"]["due"] == due["review"]["due"]
    kinds = [e["kind"] for e in client.app.state.services.store().review_log("backprop", "product-gradient")]
    assert kinds == ["quiz", "review"]


def test_session_secret_is_owner_only_and_signs_in_across_restarts(tmp_path, clock):
    secret = load_or_create_secret(tmp_path)
    path = tmp_path / "session_secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_secret(tmp_path) == secret  # the next start reads the same one
    path.chmod(0o644)
    assert load_or_create_secret(tmp_path) == secret and stat.S_IMODE(path.stat().st_mode) == 0o600
    cookie = cookie_value(secret)
    assert secret not in cookie

    for token in ("first-start-token-000000", "second-start-token-00000"):
        app = create_app(token, tmp_path, port=8765, clock=clock, session_secret=secret)
        with TestClient(app, base_url=BASE) as browser:
            opened = browser.get(f"/lessons/backprop?token={token}", follow_redirects=False)
            assert opened.status_code == 303 and cookie in opened.headers["set-cookie"]
            browser.cookies.clear()
            browser.cookies.set("chainrule_token", cookie)
            assert browser.get("/api/progress/backprop").status_code == 200
            browser.cookies.clear()
            browser.cookies.set("chainrule_token", "first-start-token-000000")  # a token is not a cookie
            assert browser.get("/api/progress/backprop").status_code == 403
        app.state.services.close()


def test_a_broken_secret_file_is_a_clear_error(tmp_path):
    from chainrule.web.session import SecretError

    (tmp_path / "session_secret").write_text("not a secret")
    with pytest.raises(SecretError, match="64 hex digits"):
        load_or_create_secret(tmp_path)


@pytest.mark.parametrize(
    ("body", "field"),
    [({"values": {"a": 1e200}}, "a"), ({"values": {}, "nudge": {"input": "a", "h": 0}}, "h"),
     ({"values": {}, "nudge": {"input": "a", "h": 1e-12}}, "h")],
)
def test_an_explore_error_names_its_field(client, body, field):
    """The page says the problem at the field it is about (issue 21 item 5)."""
    response = client.post(EXPLORE, json=body)
    assert response.status_code == 422 and response.json()["field"] == field


def test_only_a_domain_error_is_the_learners_fault_a_bug_is_a_500(tmp_path, clock, monkeypatch):
    """A ValueError from a bug is not a 422 "your input is wrong": it is a 500 that names no internals."""
    from chainrule import lessons

    def broken(lesson_id):
        raise ValueError("secret internal state 42")

    monkeypatch.setattr(lessons, "get_lesson", broken)
    app = create_app(TOKEN, tmp_path / "data", port=8765, clock=clock)
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as test_client:
        response = test_client.get("/api/lessons/backprop", headers=AUTH)
    assert response.status_code == 500
    assert "bug in chainrule" in response.json()["detail"] and "secret" not in response.text
