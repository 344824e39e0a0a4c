"""Property-based fuzzing of the JSON API from its own OpenAPI schema (schemathesis): no input, valid or
not, may produce a server error (5xx), a response that breaks the schema, or a hang."""

from __future__ import annotations

import shutil
import tempfile

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

from chainrule.web import create_app

TOKEN = "schemathesis-token-0123456789"
AUTH = {"X-Chainrule-Token": TOKEN}
BASE = "http://127.0.0.1:8765"

DATA_DIR = tempfile.mkdtemp(prefix="chainrule-schemathesis-")
app = create_app(TOKEN, DATA_DIR, port=8765)
# A body over the size limit is rejected with 413 before any validation: that is a rejection too.
# Some schema-valid requests are still wrong for the lesson (an answer that is not a number for a numeric
# question, a key idea id the lesson does not have): those get 422 with a message, which is accepted here.
CONFIG = SchemathesisConfig.from_dict({"checks": {
    "negative_data_rejection": {"expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]},
    "positive_data_acceptance": {"expected-statuses": ["2XX", 401, 403, 404, 409, 422, 429]},
}})
schema = schemathesis.openapi.from_dict(app.openapi(), config=CONFIG)
schema.app = app  # call the app in process (ASGI), as schemathesis.openapi.from_asgi would

FAST = schema.exclude(path="/api/grade")
GRADE = schema.include(path="/api/grade")


@pytest.fixture(scope="module", autouse=True)
def cleanup():
    yield
    app.state.services.close()
    shutil.rmtree(DATA_DIR, ignore_errors=True)


# Under pytest 9 an unparametrized schemathesis test gets the function's node id for every operation, and
# pytest-xdist (`make test` runs it) schedules by node id, so it would run one operation of all. A parameter
# puts the operation in the node id (tests/parallel.py refuses two tests with one id).
ONE_CALLER = pytest.mark.parametrize("caller", ["learner"])


@pytest.mark.timeout(300)
@FAST.parametrize()
@ONE_CALLER
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_never_fails(case, caller):
    case.call_and_validate(base_url=BASE, headers=AUTH)


@pytest.mark.timeout(300)
@GRADE.parametrize()
@ONE_CALLER
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
def test_grade_never_fails(case, caller):
    # Few examples: each valid one runs the sandbox.
    case.call_and_validate(base_url=BASE, headers=AUTH)
