"""The playground's API and page: POST /api/playground runs a learner's expression (numbers checked by
hand and against PyTorch), says each problem with its field and column, and is behind the token."""

from __future__ import annotations

import json
import math
import re

import pytest

from chainrule.lessons.playground import EXAMPLE, MAX_CHARS
from lesson_app_client import lesson_app_client

TOKEN = "playground-token-0123456789"
RUN = "/api/playground"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with lesson_app_client(tmp_path_factory.mktemp("data"), TOKEN, 8765) as test_client:
        yield test_client


def test_without_an_expression_the_example_runs(client):
    answer = client.post(RUN, json={})
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["expression"] == EXAMPLE and result["names"] == ["x", "y"]
    output = result["trace"]["nodes"][-1]
    assert output["data"] == pytest.approx(2 * -3 + math.tanh(2), rel=1e-15)  # x = 2, y = -3 to start
    assert output["data_text"] == "-5.036"
    assert set(result["trace"]["layout"]) == {"wide", "narrow"}


def test_a_learners_expression_with_values_seed_and_nudge(client):
    torch = pytest.importorskip("torch")
    body = {"expression": "w*x + sigmoid(b)", "values": {"w": "0.5", "x": "-4", "b": 1.25}, "seed": "b",
            "nudge": {"input": "w", "h": "0.01"}}
    result = client.post(RUN, json=body).json()
    w, x, b = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.5, -4.0, 1.25))
    out = w * x + torch.sigmoid(b)
    out.backward()
    assert result["trace"]["nodes"][-1]["data"] == pytest.approx(out.item(), rel=1e-15)
    grads = {node["label"]: node["grad"] for node in result["trace"]["nodes"]}
    assert grads["w"] == pytest.approx(w.grad.item()) and grads["b"] == pytest.approx(b.grad.item())
    sweeps = result["sweeps"]
    assert sweeps["seed"] == "b" and sweeps["agree"] is True
    assert sweeps["forward"] == pytest.approx(b.grad.item(), rel=1e-12)
    assert result["nudge"]["input"] == "w" and result["nudge"]["ratio_text"] == "-4"  # exactly linear in w


def test_an_expression_problem_is_a_422_naming_the_column(client):
    answer = client.post(RUN, json={"expression": "x * tan(x)"})
    assert answer.status_code == 422
    body = answer.json()
    assert body["problems"] == [{"field": "expression", "column": 5, "length": 3,
                                 "message": body["problems"][0]["message"]}]
    assert "unknown function 'tan'" in body["problems"][0]["message"]
    assert "unknown function 'tan'" in body["detail"]


def test_bad_numbers_are_problems_of_their_fields(client):
    answer = client.post(RUN, json={"expression": "x + y", "values": {"x": "nan", "y": ""},
                                    "nudge": {"input": "x", "h": "1e-12"}})
    assert answer.status_code == 422
    fields = {p["field"]: p["message"] for p in answer.json()["problems"]}
    assert set(fields) == {"values.x", "values.y", "nudge.h"}
    assert "1e-6 <= |h| <= 1" in fields["nudge.h"]


def test_a_too_long_expression_is_refused_with_the_limit(client):
    answer = client.post(RUN, json={"expression": "x+" * 2000 + "x"})
    assert answer.status_code == 422
    problem = answer.json()["problems"][0]
    assert f"at most {MAX_CHARS}" in problem["message"] and problem["column"] == MAX_CHARS + 1


@pytest.mark.parametrize("body", [
    {"expression": 5}, {"expression": "x", "values": {"x": [1]}}, {"expression": "x", "extra": 1},
    {"expression": "x", "values": {"x": True}}, {"expression": "x", "nudge": {"input": "x"}},
])
def test_malformed_bodies_are_422_never_500(client, body):
    answer = client.post(RUN, json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"]


def test_nan_and_inf_travel_as_null_with_their_text(client):
    answer = client.post(RUN, json={"expression": "log(x) * exp(y)", "values": {"x": "-1", "y": "900"}})
    assert answer.status_code == 200
    json.loads(answer.text, parse_constant=lambda token: pytest.fail(f"{token} in strict JSON"))
    nodes = {node["label"]: node for node in answer.json()["trace"]["nodes"]}
    assert (nodes["t1"]["data"], nodes["t1"]["data_text"]) == (None, "nan")
    assert (nodes["t2"]["data"], nodes["t2"]["data_text"]) == (None, "inf")


def test_the_api_needs_the_token(client):
    answer = client.post(RUN, json={}, headers={"X-Chainrule-Token": ""})
    assert answer.status_code in (401, 403)


def test_the_page_and_the_link_from_the_path(client):
    client.cookies.set("chainrule_token", TOKEN)
    page = client.get("/playground")
    assert page.status_code == 200 and 'data-page="playground"' in page.text
    assert re.search(r'src="/static/js/playground\.[0-9a-f]{10}\.js"', page.text)  # its fingerprinted name
    assert 'href="/playground"' in client.get("/").text
