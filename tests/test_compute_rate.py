"""Issue 42: one per-learner rate for work a learner can repeat that costs CPU (web/compute_rate.py).

* The bucket by hand, on a clock the test moves: BURST at once, then PER_MINUTE a minute, and the wait it says.
* By declaration: the routes that reach work marked costs_cpu (a driven plot, the playground, Explore, a graded
  run, an import's and a regrade's grading) declare COMPUTE; a route that reaches such work without declaring it
  fails, so a new compute route cannot ship without the rate.
* On a real `chainrule serve`: a learner who asks for driven plots faster than the rate gets 429 with Retry-After
  in the project's error shape, before any work; a classmate is still served.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient

from chainrule.web.compute_rate import BURST, COMPUTE, PER_MINUTE, ComputeRate, compute_routes

TOKEN = "compute-rate-token-0123456789"
NUDGE = "/api/lessons/slopes-and-the-chain-rule/driven/nudge"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_gives_its_burst_then_refills_at_its_rate_and_says_how_long_to_wait():
    clock = Clock()
    rate = ComputeRate(burst=3, per_minute=30, clock=clock)  # a token every 2 s
    assert [rate.take("ada") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert rate.take("ada") == pytest.approx(2.0)  # empty: one token takes 60 / 30 = 2 s
    assert rate.take("grace") == 0.0  # a bucket per learner
    clock.now += 0.5
    assert rate.take("ada") == pytest.approx(1.5)  # a quarter of a token came back: 1.5 s to go
    clock.now += 1.5
    assert rate.take("ada") == 0.0  # one token, taken
    assert rate.take("ada") == pytest.approx(2.0)
    clock.now += 3600
    assert [rate.take("ada") for _ in range(4)][-1] == pytest.approx(2.0)  # full again at 3, never more


def lesson_app(tmp_path: Path, *routers: APIRouter):
    from chainrule.web.app import create_app

    return create_app(TOKEN, tmp_path, routers=routers)


def test_the_compute_routes_are_those_that_reach_costly_work(tmp_path):
    from class_world import class_app

    paths = {(method, route.path) for route in compute_routes(lesson_app(tmp_path / "lesson").routes)
             for method in route.methods}
    assert paths == {("POST", "/api/lessons/{lesson_id}/driven/{name}"), ("POST", "/api/playground"),
                     ("POST", "/api/lessons/{lesson_id}/explore/{graph}"), ("POST", "/api/grade")}
    app, store = class_app(tmp_path / "class")
    try:
        paths = {route.path for route in compute_routes(app.routes)}
        assert {"/api/class/progress/import", "/api/class/regrades/new"} <= paths
        schema = app.openapi()["paths"]
        assert all("429" in schema[path]["post"]["responses"] for path in paths)  # documented where it happens
    finally:
        store.close()


def test_a_route_that_reaches_costly_work_without_declaring_compute_fails(tmp_path):
    from chainrule.lessons.loader import lesson_folder
    from chainrule.lessons.plot_driven import drive, read_driven

    spec = read_driven(lesson_folder("slopes-and-the-chain-rule"))[0]
    forgot, declared = APIRouter(), APIRouter()

    @forgot.post("/api/forgot")
    def forgot_route() -> dict:
        return {"slope": drive(spec, {})["slope"]}

    @declared.post("/api/declared", dependencies=[COMPUTE])
    def declared_route() -> dict:
        return {"slope": drive(spec, {})["slope"]}

    app = lesson_app(tmp_path, forgot, declared)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        headers = {"X-Chainrule-Token": TOKEN}
        assert client.post("/api/forgot", headers=headers).status_code == 500  # the bug shows at its first call
        assert client.post("/api/declared", headers=headers).json() == {"slope": 12.0}  # f = (2x + 1)^2: f'(1) = 12
    assert drive(spec, {})["slope"] == 12.0  # outside a request (the CLI, `lessons check`) nothing is asked


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from class_process import ClassServer

    served = ClassServer.start(tmp_path_factory.mktemp("compute-rate"))
    yield served
    served.stop()


def learner(server, name: str):
    client = server.join(name)
    client.headers["X-CSRF-Token"] = client.cookies["chainrule_csrf"]
    return client


def refused_after_emptying(client, ask, tries: int = 20) -> bool:
    """Whether ``ask()`` is refused (429) right after the client's bucket is emptied. The bucket refills a token
    a second, so on a busy machine a token may come back between the two requests: each try empties it again,
    and only a request answered otherwise every time fails the test."""
    for _ in range(tries):
        while client.post(NUDGE, json={"values": {"h": 0.01}}).status_code == 200:
            pass
        if ask().status_code == 429:
            return True
    return False


def test_a_learner_past_the_rate_gets_429_with_retry_after_and_a_classmate_is_still_served(server):
    ada, grace = learner(server, "Ada"), learner(server, "Grace")
    # Ada asks for the cheapest driven plot again and again; the bucket refills at PER_MINUTE a minute, so she
    # meets the rate within BURST answers and at most one more for every second the requests took.
    answers = []
    for _ in range(BURST * 4):
        answers.append(ada.post(NUDGE, json={"values": {"h": 0.01}}))
        if answers[-1].status_code != 200:
            break
    refused = answers[-1]
    assert refused.status_code == 429, refused.text
    assert len(answers) - 1 >= BURST  # the whole burst first
    assert 1 <= int(refused.headers["retry-after"]) <= 60 // PER_MINUTE + 1
    body = refused.json()
    assert set(body) == {"detail", "field", "problems"} and "try again in" in body["detail"]
    # Refused before any work: an unknown plot is still a 429, not a 404.
    assert refused_after_emptying(ada, lambda: ada.post("/api/lessons/slopes-and-the-chain-rule/driven/none", json={}))
    # The playground and Explore share Ada's one bucket; Grace has her own.
    assert refused_after_emptying(ada, lambda: ada.post("/api/playground", json={"expression": "x*y"}))
    served = grace.post(NUDGE, json={"values": {"h": 0.01}})
    assert served.status_code == 200 and served.json()["chosen"]["h"] == 0.01
    # Reading is never charged.
    assert ada.get("/api/lessons/slopes-and-the-chain-rule/driven").status_code == 200
