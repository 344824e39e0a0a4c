"""Classic mistakes, each submitted for real and recognised: the hint names the mistake, not a symptom.

Each source here is a reference solution with one mistake a learner makes; the grading runs in the real
sandbox. The diagnoses themselves are declared by the case kinds (chainrule.grading.kinds), their texts
by the kinds or by the exercise folders (docs/authoring.md).
"""

from __future__ import annotations

import pytest

from chainrule.grading import grade, reference_source

pytestmark = pytest.mark.timeout(120)


def mistaken(exercise_id: str, language: str, old: str, new: str) -> str:
    source = reference_source(exercise_id, language)
    assert old in source, f"{old!r} is not in the {language} reference of {exercise_id}"
    return source.replace(old, new)


def failing(result: dict) -> list[dict]:
    assert result["verdict"] == "failed", result["message"]
    return [t for t in result["tests"] if t["status"] == "fail" and not t.get("hidden")]  # shown ones: fixed inputs


READS_BEFORE_COMPUTED_JS = """
function forwardAnyOrder(nodes, leaves) {
  const values = [...leaves];
  nodes.forEach(([op, a, b], i) => {
    const x = values[a], y = b === null ? null : values[b];  // a later node reads as undefined
    values[leaves.length + i] = op === "add" ? x + y : op === "mul" ? x * y : Math.tanh(x);
  });
  return values;
}
"""


def test_reading_a_node_before_it_is_computed_is_recognised_in_javascript_too():
    """In JavaScript the value not computed yet is undefined, and the numbers become NaN: still the list order."""
    result = grade("forward-any-order", "javascript", READS_BEFORE_COMPUTED_JS)
    tests = failing(result)
    assert tests and all("in the order they are listed, before their inputs are ready" in t["message"] for t in tests)
    assert "NaN" in str([t["actual"] for t in tests])
    assert "topological order" in result["message"]


def test_a_summed_loss_instead_of_the_mean_is_recognised():
    source = mistaken("loss-gradient", "python", "loss = sum(r * r for r in residuals) / n",
                      "loss = sum(r * r for r in residuals)")
    tests = failing(grade("loss-gradient", "python", source))
    # Every case with more than one point and a nonzero loss shows it; the folder's own text says so.
    assert len(tests) == 4
    assert all("Your loss is n times too big while your gradients are right" in t["message"] for t in tests)


def test_a_sum_instead_of_the_mean_everywhere_is_recognised():
    source = reference_source("loss-gradient", "python").replace("/ n\n", "\n").replace("2 / n *", "2 *")
    tests = failing(grade("loss-gradient", "python", source))
    assert all("Your numbers are n times too big" in t["message"] for t in tests)


@pytest.mark.parametrize("language,old,new", [
    ("python", "2 / n * sum", "2 * sum"),
    ("javascript", "(2 / n) *", "2 *"),
])
def test_a_fit_line_step_missing_its_division_by_n_is_recognised(language, old, new):
    result = grade("fit-line", language, mistaken("fit-line", language, old, new))
    tests = failing(result)
    assert tests and all("without dividing by n" in t["message"] for t in tests)
    assert "without dividing by n" in result["message"]


@pytest.mark.parametrize("language,old,new", [
    ("python", "w, b = w - lr * dw, b - lr * db", "w, b = w + lr * dw, b + lr * db"),
    ("javascript", "w -= lr * dw;\n    b -= lr * db;", "w += lr * dw;\n    b += lr * db;"),
])
def test_a_sign_flipped_update_is_recognised(language, old, new):
    result = grade("fit-line", language, mistaken("fit-line", language, old, new))
    tests = failing(result)
    assert tests[0]["name"] == "one step on two points"
    assert all("a step up the slope: gradient descent subtracts" in t["message"] for t in tests)


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_assignment_instead_of_accumulation_is_never_called_nothing_reached(language):
    """With a = 0, reuse's a*a sends a the share a = 0 last: a plain `=` leaves both gradients 0. That test
    alone looks like nothing reached the inputs, but the run shows the backward pass works: it is the
    overwrite."""
    source = reference_source("local-gradients", language)
    changed = source.replace("self.grad += ", "self.grad = ").replace("other.grad += ", "other.grad = ")
    changed = changed.replace("this.grad += ", "this.grad = ")
    assert changed != source
    result = grade("local-gradients", language, changed)
    zero = next(t for t in result["tests"] if t["name"] == "reuse: zero values")
    assert zero["status"] == "fail" and zero["actual"] == [0.0, 0.0]
    assert "accumulate with +=, not =" in zero["message"]
    assert "Every gradient is 0" not in zero["message"]
    assert all("Every gradient is 0" not in (t["message"] or "") for t in result["tests"])


def test_an_empty_backward_is_still_nothing_reached():
    source = reference_source("local-gradients", "python")
    emptied = "\n".join(line.replace("self.grad += ", "pass  # ").replace("other.grad += ", "pass  # ")
                        for line in source.splitlines())
    tests = failing(grade("local-gradients", "python", emptied))
    assert len(tests) == 16 and all("Every gradient is 0: nothing reached the inputs" in t["message"] for t in tests)


def test_an_overwrite_in_a_graph_backward_pass_is_recognised_with_the_folders_own_text(tmp_path):
    """The lesson template's exercise (graph-grads) declares its own text for the kind's `overwrite`."""
    from chainrule.grading import load_exercise_folder
    from chainrule.lessons.scaffold import write_lesson

    folder = write_lesson("overwrite-demo", "Overwrite", tmp_path) / "exercises" / "1-gradients"
    exercise = load_exercise_folder(folder)
    source = exercise.source("solution", "python").replace("grads[a] += ", "grads[a] = ").replace(
        "grads[b] += ", "grads[b] = ")
    tests = failing(grade(exercise, "python", source))
    assert tests[0]["name"] == "a value used twice"
    assert "A value used twice keeps only one use's share: add to its gradient" in tests[0]["message"]


def test_the_authoring_guide_lists_every_kinds_mistakes_in_their_order():
    import re
    from pathlib import Path

    from chainrule.grading.kinds import CASE_KINDS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "authoring.md").read_text(encoding="utf-8")
    table = doc[doc.index("| kind | mistakes |"):].split("\n\n", 1)[0]
    listed = {m.group(1): re.findall(r"`([a-z-]+)`", m.group(2))
              for m in re.finditer(r"^\| `([a-z-]+)` \| (.*) \|$", table, re.MULTILINE)}
    assert listed == {name: [m.name for m in kind.mistakes] for name, kind in CASE_KINDS.items()}
