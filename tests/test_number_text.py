"""One text for a number (chainrule.number_text): the words for nan, inf and -inf kept apart from the engine
to the JSON a page reads, and one writer for numbers in formulas, captions, prompts and reasons (× for
multiplication, a negative number in parentheses where an operator touches it).

Expected texts are written by hand from the rules in docs/trace.md and docs/authoring.md."""

from __future__ import annotations

import json
import math

import pytest

import chainrule
from chainrule import Value
from chainrule.lessons.text import fill
from chainrule.number_text import (
    format_percent,
    number_fields,
    operand_text,
    place_numbers,
    with_number_texts,
)
from chainrule.traces import trace_to_json


@pytest.mark.parametrize("value, text", [(math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf"), (-3.0, "-3")])
def test_a_number_for_json_keeps_its_text_and_nan_inf_and_minus_inf_apart(value, text):
    fields = number_fields("grad", value)
    assert fields["grad_text"] == text
    assert json.loads(json.dumps(fields, allow_nan=False)) == fields  # strict JSON: null for the three


def test_every_number_of_a_trace_has_its_text_and_the_three_non_finite_ones_stay_apart():
    # 1/x at x = 0 is +inf, -1/x is -inf, log of -1 is nan: three nulls in JSON, three texts.
    x = Value(0.0, label="x")
    y = Value(-1.0, label="y")
    out = (1.0 / x) + (-1.0 / x) * y.log()
    t = chainrule.trace(out)
    strict = json.loads(trace_to_json(t))
    texts = {node["label"]: node["data_text"] for node in strict["nodes"]}
    assert [texts[label] for label in ("t1", "t2", "t3")] == ["inf", "-inf", "nan"]
    for node in strict["nodes"]:
        assert {"data_text", "grad_text"} <= set(node)
    for step in strict["forward"]:
        assert "value_text" in step
    for step in strict["backward"]:
        assert "grad_text" in step
        for contribution in step["contributions"]:
            assert {"local_value_text", "upstream_text", "contribution_text", "grad_after_text"} <= set(contribution)


@pytest.mark.parametrize("before, value, after, text", [
    ("2 × ", -3.0, "", "(-3)"), ("16 + ", -6.0, "", "(-6)"), ("", -4.0, "^2", "(-4)"),
    ("e = ", -6.0, "", "-6"), ("", -6.0, "", "-6"), ("2 \\cdot ", -3.0, "", "(-3)"), ("x ** ", -0.5, "", "(-0.5)"),
    ("2 × ", 3.0, "", "3"), ("tanh(", -1.0, ")", "-1"),
])
def test_a_negative_number_is_in_parentheses_only_where_an_operator_touches_it(before, value, after, text):
    assert operand_text(value, before, after) == text


def test_formulas_write_multiplication_as_times_and_keep_powers():
    assert place_numbers("{out} = {a} * {b}", {"out": -6.0, "a": 2.0, "b": -3.0}) == "-6 = 2 × (-3)"
    assert place_numbers("{a} ** {b}", {"a": -4.0, "b": 0.5}) == "(-4) ** 0.5"
    assert place_numbers("1 - {out}^2", {"out": -0.7}) == "1 - (-0.7)^2"


def test_captions_use_the_same_writer():
    a, b, c = Value(2.0, label="a"), Value(-3.0, label="b"), Value(-4.0)
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    t = chainrule.trace(d)
    captions = [step["caption"] for step in t["forward"] + t["backward"]]
    assert "e = a × b = 2 × (-3) = -6" in captions
    assert "d = e + (-4) = -6 + (-4) = -10" in captions
    # A constant is named as one in a sentence: never "-4 receives".
    assert any("the constant -4 gets 1 × (gradient at d) = 1 × 1 = 1, which changes nothing" in c for c in captions)
    assert not any("*" in c for c in captions)


def test_a_node_labelled_by_its_expression_is_named_once_and_the_sentence_reads_whole():
    x2, w2 = Value(0.0, label="x2"), Value(1.0, label="w2")
    product = x2 * w2
    product.label = "x2*w2"
    out = product.tanh()
    out.label = "o"
    step = next(s for s in chainrule.trace(out)["backward"] if s["node"] == "n2")
    # Not "x2*w2, so x2 receives ...": the node is named once, then its gradient is "its gradient".
    assert step["caption"] == ("Back through x2*w2: x2 receives w2 × (its gradient) = 1 × 1 = 1, "
                               "and w2 receives x2 × (its gradient) = 0 × 1 = 0")


def resolve(numbers):
    return lambda parts: numbers[parts[0]]


@pytest.mark.parametrize("template, numbers, text", [
    # The review reason of the gradient-descent lesson: "-4^2" would read as -16.
    ("({{r1}}^2 + ({{r2}})^2 + {{r3}}^2) / 3", {"r1": -4.0, "r2": -1.0, "r3": 1.0}, "((-4)^2 + (-1)^2 + 1^2) / 3"),
    # Parentheses an author wrote around a positive number are dropped: "s = 1 + (1)" reads oddly.
    ("s = {{a}} + ({{b}})", {"a": 1.0, "b": 1.0}, "s = 1 + 1"),
    ("{{b}} * {{upstream}} = {{answer}}", {"b": -3.0, "upstream": -2.0, "answer": 6.0}, "-3 × (-2) = 6"),
    ("tanh({{x}}) and `a * b` and $a * {{x}}$", {"x": -1.0}, "tanh(-1) and `a * b` and $a * (-1)$"),
    ("{{x|10}}", {"x": 1 / 3}, "0.3333333333"),
])
def test_prose_placeholders_use_the_captions_writer(template, numbers, text):
    assert fill(template, resolve(numbers)) == text


def test_only_non_finite_numbers_get_texts_when_asked():
    document = {"loss": math.nan, "step": 1, "curve": [{"w": 0.5}], "xs": [1.0, math.inf]}
    assert with_number_texts(document, every=False) == {
        "loss": None, "loss_text": "nan", "step": 1, "curve": [{"w": 0.5}], "xs": [1.0, None],
        "xs_texts": ["1", "inf"]}
    assert with_number_texts({"w": 0.5})["w_text"] == "0.5"


def test_a_share_is_a_whole_percentage():
    assert [format_percent(x) for x in (0.675, 1.0, 0.0, None)] == ["68 %", "100 %", "0 %", "\u2013"]


def test_a_number_too_large_for_a_float_is_refused_for_its_size_everywhere_it_is_typed():
    from chainrule.lessons import check_quiz_answer
    from chainrule.lessons.playground import PlaygroundError, run_playground
    from chainrule.web.page_numbers import read_explore_number, read_number

    said = check_quiz_answer("backprop", "product-gradient", "1e400")["reason"]
    assert said.startswith("1e400 is too large") and "digits" not in said
    with pytest.raises(ValueError, match="^1e400 is too large to hold as a number"):
        read_number("1e400")
    with pytest.raises(ValueError, match="^1e400 is too large: type a number from -1000 to 1000"):
        read_explore_number("1e400")
    with pytest.raises(PlaygroundError, match="1e400 is too large for x"):
        run_playground("x", {"x": "1e400"})
