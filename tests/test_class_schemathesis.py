"""Property-based fuzzing of class mode's own API (/api/class/...) from its OpenAPI schema, signed in as a
learner and as the teacher: no input gives a server error, an undocumented status or a hang. (The lesson API
is fuzzed in tests/test_web_schemathesis.py.)"""

from __future__ import annotations

import re
import shutil
import tempfile
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import schemathesis
from argon2 import PasswordHasher
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts
from chainrule.progress import open_store
from chainrule.web.routes_class import create_class_app

BASE = "http://class.example.org"
DATA_DIR = tempfile.mkdtemp(prefix="chainrule-class-schemathesis-")
store = open_store(DATA_DIR, file_name=CLASS_DATABASE)
accounts = Accounts(store, hasher=PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1))
made = accounts.create_class("Fuzzed")
app = create_class_app(store, accounts=accounts, hosts=["class.example.org"])


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


@pytest.fixture(scope="module", autouse=True)
def cleanup():
    yield
    store.close()
    shutil.rmtree(DATA_DIR, ignore_errors=True)


def test_the_fuzzed_schema_has_the_class_routes():
    assert len(list(schema.get_all_operations())) >= 6
    assert Path(DATA_DIR, CLASS_DATABASE).is_file()


@pytest.mark.timeout(300)
@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.parametrize("who", ["learner", "teacher"])
def test_class_api_never_fails(case, who):
    case.call_and_validate(base_url=BASE, headers=a_learner() if who == "learner" else TEACHER)


def a_learner() -> dict[str, str]:
    """A signed-in learner's headers: a new learner when the teacher's fuzzing removed the last one (DELETE
    /api/class/learners/{id} tries the example id, Ada's), so that the routes fuzzed after it (the teacher's
    due dates and regrades) meet a learner, not a 401."""
    global LEARNER
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
