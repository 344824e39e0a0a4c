"""The graded exercises end to end: cases as data, references pass, starters fail, targeted hints.

Every grading here runs the real sandbox with the real interpreters (Python, node + bundled sucrase).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from chainrule.grading import (
    LANGUAGES,
    detect_exercise,
    exercise_cases,
    get_exercise,
    grade,
    list_exercises,
    reference_source,
    starter_source,
)
from chainrule.grading.diagnoses import diagnose_run
from chainrule.grading.expressions import simulate_backward
from chainrule.grading.kinds.backward import NAIVE_RECURSION

pytestmark = pytest.mark.timeout(120)

# The backpropagation lesson's exercises; the exercise folders of the other lessons are tested in
# tests/test_lessons_path.py.
BACKPROP_EXERCISES = ("neuron-grads", "local-gradients", "backward-order")
ALL = [(e, lang) for e in BACKPROP_EXERCISES for lang in LANGUAGES]
SRC = Path(__import__("chainrule").__file__).resolve().parents[1]


def _rows(expression: str) -> list[tuple[str, list[float], list[float]]]:
    """(value set name, values, expected gradients) of the expression-grads cases on `expression`."""
    return [(c.name.split(": ", 1)[1], c.inputs["values"], c.expected)
            for c in exercise_cases("backward-order") if c.inputs["expression"] == expression]


# ------------------------------------------------------------------------------------- the data


def test_the_backward_exercises_share_their_cases_and_the_expressions_cover_the_spec():
    assert [c.inputs for c in exercise_cases("local-gradients")] == [c.inputs for c in exercise_cases("backward-order")]
    assert [c.name.split(":")[0] for c in exercise_cases("backward-order")][::4] == ["neuron", "reuse", "chain", "shared"]
    for expr in ("neuron", "reuse", "chain", "shared"):
        rows = _rows(expr)
        assert len(rows) >= 4
        values = [v for _, vals, _ in rows for v in vals]
        assert any(v < 0 for v in values) and any(v == 0 for v in values) and max(abs(v) for v in values) >= 40
    assert _rows("neuron")[0][1] == [2.0, -3.0, 0.0, 1.0, 6.8813735870195432]


def test_spec_neuron_expectations_are_the_hand_derived_ones():
    """Section 04: x1.grad, w1.grad, x2.grad, w2.grad = -1.5, 1.0, 0.5, 0.0 and b.grad = 0.5."""
    _, _, grads = _rows("neuron")[0]
    assert [round(g, 9) + 0.0 for g in grads] == [-1.5, 1.0, 0.5, 0.0, 0.5]
    assert round(exercise_cases("neuron-grads")[0].args[3], 4) == 0.7071


def test_reuse_expectations_match_the_closed_form():
    # out = a*b + a*a  =>  d/da = b + 2a, d/db = a
    for _, (a, b), grads in _rows("reuse"):
        assert grads == pytest.approx([b + 2 * a, a], rel=1e-12, abs=1e-12)


def test_shared_expectations_match_the_hand_derived_formula():
    # h = tanh(x w), out = h + h^2  =>  d out/dh = 1 + 2h, dh/dx = (1 - h^2) w, dh/dw = (1 - h^2) x
    rows = _rows("shared")
    assert [name for name, _, _ in rows] == ["small values", "negative values", "zero values", "large values"]
    for _, (x, w), grads in rows:
        h = math.tanh(x * w)
        slope = (2 * h + 1) * (1 - h * h)
        assert grads == pytest.approx([slope * w, slope * x], rel=1e-12, abs=1e-15)


def test_simulated_mistaken_walks_match_their_closed_forms():
    """The diagnosis's replay of walks without a topological order, checked against hand derivations.

    For out = h + h*h, with g = (1 - h^2):
    * recursion with no memory: out's _backward gives h 1; h's first _backward sends g*1 on; h*h then
      adds 2h; h's _backward runs twice more with 1 + 2h each time, and x*w's _backward every time with
      the running total (g, g(2 + 2h), g(3 + 4h)), so d/dx = w g (6 + 6h);
    * recursion that skips visited values: h's only _backward runs with 1, so d/dx = w g.
    On the three tree-shaped expressions both walks are right.
    """
    for x, w in [(0.5, 0.8), (-1.2, 0.7), (0.0, 1.3), (250.0, -0.006), (3.0, -2.0)]:
        h = math.tanh(x * w)
        g = 1 - h * h
        assert simulate_backward("shared", [x, w], "recursive") == pytest.approx(
            [w * g * (6 + 6 * h), x * g * (6 + 6 * h)], rel=1e-12, abs=1e-15)
        assert simulate_backward("shared", [x, w], "recursive-seen") == pytest.approx([w * g, x * g], rel=1e-12, abs=1e-15)
    for expr in ("neuron", "reuse", "chain"):
        for _, vals, grads in _rows(expr):
            for walk in ("recursive", "recursive-seen"):
                assert simulate_backward(expr, vals, walk) == pytest.approx(grads, rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError, match="unknown walk 'sideways'"):
        simulate_backward("shared", [1.0, 2.0], "sideways")


def test_expectations_match_torch_float64():
    torch = pytest.importorskip("torch")
    for expr in ("neuron", "reuse", "chain", "shared"):
        for _, vals, grads in _rows(expr):
            leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in vals]
            if expr == "neuron":
                x1, w1, x2, w2, b = leaves
                out = torch.tanh(x1 * w1 + x2 * w2 + b)
            elif expr == "reuse":
                a, b = leaves
                out = a * b + a * a
            elif expr == "shared":
                x, w = leaves
                h = torch.tanh(x * w)
                out = h + h * h
            else:
                x, w = leaves
                out = x
                for _ in range(10):
                    out = torch.tanh(out * w)
            out.backward()
            assert grads == pytest.approx([leaf.grad.item() for leaf in leaves], rel=1e-9, abs=1e-12)
    for case in exercise_cases("neuron-grads"):
        (x1, x2), (w1, w2), b, out, _ = case.args
        w = torch.tensor([w1, w2], dtype=torch.float64, requires_grad=True)
        bias = torch.tensor(b, dtype=torch.float64, requires_grad=True)
        y = torch.tanh(x1 * w[0] + x2 * w[1] + bias)
        y.backward()
        assert out == pytest.approx(y.item(), rel=1e-12, abs=1e-15)
        assert case.expected == pytest.approx(w.grad.tolist() + [bias.grad.item()], rel=1e-9, abs=1e-12)


def test_neuron_grads_cases_are_built_from_the_neuron_sets():
    cases = exercise_cases("neuron-grads")
    assert [c.name for c in cases][0] == "neuron: spec values"
    first = cases[0]
    assert first.args[0] == [2.0, 0.0] and first.args[1] == [-3.0, 1.0]
    assert [round(x, 9) + 0.0 for x in first.expected] == [1.0, 0.0, 0.5]  # dw1, dw2, db from section 04


def test_list_exercises_and_unknown_ids():
    listed = list_exercises()
    ids = [e["id"] for e in listed]
    assert [i for i in ids if i in BACKPROP_EXERCISES] == list(BACKPROP_EXERCISES)  # in the lesson's order
    assert all(e["languages"] == ["python", "javascript", "typescript"] and e["title"] for e in listed)
    with pytest.raises(ValueError, match="unknown exercise 'nope'"):
        grade("nope", "python", "")
    with pytest.raises(ValueError, match="unknown language 'cobol'"):
        grade("neuron-grads", "cobol", "")
    with pytest.raises(ValueError, match="unknown language"):
        starter_source("neuron-grads", "rust")


def test_no_todo_outside_starter_files():
    offenders = []
    for path in (SRC / "chainrule").rglob("*"):
        if path.is_file() and path.suffix in {".py", ".js", ".ts", ".json", ".md", ".html", ".css"}:
            if path.name.startswith("starter."):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if re.search(r"\b(TODO|FIXME|XXX)\b", text):
                offenders.append(str(path))
    grading_offenders = [p for p in offenders if "/grading/" in p]
    assert grading_offenders == []


# ------------------------------------------------------------------------------------- references and starters


@pytest.mark.parametrize("exercise_id,language", ALL)
def test_reference_passes(exercise_id, language, grade_once):
    result = grade_once(exercise_id, language, reference_source(exercise_id, language))
    assert result["status"] == "pass", json.dumps(result, indent=1)[:3000]
    assert result["verdict"] == "passed"
    hidden = get_exercise(exercise_id).hidden
    assert hidden is not None and result["hidden"]["count"] == hidden.count
    assert len(result["tests"]) == len(exercise_cases(exercise_id)) + hidden.count
    assert all(t["status"] == "pass" and t["actual"] == t["expected"] for t in result["tests"])
    assert all(t["test_code"] for t in result["tests"])  # a passing run shows its hidden cases too


@pytest.mark.parametrize("exercise_id,language", ALL)
def test_untouched_starter_fails(exercise_id, language, grade_once):
    source = starter_source(exercise_id, language)
    assert "TODO" in source and f"chainrule exercise: {exercise_id}" in source
    result = grade_once(exercise_id, language, source)
    assert result["status"] == "fail" and result["verdict"] == "failed"
    failing = [t for t in result["tests"] if t["status"] == "fail"]
    assert len(failing) == len(result["tests"])
    assert "Every gradient is 0" in failing[0]["message"]


def test_result_shape_follows_exercism_v3_plus_extras(grade_once):
    result = grade_once("neuron-grads", "python", starter_source("neuron-grads", "python"))
    assert result["version"] == 3
    assert set(result) >= {"version", "status", "message", "verdict", "exercise", "language", "isolation", "tests",
                           "duration_ms"}
    assert result["isolation"]["level"] in {"strong", "partial", "minimal"}
    test = result["tests"][0]
    assert set(test) >= {"name", "status", "message", "output", "test_code", "expected", "actual"}
    assert test["test_code"].startswith("neuron_grads([2.0, 0.0], [-3.0, 1.0], 6.88137358701954")
    assert "expected 1, got 0" in test["message"]  # each number as the page writes it (graded_text)
    assert (test["expected_text"], test["actual_text"]) == ("[1, 0, 0.5]", "[0, 0, 0]")
    shown = [c.name for c in exercise_cases("neuron-grads")]
    assert [t["name"] for t in result["tests"]] == shown + [f"hidden case {k}" for k in range(1, 5)]
    json.dumps(result, allow_nan=False)  # the web sends it as strict JSON


# ------------------------------------------------------------------------------------- languages and loading


def test_js_function_found_with_or_without_export():
    plain = "function neuronGrads(x, w, b, out, grad) { const d = 1 - out * out; return [d * x[0], d * x[1], d]; }"
    assert grade("neuron-grads", "javascript", plain)["verdict"] == "passed"
    assert grade("neuron-grads", "javascript", "export " + plain)["verdict"] == "passed"
    assert grade("neuron-grads", "javascript", plain + "\nmodule.exports = { neuronGrads };")["verdict"] == "passed"


def test_ts_function_found_without_export():
    source = reference_source("neuron-grads", "typescript").replace("export function", "function")
    assert grade("neuron-grads", "typescript", source)["verdict"] == "passed"


def test_python_error_reports_the_learners_own_line():
    source = "def neuron_grads(x, w, b, out, grad):\n    d = 1 - out**2\n    grad[0] = d * undefined_name\n    return grad\n"
    result = grade("neuron-grads", "python", source)
    assert result["verdict"] == "error" and result["status"] == "fail"
    message = result["tests"][0]["message"]
    assert "NameError" in message and "line 3" in message and "grad[0] = d * undefined_name" in message


def test_typescript_error_line_survives_type_stripping():
    source = ("// chainrule exercise: neuron-grads\n\nfunction neuronGrads(x: number[], w: number[], b: number,"
              " out: number, grad: number[]): number[] {\n  const d: number = 1 - out ** 2;\n"
              "  throw new Error('stop here ' + d);\n}\n")
    result = grade("neuron-grads", "typescript", source)
    assert result["verdict"] == "error"
    assert "line 5" in result["tests"][0]["message"] and "stop here" in result["tests"][0]["message"]


def test_syntax_error_is_a_load_error_with_its_line():
    result = grade("neuron-grads", "python", "def neuron_grads(x, w, b, out, grad)\n    return grad\n")
    assert result["status"] == "error" and result["verdict"] == "error"
    assert "SyntaxError" in result["message"] and "line 1" in result["message"]
    result = grade("neuron-grads", "typescript", "function neuronGrads(x: number[] {\n}\n")
    assert result["status"] == "error" and result["verdict"] == "error" and "line 1" in result["message"]


def test_missing_function_is_named():
    result = grade("local-gradients", "javascript", "function gradOf() {}")
    assert result["status"] == "error" and "no function named gradsOf" in result["message"]


def test_output_is_captured_per_test_and_capped_at_500_characters():
    source = ("def neuron_grads(x, w, b, out, grad):\n    print('x is', x)\n    print('y' * 2000)\n"
              "    d = 1 - out**2\n    return [d * x[0], d * x[1], d]\n")
    result = grade("neuron-grads", "python", source)
    assert result["verdict"] == "passed"
    output = result["tests"][0]["output"]
    assert output.startswith("x is [2.0, 0.0]") and "truncated to 500 characters" in output
    assert len(output) < 600


def test_rounding_happens_in_one_place_for_every_language():
    """A value that differs from the engine only past the 9th decimal passes in every language."""
    nudge = {"python": "+ 1e-12", "javascript": "+ 1e-12", "typescript": "+ 1e-12"}
    for language in LANGUAGES:
        source = reference_source("neuron-grads", language)
        source = source.replace("grad[2] = dn;", f"grad[2] = dn {nudge[language]};").replace(
            "grad[2] = dn             #", f"grad[2] = dn {nudge[language]}  #")
        assert "1e-12" in source
        assert grade("neuron-grads", language, source)["verdict"] == "passed", language
    wrong = reference_source("neuron-grads", "javascript").replace("grad[2] = dn;", "grad[2] = dn + 1e-8;")
    result = grade("neuron-grads", "javascript", wrong)
    assert result["verdict"] == "failed" and "d out/d b (grad[2])" in result["tests"][0]["message"]


def test_nan_and_non_numbers_are_reported_not_crashed():
    result = grade("neuron-grads", "javascript",
                   "function neuronGrads(x, w, b, out, grad) { return [NaN, 'one', undefined]; }")
    assert result["verdict"] == "failed"
    test = result["tests"][0]
    assert test["actual"] == ["NaN", '"one"', "undefined"]  # as returned, not null (issue 21 item 6)
    assert "not a finite number" in test["message"]
    json.dumps(result, allow_nan=False)


# ------------------------------------------------------------------------------------- targeted hints


def _assign_instead_of_accumulate(language: str) -> str:
    source = reference_source("local-gradients", language)
    changed = source.replace("self.grad += ", "self.grad = ").replace("other.grad += ", "other.grad = ")
    changed = changed.replace("this.grad += ", "this.grad = ")
    assert changed != source
    return changed


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_hint_for_assignment_instead_of_accumulation(language):
    result = grade("local-gradients", language, _assign_instead_of_accumulate(language))
    assert result["verdict"] == "failed"
    by_name = {t["name"]: t for t in result["tests"]}
    assert by_name["neuron: spec values"]["status"] == "pass"  # every input used once: = happens to work
    reuse = by_name["reuse: small values"]
    assert reuse["status"] == "fail"
    assert "d out/d a (grad[0]): expected 4, got" in reuse["message"]
    assert "accumulate with +=, not =" in reuse["message"]
    assert "+=" in by_name["chain: small values"]["message"]
    shared = by_name["shared: small values"]
    assert shared["status"] == "fail" and "+=" in shared["message"] and "h*h" in shared["message"]


def test_hint_for_forward_walk_in_backward_order():
    source = reference_source("backward-order", "python").replace("for v in reversed(order):", "for v in order:")
    result = grade("backward-order", "python", source)
    assert result["verdict"] == "failed"
    assert "the gradient never propagated" in result["tests"][0]["message"]
    assert "reverse" in result["tests"][0]["message"]


def test_hint_for_forgotten_tanh_derivative():
    source = "function neuronGrads(x, w, b, out, grad) { return [x[0], x[1], 1]; }"
    result = grade("neuron-grads", "javascript", source)
    assert "left out tanh's local derivative" in result["tests"][0]["message"]


def test_hint_for_weight_used_instead_of_input():
    source = ("def neuron_grads(x, w, b, out, grad):\n    d = 1 - out**2\n"
              "    return [d * w[0], d * w[1], d]\n")
    result = grade("neuron-grads", "python", source)
    assert result["verdict"] == "failed"
    assert "not the weight itself" in result["tests"][0]["message"]


def test_hint_for_a_reuse_double_count_in_backward_order():
    """A walk that runs a*a's _backward twice adds a's share twice: the topological-order hint."""
    source = reference_source("backward-order", "python").replace(
        "    for v in reversed(order):\n        v._backward()\n",
        "    for v in reversed(order):\n        v._backward()\n        if len(v._prev) == 2 and v._prev[0] is v._prev[1]:\n"
        "            v._backward()\n",
    )
    result = grade("backward-order", "python", source)
    reuse = next(t for t in result["tests"] if t["name"] == "reuse: small values")
    assert reuse["status"] == "fail" and "topological order" in reuse["message"]


# ------------------------------------------------------------------------------------- detection


@pytest.mark.parametrize("exercise_id,language", ALL)
def test_exercise_detected_from_starter_marker(exercise_id, language):
    assert detect_exercise(starter_source(exercise_id, language)) == exercise_id


def test_exercise_detected_from_function_names():
    assert detect_exercise("def neuron_grads(x, w, b, out, grad):\n    return grad\n") == "neuron-grads"
    assert detect_exercise("function gradsOf(expr, vals, grad) {}") == "local-gradients"
    assert detect_exercise("print('hello')") is None


def test_huge_source_is_refused_with_the_limit():
    result = grade("neuron-grads", "python", "#" * 300_000)
    assert result["status"] == "error" and "at most 200,000 bytes" in result["message"]


def test_without_node_javascript_and_typescript_results_say_how_to_fix_it(monkeypatch):
    from chainrule.grading import grader

    monkeypatch.setenv("PATH", "/nonexistent-bin")
    grader._node.cache_clear()
    try:
        for language in ("javascript", "typescript"):
            result = grade("neuron-grads", language, reference_source("neuron-grads", language))
            assert result["status"] == "error" and result["verdict"] == "error"
            assert "`node` was not found on PATH" in result["message"] and "Install Node.js 18" in result["message"]
        assert grade("neuron-grads", "python", reference_source("neuron-grads", "python"))["verdict"] == "passed"
    finally:
        monkeypatch.undo()
        grader._node.cache_clear()


# ------------------------------------------------------------------------------------- recursion without an order

# A backward each learner could write for exercise 3: call _backward, then recurse into the inputs,
# with no topological order and no memory of what was visited.
NAIVE_BACKWARD = {
    "python": (
        "def backward(out):\n"
        "    out.grad = 1.0\n\n"
        "    def visit(v):\n"
        "        v._backward()\n"
        "        for child in v._prev:\n"
        "            visit(child)\n\n"
        "    visit(out)\n\n\n"
    ),
    "javascript": (
        "function backward(out) {\n"
        "  out.grad = 1;\n"
        "  const visit = (v) => {\n"
        "    v._backward();\n"
        "    for (const child of v.prev) visit(child);\n"
        "  };\n"
        "  visit(out);\n"
        "}\n"
    ),
    "typescript": (
        "function backward(out: Value): void {\n"
        "  out.grad = 1;\n"
        "  const visit = (v: Value): void => {\n"
        "    v._backward();\n"
        "    for (const child of v.prev) visit(child);\n"
        "  };\n"
        "  visit(out);\n"
        "}\n"
    ),
}


def _starter_with_backward(language: str, backward: str) -> str:
    """The backward-order starter with its backward function replaced, as a learner would edit it."""
    source = starter_source("backward-order", language)
    if language == "python":
        start, end = source.index("def backward(out):"), source.index("def grads_of(")
    else:
        start = source.index("function backward(out")
        end = source.index("\n}\n", start) + 3
    return source[:start] + backward + source[end:]


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_naive_recursion_fails_only_the_shared_cases_with_the_targeted_hint(language):
    result = grade("backward-order", language, _starter_with_backward(language, NAIVE_BACKWARD[language]))
    assert result["verdict"] == "failed", json.dumps(result, indent=1)[:3000]
    names = [t["name"] for t in result["tests"]]
    # File order, readable names; then the hidden cases, drawn from the shown ones spread evenly (two per expression).
    assert names == [c.name for c in exercise_cases("backward-order")] + [f"hidden case {k}" for k in range(1, 9)]
    failing = [t["name"] for t in result["tests"] if t["status"] != "pass"]
    assert failing == ["shared: small values", "shared: negative values", "shared: zero values",
                       "shared: large values", "hidden case 7", "hidden case 8"]
    for test in result["tests"][12:16] + result["tests"][-2:]:
        assert NAIVE_RECURSION in test["message"], test["message"]
        assert "ran three times" in test["message"]
    assert result["message"] == f"18 of 24 tests passed. Only the shared tests fail. {NAIVE_RECURSION}"
    small = result["tests"][12]
    assert "d out/d x (grad[0]): expected 1.204669539" in small["message"]


def test_recursion_that_skips_visited_values_is_recognised_too():
    """With a seen-set but no order, h runs once, before h*h has sent its share (right only when h = 0)."""
    seen_walk = (
        "def backward(out):\n"
        "    out.grad = 1.0\n"
        "    seen = set()\n\n"
        "    def visit(v):\n"
        "        if v in seen:\n"
        "            return\n"
        "        seen.add(v)\n"
        "        v._backward()\n"
        "        for child in v._prev:\n"
        "            visit(child)\n\n"
        "    visit(out)\n\n\n"
    )
    result = grade("backward-order", "python", _starter_with_backward("python", seen_walk))
    failing = {t["name"]: t for t in result["tests"] if t["status"] != "pass" and not t.get("hidden")}
    assert sorted(failing) == ["shared: large values", "shared: negative values", "shared: small values"]
    assert all(NAIVE_RECURSION in t["message"] and "skips values it has already visited" in t["message"]
               for t in failing.values())
    assert "Only the shared tests fail" in result["message"]


def test_the_naive_hint_is_not_given_when_other_expressions_fail_too():
    source = reference_source("backward-order", "python").replace("for v in reversed(order):", "for v in order:")
    result = grade("backward-order", "python", source)
    assert "Only the shared tests fail" not in result["message"]
    assert all(NAIVE_RECURSION not in (t["message"] or "") for t in result["tests"])


def test_summary_hint_needs_only_shared_failing_and_a_recognised_walk():
    exercise = get_exercise("backward-order")
    cases = exercise_cases(exercise)
    right = [list(c.expected) for c in cases]
    shared = [i for i, c in enumerate(cases) if c.inputs["expression"] == "shared"]

    def summary(raws: list, failing: set[int]) -> str | None:
        return diagnose_run(exercise, cases, raws, [i in failing for i in range(len(cases))]).summary

    walked = [simulate_backward("shared", cases[i].inputs["values"], "recursive") if i in shared else r
              for i, r in enumerate(right)]
    assert summary(right, set()) is None
    assert summary(walked, set(shared)) == f"Only the shared tests fail. {NAIVE_RECURSION}"
    merely_wrong = [[g + 1 for g in r] if i in shared else r for i, r in enumerate(right)]
    assert NAIVE_RECURSION not in (summary(merely_wrong, set(shared)) or "")
    raised = [None if i in shared else r for i, r in enumerate(right)]
    assert summary(raised, set()) is None
    broken_neuron = [[g + 1 for g in r] if i == 0 else r for i, r in enumerate(walked)]
    assert NAIVE_RECURSION not in (summary(broken_neuron, set(shared) | {0}) or "")
