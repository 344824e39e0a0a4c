"""Fuzz every operation of a schemathesis schema that is built when the test runs, not when pytest collects it.

`@schema.parametrize()` needs the schema at collection, and pytest-xdist has every worker collect every test
file: each worker built the app, its OpenAPI document and schemathesis's tests of every operation (about 4 s of
CPU for class mode's schema), though only one worker runs them. Here a test builds its schema in a fixture and
fuzzes each operation in a subtest of its own (pytest's `subtests` fixture: a failure names the operation,
and the other operations still run), with the tests schemathesis's own parametrize would make: its coverage
phase (each parameter's boundary and malformed values) and then Hypothesis's random cases, with the checks of
the schema's configuration.

    def test_api_never_fails(api_schema, subtests):
        fuzz_every_operation(api_schema, subtests, settings(max_examples=15, deadline=None),
                             lambda case: case.call_and_validate(base_url=BASE))

(schemathesis's own lazy loader, `schemathesis.pytest.from_fixture`, does the same but writes a pytest node
attribute that pytest 9.2 no longer has.)
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from hypothesis import settings as Settings
from schemathesis.core.failures import FailureGroup, as_reported_failure
from schemathesis.core.result import Ok
from schemathesis.pytest.lazy import get_all_tests


def fuzz_every_operation(schema: Any, subtests: pytest.Subtests, settings: Settings,
                         call: Callable[[Any], None]) -> list[str]:
    """Run ``call(case)`` on schemathesis's cases of every operation of ``schema``, an operation per subtest;
    returns the operations' labels, in the order they ran."""
    from schemathesis.checks import load_all_checks

    load_all_checks()

    def test(case) -> None:
        call(case)

    labels = []
    for result in get_all_tests(schema=schema, test_func=test, settings=settings, given_kwargs={}):
        if not isinstance(result, Ok):
            with subtests.test(msg="an operation the schema does not define well"):
                raise result.err()
            continue
        operation, run = result.ok()
        labels.append(operation.label)
        with subtests.test(msg=operation.label):
            try:
                run()
            except FailureGroup as failures:
                raise as_reported_failure(failures) from None
    assert labels, "the schema has no operation to fuzz"
    return labels
