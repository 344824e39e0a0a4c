"""Grader feedback a learner can act on: Python's IndexError when a node is read before it is computed means
the same mistake as JavaScript's NaN; a mistake every test that did not pass shows is the run's diagnosis,
said once; each test's numbers come with the texts the page shows.

The sources are real submissions, graded in the real sandbox."""

from __future__ import annotations

import pytest

from chainrule.grading import starter_source
from submissions import APPEND_IN_LIST_ORDER

pytestmark = pytest.mark.timeout(180)



def test_an_index_error_from_reading_a_node_before_it_is_computed_is_diagnosed(grade_once):
    result = grade_once("forward-any-order", "python", APPEND_IN_LIST_ORDER)
    statuses = [t["status"] for t in result["tests"] if not t.get("hidden")]
    assert statuses.count("pass") == 1 and statuses.count("error") == 4  # "already in order" passes
    raised = [t for t in result["tests"] if t["status"] == "error" and not t.get("hidden")]
    assert all("IndexError" in t["problems"] for t in raised)
    assert all(t["mistake"] == "read-before-computed" for t in raised)
    # The first case, [tanh 4], [mul 0 1], [add 4 2]: node 0 reads value 4, which list order has not made yet.
    first = raised[0]
    assert "node 0 reads value 4 before it is computed" in first["hint"] and first["message"].endswith(first["hint"])
    assert result["diagnosis_mistake"] == "read-before-computed"
    assert "topological order" in result["diagnosis"]


def test_one_mistake_in_every_failing_test_is_the_runs_diagnosis_said_once(grade_once):
    # The starter of local-gradients leaves every _backward empty: all 16 tests get 0 everywhere.
    result = grade_once("local-gradients", "python", starter_source("local-gradients", "python"))
    assert result["verdict"] == "failed"
    assert result["diagnosis_mistake"] == "nothing-reached"
    assert result["diagnosis"].startswith("Every gradient is 0")
    assert {t["mistake"] for t in result["tests"]} == {"nothing-reached"}
    # The per-test text the page shows without the hint: only the wrong numbers.
    assert all("Every gradient is 0" not in t["problems"] for t in result["tests"])
    # A hidden test says so in place of its numbers, which a learner sees only once the run passes.
    hidden = [t for t in result["tests"] if t.get("hidden")]
    assert len(hidden) == 8 and all(t["expected"] is None and t["test_code"] is None for t in hidden)


def test_each_tests_numbers_come_with_the_texts_the_page_shows(grade_once):
    result = grade_once("neuron-grads", "python", starter_source("neuron-grads", "python"))
    first = result["tests"][0]
    # The spec's neuron: d out/d w1 = x1 (1 - out^2) = 2 * 0.5 = 1, d out/d w2 = 0, d out/d b = 0.5.
    assert (first["expected_text"], first["actual_text"]) == ("[1, 0, 0.5]", "[0, 0, 0]")
    assert "expected 1, got 0" in first["problems"]
