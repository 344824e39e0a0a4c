"""The lesson's content as data: every number in the data files recomputed with the engine (and with
PyTorch where the spec says so), placeholders resolved, answers checked as the spec asks."""

from __future__ import annotations

import math
import re

import pytest

import chainrule
from chainrule import Value
from chainrule.lessons import (
    UnknownItemError,
    UnknownLessonError,
    check_prediction,
    check_quiz_answer,
    exercise_ids,
    format_number,
    get_lesson,
    get_path,
    lesson_data,
    lesson_numbers,
    parse_number,
    prediction_keys,
    question_ids,
    quiz_question,
)
from chainrule.lessons.loader import DATA_DIR, before_step
from chainrule.lessons.text import PLACEHOLDER, render_inline, render_markdown

LESSON = "backprop"


def spec_section03() -> dict[str, Value]:
    """The graph of section 03, built by hand with the engine (not from the data file)."""
    a, b, c, f = Value(2.0), Value(-3.0), Value(10.0), Value(-2.0)
    e = a * b
    d = e + c
    L = d * f
    L.backward()
    return {"a": a, "b": b, "c": c, "f": f, "e": e, "d": d, "L": L}


def spec_neuron() -> dict[str, Value]:
    """The neuron of section 04, by hand with the engine."""
    x1, x2, w1, w2, b = Value(2.0), Value(0.0), Value(-3.0), Value(1.0), Value(6.8813735870195432)
    n = x1 * w1 + x2 * w2 + b
    o = n.tanh()
    o.backward()
    return {"x1": x1, "x2": x2, "w1": w1, "w2": w2, "b": b, "n": n, "o": o}


# ---------------------------------------------------------------- numbers in the data files


def test_section03_numbers_match_the_spec_and_the_data_file():
    values = spec_section03()
    # Hand-derived in the spec: forward -6, 4, -8; backward dL/da = 6, dL/db = -4, ...
    spec = {"e": (-6, -2), "d": (4, -2), "L": (-8, 1), "a": (2, 6), "b": (-3, -4), "c": (10, -2), "f": (-2, 4)}
    checked = lesson_data(LESSON)["checked_numbers"]["section03"]
    engine_from_data = lesson_numbers(LESSON)["section03"]
    for label, (data, grad) in spec.items():
        assert values[label].data == pytest.approx(data) and values[label].grad == pytest.approx(grad), label
        assert checked[label] == {"data": data, "grad": grad}, label
        assert engine_from_data[label]["data"] == pytest.approx(data), label
        assert engine_from_data[label]["grad"] == pytest.approx(grad), label


def test_neuron_numbers_match_the_spec_the_data_file_and_pytorch():
    torch = pytest.importorskip("torch")
    values = spec_neuron()
    # The spec's numbers: n ~ 0.8814, o ~ 0.7071, dn = db = 0.5, dx1 = -1.5, dw1 = 1.0, dx2 = 0.5, dw2 = 0.
    spec_data = {"n": 0.8814, "o": 0.7071}
    spec_grad = {"n": 0.5, "b": 0.5, "x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0}
    checked = lesson_data(LESSON)["checked_numbers"]["neuron"]
    from_data = lesson_numbers(LESSON)["neuron"]
    for label, data in spec_data.items():
        assert values[label].data == pytest.approx(data, abs=5e-5)
        assert checked[label]["data"] == pytest.approx(values[label].data, abs=5e-5)
        assert from_data[label]["data"] == pytest.approx(values[label].data, abs=1e-12)
    for label, grad in spec_grad.items():
        assert values[label].grad == pytest.approx(grad, abs=1e-12)
        assert checked[label]["grad"] == pytest.approx(values[label].grad, abs=5e-5)
        assert from_data[label]["grad"] == pytest.approx(values[label].grad, abs=1e-12)

    leaves = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
              for k, v in {"x1": 2.0, "x2": 0.0, "w1": -3.0, "w2": 1.0, "b": 6.8813735870195432}.items()}
    o = torch.tanh(leaves["x1"] * leaves["w1"] + leaves["x2"] * leaves["w2"] + leaves["b"])
    o.backward()
    for label, leaf in leaves.items():
        assert from_data[label]["grad"] == pytest.approx(leaf.grad.item(), abs=1e-12), label
    assert from_data["o"]["data"] == pytest.approx(o.item(), abs=1e-12)


def test_every_checked_number_is_the_engines_to_four_places():
    numbers = lesson_numbers(LESSON)
    for graph, nodes in lesson_data(LESSON)["checked_numbers"].items():
        for label, fields in nodes.items():
            for field, published in fields.items():
                assert numbers[graph][label][field] == pytest.approx(published, abs=5e-5), (graph, label, field)


def test_quiz_keys_recomputed_with_the_engine():
    questions = {q["id"]: q for q in lesson_data(LESSON)["quiz"]}

    given = questions["product-gradient"]["given"]
    a, b = Value(given["a"]), Value(given["b"])
    e = a * b
    (e * given["upstream"]).backward()  # the gradient arriving at e is `upstream`
    assert a.grad == pytest.approx(questions["product-gradient"]["answer"])
    assert questions["product-gradient"]["answer"] == 6  # the spec's key

    given = questions["tanh-gradient"]["given"]
    n = Value(math.atanh(given["t"]))
    out = n.tanh()
    assert out.data == pytest.approx(given["t"])
    (out * given["upstream"]).backward()
    assert n.grad == pytest.approx(questions["tanh-gradient"]["answer"], abs=1e-12)
    assert questions["tanh-gradient"]["answer"] == 0.51

    given = questions["sum-of-uses"]["given"]
    a = Value(1.7)
    first, second = a * given["first"], a * given["second"]  # two boxes fed by a
    (first + second).backward()
    assert a.grad == pytest.approx(questions["sum-of-uses"]["answer"])
    assert questions["sum-of-uses"]["answer"] == 8


# ---------------------------------------------------------------- prose and placeholders


def prose_files() -> list:
    return sorted((DATA_DIR / LESSON).glob("**/*.md"))


def test_prose_types_no_numbers_of_its_own():
    """Numbers in prose come from placeholders; only the structural 0, 1 and 2 (x_1, gradient 1, t^2) are typed."""
    assert len(prose_files()) == 11
    for path in prose_files():
        text = PLACEHOLDER.sub("", path.read_text(encoding="utf-8"))
        typed = {m for m in re.findall(r"\d+(?:\.\d+)?", text)}
        assert typed <= {"0", "1", "2"}, (path.name, typed)


def test_every_placeholder_resolves_and_no_braces_remain():
    lesson = get_lesson(LESSON)
    texts = [s["html"] for s in lesson["sections"]] + [lesson["see_it_work"]["chain_formula"]]
    texts += [s["prompt"] for s in lesson["predict"]["steps"]] + [e["html"] for e in lesson["exercises"]]
    texts += [q["prompt"] for q in lesson["quiz"]]
    for text in texts:
        assert "{{" not in text, text


def test_section_prose_shows_the_engines_numbers():
    html = {s["slug"]: s["html"] for s in get_lesson(LESSON)["sections"]}
    assert "$e = -6$" in html["see-it-work"] and "$L = -8$" in html["see-it-work"]
    assert "$a$ the gradient $6$" in html["see-it-work"] and "$b$ the gradient $-4$" in html["see-it-work"]
    assert "$x_1 = 2$" in html["predict"] and "$w_1 = -3$" in html["predict"]
    assert "$0.01$" in html["predict"]
    formula = get_lesson(LESSON)["see_it_work"]["chain_formula"]
    assert formula.endswith("= -2 \\cdot 1 \\cdot (-3) = 6")  # a negative in parentheses only after an operator


def test_markdown_leaves_math_alone():
    html = render_markdown("Use $a_1 * b_2 * c$ and *this*:\n\n$$x_1 < y_2$$\n")
    assert "$a_1 * b_2 * c$" in html  # no <em> inside math
    assert "<em>this</em>" in html
    assert "$$x_1 &lt; y_2$$" in html  # escaped for HTML, intact for KaTeX
    assert render_inline("**b** $x_2$") == "<strong>b</strong> $x_2$"
    assert "<script>" not in render_markdown("<script>alert(1)</script>")


# The one number rule (the same in trace captions, lesson prose and the page's boxes), written out by hand.
@pytest.mark.parametrize("x, text", [
    (float("nan"), "nan"), (float("inf"), "inf"), (float("-inf"), "-inf"), (0.0, "0"), (-0.0, "0"),
    (2.0, "2"), (6.0, "6"), (-6.0, "-6"), (-3.0, "-3"), (999999.0, "999999"),
    (6.881373587019543, "6.8814"), (0.70710678, "0.7071"), (0.5, "0.5"), (-1.5, "-1.5"), (0.0001, "0.0001"),
    (1.4999999999999993, "1.5"), (123456.78912, "123456.7891"),
    (1e-5, "1e-5"), (-1e-9, "-1e-9"), (-2.5e-7, "-2.5e-7"), (1234567.0, "1.235e6"), (1e6, "1e6"),
    (0.03125, "0.0312"), (0.09375, "0.0938"),  # exact ties at the 4th decimal round to even
])
def test_format_number(x, text):
    assert format_number(x) == text


def test_lesson_text_formats_numbers_like_the_trace():
    from chainrule.traces import format_number as trace_format_number

    assert format_number is trace_format_number


# ---------------------------------------------------------------- structure


def test_path_lists_nine_written_lessons_each_a_link():
    path = get_path()
    assert path["title"] == "Math for CS and ML"
    entries = path["lessons"]
    assert [e["title"] for e in entries] == [
        "Slopes and the chain rule", "Many inputs and the gradient", "Computational graphs", "Backpropagation: the chain rule on a graph",
        "Gradient descent: linear regression", "A network learns: two moons", "Softmax and cross-entropy",
        "Forward mode and reverse mode", "Build the engine and train it"]
    assert [e["status"] for e in entries] == ["available"] * 9
    assert [e["href"] for e in entries] == [
        "/lessons/slopes-and-the-chain-rule", "/lessons/many-inputs-and-the-gradient", "/lessons/computational-graphs", "/lessons/backprop",
        "/lessons/gradient-descent-linear-regression", "/lessons/a-network-learns", "/lessons/softmax-and-cross-entropy",
        "/lessons/forward-and-reverse-mode", "/lessons/build-the-engine"]
    assert all(e["summary"].endswith(".") and len(e["summary"]) > 40 for e in entries)


def test_lesson_has_the_eight_sections_in_order():
    lesson = get_lesson(LESSON)
    assert [(s["number"], s["title"]) for s in lesson["sections"]] == [
        ("01", "Why it matters"), ("02", "Key parts"), ("03", "See it work"), ("04", "Predict"),
        ("05", "Try it"), ("06", "Check yourself"), ("07", "Explain it back"), ("08", "Recap")]
    assert lesson["minutes"] == 30
    assert lesson["previous"]["href"] == "/lessons/computational-graphs"
    assert lesson["next"]["href"] == "/lessons/gradient-descent-linear-regression"
    assert lesson["recap"]["next"]["href"] == "/lessons/gradient-descent-linear-regression"
    glossary = lesson["sections"][1]["html"]
    for term in ("Computation graph", "Forward pass", "Local derivative", "Gradient"):
        assert f"<strong>{term}</strong>" in glossary
    assert len(lesson["recap"]["points"]) == 4
    assert [i["id"] for i in lesson["explain"]["key_ideas"]] == [
        "seed-one", "local-times-upstream", "sum-uses", "reverse-order", "one-sweep"]
    assert "why does the order" in lesson["explain"]["prompt"]


def test_lesson_gives_no_answers_away():
    lesson = get_lesson(LESSON)
    for question in lesson["quiz"]:
        assert set(question) == {"id", "prompt", "kind", "options"}
    text = repr(lesson["quiz"]) + repr(lesson["predict"])
    assert "answer" not in text and "0.8814" not in text and "reason" not in text


def test_quiz_has_the_five_questions_of_the_spec():
    assert question_ids(LESSON) == ["product-gradient", "addition-node", "tanh-gradient", "reverse-order", "sum-of-uses"]
    kinds = [quiz_question(LESSON, q)["kind"] for q in question_ids(LESSON)]
    assert kinds == ["number", "choice", "number", "choice", "number"]
    first = quiz_question(LESSON, "product-gradient")["prompt"]
    assert "a = 2" in first and "b = -3" in first and "gradient of -2" in first
    for qid in ("addition-node", "reverse-order"):
        options = quiz_question(LESSON, qid)["options"]
        assert len(options) == 4 and len(set(options)) == 4


def test_exercise_ids_are_the_graders():
    grading = pytest.importorskip("chainrule.grading")
    graded = {e["id"]: e for e in grading.list_exercises()}
    assert exercise_ids(LESSON) == ["neuron-grads", "local-gradients", "backward-order"]
    for exercise in get_lesson(LESSON)["exercises"]:
        assert exercise["id"] in graded
        assert exercise["languages"] == list(graded[exercise["id"]]["languages"])
        assert "<p>" in exercise["html"]


def test_predictions_precede_the_trace_steps_that_reveal_them():
    lesson = get_lesson(LESSON)
    predict = lesson["predict"]
    assert predict["total"] == 6 and predict["tolerance"] == 0.01
    assert {s["key"] for s in predict["steps"]} == {"n", "o", "dn", "db", "dw1", "dw2"}
    trace = chainrule.trace(chainrule.lessons.build_lesson_graph(LESSON, "neuron"))
    labels = {node["id"]: node["label"] for node in trace["nodes"]}
    for step in predict["steps"]:
        where = step["before_step"]
        played = trace[where["phase"]][where["index"]]
        if step["kind"] == "forward":
            assert labels[played["node"]] == step["node_label"]
        else:
            assert step["node_label"] in {labels[c["input"]] for c in played["contributions"]}
    order = [(s["before_step"]["phase"] == "backward", s["before_step"]["index"]) for s in predict["steps"]]
    assert order == sorted(order)


def test_before_step_refuses_ambiguous_labels():
    a = Value(1.0, label="a")
    out = a * Value(2.0, label="a")
    with pytest.raises(ValueError, match="exactly one"):
        before_step(chainrule.trace(out), "a", "forward")


# ---------------------------------------------------------------- checking answers


@pytest.mark.parametrize("typed", ["6", "6.0", " 6 ", "6.009", "+6", "6.", "5.995", "6,0", "6e0", "0.6E+1",
                                   "600e-2", "\u00a06\t"])
def test_numeric_answers_accept_typed_forms(typed):
    result = check_quiz_answer(LESSON, "product-gradient", typed)
    assert result["correct"] and result["expected"] == "6" and not result["invalid"]
    assert "-3 × (-2) = 6" in result["reason"]  # × and a negative in parentheses after it


def test_numeric_answers_outside_tolerance_are_wrong_and_junk_is_invalid():
    assert not check_quiz_answer(LESSON, "product-gradient", "6.02")["correct"]
    assert not check_quiz_answer(LESSON, "product-gradient", "-6")["correct"]
    assert check_quiz_answer(LESSON, "tanh-gradient", "0.5")["correct"]  # 0.01 from 0.51: inside
    assert check_quiz_answer(LESSON, "tanh-gradient", ".51")["correct"]
    assert not check_quiz_answer(LESSON, "tanh-gradient", "0.49")["correct"]
    assert check_quiz_answer(LESSON, "tanh-gradient", "0,51")["correct"]  # a decimal comma
    assert check_quiz_answer(LESSON, "sum-of-uses", "8")["correct"]
    for junk in ("", "six", "6,0.0", "6,000,0", "nan", "inf", "1e999", "6 6", "0x6", "6_0", "--6", "6e", "e6"):
        result = check_quiz_answer(LESSON, "product-gradient", junk)
        assert result["invalid"] and not result["correct"] and result["expected"] == ""
        if junk == "1e999":  # written in digits, but too large: its size is what is wrong
            assert result["reason"].startswith("1e999 is too large to hold as a number")
        else:
            assert "not a number" in result["reason"] and "Type a number in digits" in result["reason"]


def test_choice_answers_by_text_number_or_letter():
    right = "g to each of them, unchanged."
    for typed in (right, "  G to each of them,   UNCHANGED. ", "2", "b", "B"):
        result = check_quiz_answer(LESSON, "addition-node", typed)
        assert result["correct"], typed
        assert result["expected"] == right
    wrong = check_quiz_answer(LESSON, "addition-node", "Half of g to each, so that the two shares add back up to g.")
    assert not wrong["correct"] and not wrong["invalid"] and "is 1" in wrong["reason"]
    assert check_quiz_answer(LESSON, "reverse-order", "c")["correct"]
    for junk in ("5", "e", "passes it on"):
        result = check_quiz_answer(LESSON, "addition-node", junk)
        assert result["invalid"] and "1 to 4" in result["reason"]


def test_unknown_lesson_and_question_say_what_exists():
    with pytest.raises(UnknownLessonError, match="backprop"):
        quiz_question("nope", "product-gradient")
    with pytest.raises(UnknownItemError, match="product-gradient"):
        check_quiz_answer(LESSON, "nope", "1")
    with pytest.raises(UnknownItemError, match="dw1"):
        check_prediction(LESSON, "nope", 1.0)


def test_predictions_checked_against_the_engine():
    neuron = spec_neuron()
    expected = {"n": neuron["n"].data, "o": neuron["o"].data, "dn": neuron["n"].grad, "db": neuron["b"].grad,
                "dw1": neuron["w1"].grad, "dw2": neuron["w2"].grad}
    assert prediction_keys(LESSON) == ["n", "o", "dn", "db", "dw2", "dw1"]  # the order the gates come in
    for key, value in expected.items():
        assert check_prediction(LESSON, key, value + 0.009)["correct"], key
        assert check_prediction(LESSON, key, value - 0.0099)["correct"], key
        wrong = check_prediction(LESSON, key, value + 0.02)
        assert not wrong["correct"] and wrong["expected"] == pytest.approx(value, abs=1e-9), key
    assert "db = dn = 0.5" in check_prediction(LESSON, "db", 0.5)["reason"]
    assert "does not move the output" in check_prediction(LESSON, "dw2", 0.0)["reason"]
    assert check_prediction(LESSON, "n", 0.88)["expected_text"] == "0.8814"
    with pytest.raises(ValueError):
        check_prediction(LESSON, "n", float("nan"))


@pytest.mark.parametrize("text, value", [
    ("6", 6.0), (" -1.5 ", -1.5), (".5", 0.5), ("5.", 5.0), ("+2", 2.0), ("\u22122", -2.0), ("\u22121,5", -1.5),
    ("1e2", 100.0), ("1e+2", 100.0), ("2.5E-3", 0.0025), ("2.5e\u22123", 0.0025), ("0,51", 0.51), (",5", 0.5),
    ("\t 0.5\n", 0.5), ("\u00a00.5\u202f", 0.5), ("007", 7.0),
])
def test_parse_number(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", [
    "", " ", "six", "1,000.5", "1.000,5", "1,2,3", "1 000", "1_000", "0x10", "nan", "inf", "-inf", "Infinity",
    "1e999", "+-1", "--1", "- 1", "1e", "e1", ".", ",", "1.2.3", "1e2.5", "\u0666", "\uff16", "1/2", "½",
])
def test_parse_number_refuses_what_is_not_a_number(text):
    assert parse_number(text) is None
