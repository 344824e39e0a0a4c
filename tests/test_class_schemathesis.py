"""Property-based fuzzing of class mode's own API (/api/class/...) from its OpenAPI schema, signed in as a
learner and as the teacher: no input gives a server error, an undocumented status or a hang; and of its forms
and LTI and sign-in pages (left out of the API's schema: FORMS below describes them), as a stranger: no input
gives a server error. (The lesson API is fuzzed in tests/test_web_schemathesis.py.)"""

from __future__ import annotations

import re
import shutil
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig

from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts
from chainrule.classes.sso import Sso
from chainrule.commands.lti import tool
from chainrule.progress import open_store
from chainrule.web.routes_class import create_class_app
from chainrule.web.routes_lti import add_lti
from chainrule.web.routes_sso import add_sso
from class_world import FAST_HASHER

BASE = "http://class.example.org"
DATA_DIR = tempfile.mkdtemp(prefix="chainrule-class-schemathesis-")
store = open_store(DATA_DIR, file_name=CLASS_DATABASE)
accounts = Accounts(store, hasher=FAST_HASHER)
made = accounts.create_class("Fuzzed")
app = create_class_app(store, accounts=accounts, hosts=["class.example.org"])
lti = tool(DATA_DIR, store, accounts, BASE)
add_lti(app, lti, None)
add_sso(app, Sso(store, accounts, BASE, remote=lti.remote))


def signed_in(path: str, fields: dict[str, str]) -> dict[str, str]:
    """The headers of a browser signed in through the form at ``path``: its cookies and its CSRF token."""
    client = TestClient(app, base_url=BASE, follow_redirects=False)
    page = client.get(path)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    assert client.post(path, data={"csrf": csrf, **fields}).status_code == 303
    cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
    return {"Cookie": cookie, "X-CSRF-Token": client.cookies["chainrule_csrf"]}


LEARNER = signed_in(f"/join/{made.invite_token}", {"name": "Ada", "password": "correct horse battery"})
TEACHER = signed_in(f"/set-password/{made.teacher_token}", {"password": "correct horse battery"})
CONFIG = SchemathesisConfig.from_dict({"checks": {
    "negative_data_rejection": {"expected-statuses": [400, 401, 403, 404, 405, 409, 413, 415, 422]},
    "positive_data_acceptance": {"expected-statuses": ["2XX", 403, 404, 422]},
}})
schema = schemathesis.openapi.from_dict(app.openapi(), config=CONFIG).include(path_regex="^/api/class/")
schema.app = app




def _form(*names: str, path: tuple[str, ...] = (), method: str = "post") -> dict:
    """An operation whose fields are sent url-encoded (in the query for a GET), any further field allowed."""
    fields = {"type": "object", "properties": {name: {"type": "string"} for name in names},
              "additionalProperties": {"type": "string"}}
    parameters = [{"name": name, "in": "path", "required": True, "schema": {"type": "integer"}} for name in path]
    if method == "get":
        parameters += [{"name": name, "in": "query", "schema": {"type": "string"}} for name in names]
        return {method: {"parameters": parameters, "responses": {"default": {"description": "any"}}}}
    return {method: {"parameters": parameters, "responses": {"default": {"description": "any"}},
                     "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": fields}}}}}


FORMS = {"openapi": "3.0.3", "info": {"title": "class forms", "version": "1"}, "paths": {
    "/sign-in": _form("csrf", "class_name", "name", "password"),
    "/join/{invite}": {"post": {**_form("csrf", "name", "password")["post"],
                                "parameters": [{"name": "invite", "in": "path", "required": True,
                                                "schema": {"type": "string"}}]}},
    "/lti/login": _form("iss", "login_hint", "target_link_uri", "lti_message_hint", "client_id"),
    "/lti/launch": _form("id_token", "state"),
    "/lti/pick": _form("csrf", "settings", "resource"),
    "/sso/start/{provider_id}": _form("csrf", "next", "invite", "link", path=("provider_id",)),
    "/sso/callback/{key}": _form("code", "state", "error", path=("key",), method="get"),
    "/sso/choose": _form("ticket", "account"),
}}
forms = schemathesis.openapi.from_dict(FORMS)
forms.app = app


@pytest.mark.timeout(300)
@forms.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.parametrize("who", ["stranger"])  # (gives each operation's test a node id of its own)
def test_the_forms_and_lti_and_sign_in_pages_never_fail(case, who):
    case.call_and_validate(base_url=BASE, checks=[not_a_server_error])


@pytest.fixture(scope="module", autouse=True)
def cleanup():
    yield
    store.close()
    shutil.rmtree(DATA_DIR, ignore_errors=True)


def test_the_fuzzed_schema_has_the_class_routes():
    assert len(list(schema.get_all_operations())) >= 6
    assert Path(DATA_DIR, CLASS_DATABASE).is_file()


# 15 random cases per operation and role, as for the forms above. Before them schemathesis's coverage phase
# sends each parameter's boundary and malformed values (9 to 36 cases per operation: an id at the route's bound
# and one past it, a fraction, a word, null), which the random cases mostly repeat.
@pytest.mark.timeout(300)
@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.parametrize("who", ["learner", "teacher"])
def test_class_api_never_fails(case, who):
    case.call_and_validate(base_url=BASE, headers=a_learner(case.operation.label) if who == "learner" else TEACHER)


CHECKED = {"operation": None}  # the operation whose learner's test last made sure the learner is signed in


def a_learner(operation: str) -> dict[str, str]:
    """A signed-in learner's headers: a new learner when the teacher's fuzzing removed the last one (DELETE
    /api/class/learners/{id} tries the example id, Ada's), so that the routes fuzzed after it (the teacher's
    due dates and regrades) meet a learner, not a 401. Looked at once per operation, at its first case: only
    the teacher's tests, which run between two operations' learner tests, can end the learner's session."""
    global LEARNER
    if CHECKED["operation"] == operation:
        return LEARNER
    CHECKED["operation"] = operation
    client = TestClient(app, base_url=BASE)
    if client.get("/api/class/me", headers=LEARNER).status_code in (401, 403):
        # The fuzzing may have closed or archived the class, left it full or asking for approval, or made a new
        # invite: open it again and join through the invite it has now.
        assert client.put("/api/class/state", json={"state": "open"}, headers=TEACHER).status_code == 200
        assert client.put("/api/class/admission", json={"seats": None, "approval": False},
                          headers=TEACHER).status_code == 200
        invite = client.post("/api/class/invite", headers=TEACHER).json()["invite"]
        LEARNER = signed_in(urlsplit(invite).path, {"name": f"Learner {uuid.uuid4().hex[:8]}",
                                                    "password": "correct horse battery"})
    return LEARNER
