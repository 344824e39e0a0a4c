"""Wording the learner reads: captions that say each side once, sentences that join cleanly, one
date format, prose that says what the predictions really ask, and prompts that give nothing away."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import chainrule
from chainrule import Value
from chainrule.commands.review_session import answer_sentence
from chainrule.lessons import build_lesson_graph, check_prediction, get_lesson, lesson_data, prediction_keys

LESSON = "backprop"
STATIC_JS = Path(chainrule.__file__).parent / "web" / "static" / "js"


def equation_sides(caption: str) -> list[str]:
    """The sides of a caption's equation: the part before ", so" (backward) split on " = "."""
    return [side.strip() for side in caption.split(", so ")[0].split(" = ")]


def test_a_node_labelled_by_its_expression_is_not_named_twice():
    trace = chainrule.trace(build_lesson_graph(LESSON, "neuron"))
    captions = [s["caption"] for s in trace["forward"]] + [s["caption"] for s in trace["backward"]]
    assert "x1*w1 + x2*w2 = -6 + 0 = -6" in captions
    for caption in captions:
        sides = equation_sides(caption)
        assert all(a.replace(" ", "") != b.replace(" ", "") for a, b in zip(sides, sides[1:])), caption
    assert not any("x1*w1 + x2*w2 = x1*w1 + x2*w2" in c for c in captions)
    formulas = [node["formula"] for node in trace["nodes"] if "formula" in node]
    assert "x1*w1 + x2*w2" in formulas and not any("x1*w1 + x2*w2 = x1*w1 + x2*w2" in f for f in formulas)
    # The ordinary case keeps all its sides.
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    e = a * b
    e.label = "e"
    assert chainrule.trace(e)["forward"][-1]["caption"] == "e = a × b = 2 × (-3) = -6"


def test_constants_whose_names_are_their_numbers_are_not_repeated():
    out = Value(2.0) * Value(3.0)
    caption = chainrule.trace(out)["forward"][-1]["caption"]
    assert caption == "out = 2 × 3 = 6"


def test_section_04_says_how_many_values_and_gradients_it_asks_for():
    steps = lesson_data(LESSON)["predict"]["steps"]
    forward = sum(step["kind"] == "forward" for step in steps)
    backward = sum(step["kind"] == "backward" for step in steps)
    assert (forward, backward) == (2, 4)  # n, o forward; dn, db, dw1, dw2 backward
    html = next(s["html"] for s in get_lesson(LESSON)["sections"] if s["slug"] == "predict")
    text = " ".join(html.split())
    assert f"pauses before {forward + backward} of its steps" in text
    assert f"{forward} values during the forward pass and {backward} gradients during the backward pass" in text
    assert "three values" not in text and "three gradients" not in text


def test_no_prediction_prompt_states_a_number_another_prediction_asks_for():
    answers = {check_prediction(LESSON, key, 0.0)["expected_text"] for key in prediction_keys(LESSON)}
    answers -= {"1", "2"}  # structural: o's own gradient 1, the square in 1 - o^2
    for step in get_lesson(LESSON)["predict"]["steps"]:
        tokens = set(re.findall(r"-?\d+(?:\.\d+)?", re.sub(r"[xwb]\d", "", step["prompt"])))
        assert not tokens & answers, (step["key"], step["prompt"])


@pytest.mark.parametrize("kind,expected,sentence", [
    ("number", "6", "The answer is 6."),
    ("number", "-0.51", "The answer is -0.51."),
    ("choice", "g to each of them, unchanged.", "The right answer: \u201cg to each of them, unchanged\u201d."),
    ("choice", "Blue", "The right answer: \u201cBlue\u201d."),
])
def test_answer_sentences_have_one_full_stop_and_quote_an_option(kind, expected, sentence):
    assert answer_sentence(kind, expected) == sentence


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_the_page_words_answers_like_the_terminal_and_writes_one_date_format():
    script = (
        f"import {{ answerSentence, formatWhen }} from {json.dumps((STATIC_JS / 'when.js').as_uri())};\n"
        "const cases = [['number', '6'], ['choice', 'g to each of them, unchanged.'], ['choice', 'Blue']];\n"
        "console.log(JSON.stringify({\n"
        "  sentences: cases.map(([k, e]) => answerSentence(k, e)),\n"
        "  dates: [formatWhen('2026-03-05T09:30:00+00:00'), formatWhen('2026-12-24T18:05:00+00:00')],\n"
        "  bad: formatWhen('not a date'),\n"
        "}));\n"
    )
    completed = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True,
                               timeout=60, env={"TZ": "UTC", "LANG": "en_GB.UTF-8", "PATH": ""})
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["sentences"] == [answer_sentence("number", "6"),
                                   answer_sentence("choice", "g to each of them, unchanged."),
                                   answer_sentence("choice", "Blue")]
    first, second = result["dates"]
    assert "Thursday" in first and "March" in first and "09:30" in first
    assert "Thursday" in second and "December" in second and "18:05" in second
    assert result["bad"] == "not a date"
    # Every page script that shows a date uses formatWhen; none formats one by itself.
    for path in STATIC_JS.glob("*.js"):
        text = path.read_text(encoding="utf-8")
        if path.name != "when.js":
            assert "toLocaleDateString" not in text and "toLocaleString" not in text, path.name


def test_every_lessons_graphs_are_named_by_their_section_and_their_own_formula():
    """Issue 42 item 8, in every lesson (the browser test reads one lesson's names at both widths): the see-it-work
    and predict graphs are called by their section and by the formula of the graph's own title in lesson.json,
    never by one name for every graph ("The neuron") nor by the graph's id when a title is missing."""
    from chainrule.lessons.loader import builtin_lesson_ids

    names = []
    for lesson_id in builtin_lesson_ids():
        data, page = lesson_data(lesson_id), get_lesson(lesson_id)
        for section, part in (("See it work", page["see_it_work"]), ("Predict", page["predict"])):
            title = data["graphs"][part["graph"]].get("title", "")
            assert "=" in title, (lesson_id, part["graph"], "a graph the page shows needs its formula as title")
            # The title as written, its code multiplication said as ×: "y = x*tanh(x)" -> "y = x × tanh(x)".
            said = re.sub(r"\s*\*\s*", " × ", title) if " * " in title else title
            assert part["graph_name"] == f"{section}: the graph of {said}", (lesson_id, part["graph_name"])
            names.append(part["graph_name"])
    assert len(set(names)) == len(names)  # no two graphs of the path share a name
