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
from fuzzing import fuzz_every_operation

TOKEN = "schemathesis-token-0123456789"
AUTH = {"X-Chainrule-Token": TOKEN}
BASE = "http://127.0.0.1:8765"

# A body over the size limit is rejected with 413 before any validation: that is a rejection too.
# Some schema-valid requests are still wrong for the lesson (an answer that is not a number for a numeric
# question, a key idea id the lesson does not have): those get 422 with a message, which is accepted here.
CONFIG = SchemathesisConfig.from_dict({"checks": {
    "negative_data_rejection": {"expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]},
    "positive_data_acceptance": {"expected-statuses": ["2XX", 401, 403, 404, 409, 422, 429]},
}})


@pytest.fixture(scope="module")
def api_schema():
    """The lesson app's schema, built when this file's tests run (not at collection, in every pytest-xdist
    worker: tests/fuzzing.py), with the app called in process (ASGI), as schemathesis.openapi.from_asgi would."""
    data_dir = tempfile.mkdtemp(prefix="chainrule-schemathesis-")
    app = create_app(TOKEN, data_dir, port=8765)
    schema = schemathesis.openapi.from_dict(app.openapi(), config=CONFIG)
    schema.app = app
    yield schema
    app.state.services.close()
    shutil.rmtree(data_dir, ignore_errors=True)


def call(case) -> None:
    case.call_and_validate(base_url=BASE, headers=AUTH)


# Each test fuzzes every operation it takes, each in a subtest of its own.
@pytest.mark.timeout(900)
def test_api_never_fails(api_schema, subtests):
    fuzzed = fuzz_every_operation(api_schema.exclude(path="/api/grade"), subtests,
                                  settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck)),
                                  call)
    assert "POST /api/grade" not in fuzzed


@pytest.mark.timeout(300)
def test_grade_never_fails(api_schema, subtests):
    # Few examples: each valid one runs the sandbox.
    fuzzed = fuzz_every_operation(api_schema.include(path="/api/grade"), subtests,
                                  settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck)),
                                  call)
    assert fuzzed == ["POST /api/grade"]
