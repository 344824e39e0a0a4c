"""The API's models build their own validators when first used (web/models.py's ApiModel, defer_build), so that
a server's start does not build them beside the ones FastAPI builds for each route. Nothing a client sees may
change: the OpenAPI schema of the lesson app and of the class app, and the answers to bodies that are not
valid, are the same as when every model is built as its class is made (each in a fresh process). And the error
answers routes declare with error_answer (ErrorBody written out, not named as a model) are ErrorBody in the
schema, whose every reference resolves."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Run in a fresh process: "eager" builds every model of the API as pydantic does without defer_build, before the
# apps are made; "deferred" leaves them as the modules made them. Prints what a client sees, as JSON.
SEEN = """
import json, sys, warnings
from fastapi.testclient import TestClient
from chainrule.classes import open_class_store
from chainrule.classes.accounts import Accounts
from chainrule.web import create_app
from chainrule.web.models import ApiModel
from chainrule.web.routes_class import create_class_app

def every(model):
    for sub in model.__subclasses__():
        yield sub
        yield from every(sub)

models = sorted(set(every(ApiModel)), key=lambda model: model.__qualname__)
warnings.simplefilter("always")  # from here on, every warning is recorded, however often it comes
warned = []
warnings.showwarning = lambda message, category, *_: warned.append(f"{category.__name__}: {message}")
if sys.argv[1] == "eager":
    for model in models:
        model.model_rebuild(force=True)
lesson = create_app("t" * 20, sys.argv[2] + "/lesson", port=8765)
store = open_class_store(sys.argv[2] + "/class", None)
Accounts(store).create_class("Physics")
client = TestClient(lesson, base_url="http://127.0.0.1:8765", headers={"X-Chainrule-Token": "t" * 20})
answers = []
for method, path, body in json.loads(sys.argv[3]):  # before the schema is made, which builds what it reads
    sent = {"content": body, "headers": {"Content-Type": "application/json"}} if isinstance(body, str) else {"json": body}
    response = client.request(method, path, **sent)
    answers.append([response.status_code, response.text])
for path in ("/api/path", "/api/lessons/backprop", "/api/progress/backprop", "/api/review/due"):
    answers.append([client.get(path).status_code, ""])  # answers serialized by the deferred models
seen = {"built": sorted(model.__qualname__ for model in models if model.__pydantic_complete__),
        "models": len(models), "lesson": json.dumps(lesson.openapi()),
        "class": json.dumps(create_class_app(store, accounts=Accounts(store)).openapi()),
        "answers": answers, "warnings": warned}
lesson.state.services.close()
store.close()
print(json.dumps(seen))
"""

EXPLORE = "/api/lessons/backprop/explore/section03"
NOT_VALID = [  # (method, path, body): bodies pydantic refuses, each for another reason
    ("POST", EXPLORE, {"values": {"a": "two"}}),
    ("POST", EXPLORE, {"values": {}, "extra": 1}),
    ("POST", EXPLORE, {"values": {}, "nudge": {"input": 5}}),
    ("POST", EXPLORE, "not json"),
    ("PUT", "/api/progress/code", {"exercise": "x", "language": "cobol", "source": ""}),
    ("PUT", "/api/progress/code", {"exercise": "x" * 101, "language": "python"}),
    ("PUT", "/api/progress/backprop/predictions/p1", {"value": 1, "second_try": "yes"}),
    ("PUT", "/api/lessons/backprop/explanation", '{"text": "\\ud800", "ticked": [1]}'),  # a lone surrogate
    ("POST", "/api/lessons/backprop/quiz/q1", {"answer": "", "variant": "XYZ"}),
    ("POST", "/api/playground", {"expression": 5}),
    ("POST", "/api/lessons/backprop/driven/none", {"values": {"lr": "fast"}}),
]


def seen(mode: str, tmp_path) -> dict:
    run = subprocess.run([sys.executable, "-c", SEEN, mode, str(tmp_path / mode), json.dumps(NOT_VALID)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def deferred(tmp_path_factory) -> dict:
    return seen("deferred", tmp_path_factory.mktemp("apps"))  # the two tests' run of the apps as they start


def test_deferred_models_give_the_same_schema_and_the_same_refusals(deferred, tmp_path) -> None:
    eager = seen("eager", tmp_path)
    assert deferred["models"] == eager["models"] > 40
    assert len(eager["built"]) == eager["models"]
    # Deferred: most models' own validators are not built by the start (FastAPI's, per route, are).
    assert len(deferred["built"]) < eager["models"] / 2, deferred["built"]
    assert deferred["lesson"] == eager["lesson"]  # byte for byte
    assert deferred["class"] == eager["class"]
    assert [status for status, _ in eager["answers"]].count(422) >= 8  # the bodies were refused as bodies
    for request, mine, theirs in zip(NOT_VALID, deferred["answers"], eager["answers"]):
        assert mine == theirs, request
    assert [status for status, _ in deferred["answers"][len(NOT_VALID):]] == [200] * 4
    assert deferred["warnings"] == eager["warnings"] == []  # a model built at a request warns of nothing


def references(node: object) -> set[str]:
    if isinstance(node, dict):
        return set().union(*(references(value) for key, value in node.items() if key != "$ref"),
                           {node["$ref"]} if "$ref" in node else set())
    if isinstance(node, list):
        return set().union(*(references(value) for value in node))
    return set()


def test_every_error_answer_is_an_error_body_and_every_reference_resolves(deferred) -> None:
    for app in ("lesson", "class"):
        schema = json.loads(deferred[app])
        components = schema["components"]["schemas"]
        assert {"ErrorBody", "Problem"} <= set(components), app
        unresolved = {ref for ref in references(schema) if ref.removeprefix("#/components/schemas/") not in components}
        assert unresolved == set(), app
        errors = [answer for operations in schema["paths"].values() for operation in operations.values()
                  for status, answer in operation["responses"].items() if status[0] in "45"]
        assert len(errors) > 100, app
        for answer in errors:
            assert list(answer) == ["description", "content"] and answer["description"], answer
            assert answer["content"] == {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
