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
from fuzzing import fuzz_every_operation

BASE = "http://class.example.org"
CONFIG = SchemathesisConfig.from_dict({"checks": {
    "negative_data_rejection": {"expected-statuses": [400, 401, 403, 404, 405, 409, 413, 415, 422]},
    "positive_data_acceptance": {"expected-statuses": ["2XX", 403, 404, 422]},
}})


class Fuzzed:
    """The class app under fuzzing: a class in SQLite in a temporary folder, with LTI and sign-in routes, and the
    headers of its learner and its teacher, signed in. Made when this file's tests run, not when pytest collects
    them: every pytest-xdist worker collects every file, and only one runs these tests."""

    def __init__(self) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="chainrule-class-schemathesis-")
        self.store = open_store(self.data_dir, file_name=CLASS_DATABASE)
        accounts = Accounts(self.store, hasher=FAST_HASHER)
        made = accounts.create_class("Fuzzed")
        self.app = create_class_app(self.store, accounts=accounts, hosts=["class.example.org"])
        lti = tool(self.data_dir, self.store, accounts, BASE)
        add_lti(self.app, lti, None)
        add_sso(self.app, Sso(self.store, accounts, BASE, remote=lti.remote))
        self.learner = self.signed_in(f"/join/{made.invite_token}", {"name": "Ada", "password": "correct horse battery"})
        self.teacher = self.signed_in(f"/set-password/{made.teacher_token}", {"password": "correct horse battery"})
        self.checked: str | None = None  # the operation whose learner's test last made sure the learner is signed in

    def signed_in(self, path: str, fields: dict[str, str]) -> dict[str, str]:
        """The headers of a browser signed in through the form at ``path``: its cookies and its CSRF token."""
        client = TestClient(self.app, base_url=BASE, follow_redirects=False)
        page = client.get(path)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        assert client.post(path, data={"csrf": csrf, **fields}).status_code == 303
        cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
        return {"Cookie": cookie, "X-CSRF-Token": client.cookies["chainrule_csrf"]}

    def close(self) -> None:
        self.store.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def fuzzed():
    made = Fuzzed()
    yield made
    made.close()


@pytest.fixture(scope="module")
def class_api(fuzzed):
    """Class mode's own API, from the app's OpenAPI schema (built here, once the tests run: see Fuzzed)."""
    schema = schemathesis.openapi.from_dict(fuzzed.app.openapi(), config=CONFIG).include(path_regex="^/api/class/")
    schema.app = fuzzed.app
    return schema


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
@pytest.fixture(scope="module")
def forms(fuzzed):
    schema = schemathesis.openapi.from_dict(FORMS)
    schema.app = fuzzed.app
    return schema


# 15 random cases per operation and role. Before them schemathesis's coverage phase sends each parameter's
# boundary and malformed values (9 to 36 cases per operation: an id at the route's bound and one past it, a
# fraction, a word, null), which the random cases mostly repeat. Each test fuzzes every operation of its schema,
# each in a subtest of its own (tests/fuzzing.py).
FUZZING = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.timeout(900)
def test_the_forms_and_lti_and_sign_in_pages_never_fail(forms, subtests):
    fuzzed = fuzz_every_operation(forms, subtests, FUZZING,
                                  lambda case: case.call_and_validate(base_url=BASE, checks=[not_a_server_error]))
    assert len(fuzzed) == len(FORMS["paths"])


def test_the_fuzzed_schema_has_the_class_routes(class_api, forms, fuzzed):
    assert len(list(class_api.get_all_operations())) >= 6
    assert len(list(forms.get_all_operations())) == len(FORMS["paths"])
    assert Path(fuzzed.data_dir, CLASS_DATABASE).is_file()


@pytest.mark.timeout(900)
def test_class_api_never_fails_for_the_learner(class_api, fuzzed, subtests):
    fuzz_every_operation(class_api, subtests, FUZZING, lambda case: case.call_and_validate(
        base_url=BASE, headers=a_learner(fuzzed, case.operation.label)))


@pytest.mark.timeout(900)
def test_class_api_never_fails_for_the_teacher(class_api, fuzzed, subtests):
    fuzz_every_operation(class_api, subtests, FUZZING,
                         lambda case: case.call_and_validate(base_url=BASE, headers=fuzzed.teacher))


def a_learner(fuzzed: Fuzzed, operation: str) -> dict[str, str]:
    """A signed-in learner's headers: a new learner when the teacher's fuzzing removed the last one (DELETE
    /api/class/learners/{id} tries the example id, Ada's), so that the routes fuzzed after it (the teacher's
    due dates and regrades) meet a learner, not a 401. Looked at once per operation, at its first case: only
    the teacher's fuzzing, which runs after the learner's, can end the learner's session."""
    if fuzzed.checked == operation:
        return fuzzed.learner
    fuzzed.checked = operation
    client = TestClient(fuzzed.app, base_url=BASE)
    teacher = fuzzed.teacher
    if client.get("/api/class/me", headers=fuzzed.learner).status_code in (401, 403):
        # The fuzzing may have closed or archived the class, left it full or asking for approval, or made a new
        # invite: open it again and join through the invite it has now.
        assert client.put("/api/class/state", json={"state": "open"}, headers=teacher).status_code == 200
        assert client.put("/api/class/admission", json={"seats": None, "approval": False},
                          headers=teacher).status_code == 200
        invite = client.post("/api/class/invite", headers=teacher).json()["invite"]
        fuzzed.learner = fuzzed.signed_in(urlsplit(invite).path, {"name": f"Learner {uuid.uuid4().hex[:8]}",
                                                                  "password": "correct horse battery"})
    return fuzzed.learner
