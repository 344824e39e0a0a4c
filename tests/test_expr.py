"""The expression parser: precedence, graphs built with labelled leaves, and hostile input rejected
with the column, never evaluated and never a RecursionError."""

from __future__ import annotations

import math

import pytest

from chainrule.expr import ExpressionError, parse


def value_of(text, **values):
    out, _ = parse(text).build(values)
    return out.data


@pytest.mark.parametrize("text, values, expected", [
    ("1 + 2 * 3", {}, 7.0),
    ("(1 + 2) * 3", {}, 9.0),
    ("2 ** 3 ** 2", {}, 512.0),          # right-associative, as in Python
    ("-x ** 2", {"x": 3.0}, -9.0),       # -(x**2), as in Python
    ("2 ** -1", {}, 0.5),
    ("x - -y", {"x": 1.0, "y": 2.0}, 3.0),
    ("8 / 2 / 2", {}, 2.0),              # left-associative
    ("10 - 3 - 2", {}, 5.0),
    ("+x", {"x": 4.0}, 4.0),
    ("1e-3 * 1000", {}, 1.0),
    (".5 + 0.25", {}, 0.75),
    ("abs(-2) + relu(-1) + relu(2)", {}, 4.0),
])
def test_arithmetic_follows_python_precedence(text, values, expected):
    # The expected numbers are Python's own arithmetic on the same text (written out by hand here).
    assert value_of(text, **values) == pytest.approx(expected)


def test_functions_match_torch_float64():
    torch = pytest.importorskip("torch")
    x = 0.3
    text = "tanh(x) + exp(x) + log(x) + sigmoid(x) + relu(x) + abs(x)"
    t = torch.tensor(x, dtype=torch.float64)
    expected = (torch.tanh(t) + torch.exp(t) + torch.log(t) + torch.sigmoid(t) + torch.relu(t) + torch.abs(t)).item()
    assert value_of(text, x=x) == pytest.approx(expected, rel=1e-12)


def test_leaves_are_labelled_and_a_repeated_name_is_one_value():
    expr = parse("x*x + y")
    assert expr.names == ["x", "y"]
    out, leaves = expr.build({"x": 3.0, "y": 1.0})
    assert set(leaves) == {"x", "y"} and leaves["x"].label == "x"
    out.backward()
    assert leaves["x"].grad == 6.0  # d(x^2 + y)/dx = 2x: both uses reach the same leaf
    assert leaves["y"].grad == 1.0


def test_literal_exponent_uses_constant_power_op():
    out, leaves = parse("x ** 2").build({"x": 3.0})
    assert out.op.startswith("pow") and out.op != "pow" and len(out.inputs) == 1
    out2, _ = parse("x ** y").build({"x": 3.0, "y": 2.0})
    assert out2.op == "pow" and len(out2.inputs) == 2


def test_missing_and_unknown_names_are_named():
    with pytest.raises(ExpressionError, match="no value for y"):
        parse("x + y").build({"x": 1.0})
    with pytest.raises(ExpressionError, match="z is not in the expression"):
        parse("x").build({"x": 1.0, "z": 2.0})


def error_of(text):
    with pytest.raises(ExpressionError) as info:
        parse(text)
    return info.value


@pytest.mark.parametrize("text, column, words", [
    ("__import__('os')", 1, "unknown function '__import__'"),
    ("x.y", 2, "attribute access"),
    ("x.__class__", 2, "attribute access"),
    ("x[0]", 2, "subscripts"),
    ("lambda x: x", 1, "'lambda' is a Python keyword"),
    ("open('f')", 1, "unknown function 'open'"),
    ("eval(x)", 1, "unknown function 'eval'"),
    ("x + 'a'", 5, "strings are not allowed"),
    ("2 x", 3, "explicit *"),
    ("x ^ 2", 3, "use ** for powers"),
    ("tanh(x, y)", 7, "one argument"),
    ("(x + 1", 1, "never closed"),
    ("x + 1)", 6, "unmatched ')'"),
    ("x +", 4, "ends where"),
    ("tanh + 1", 1, "tanh is a function"),
    ("1e", 2, "malformed number"),
    ("x == 1", 3, "not allowed"),
    ("1e999", 1, "too large"),
])
def test_hostile_and_malformed_inputs_point_at_the_column(text, column, words):
    error = error_of(text)
    assert error.column == column
    assert words in str(error)
    lines = str(error).splitlines()
    # The text, then a caret under the offending column.
    assert lines[1].strip() == text
    assert lines[2].index("^") - 2 == column - 1


def test_unknown_names_and_syntax_list_what_is_allowed():
    for text in ("__import__('os')", "x.y", "lambda: 1", "foo(1)"):
        message = str(error_of(text))
        assert "tanh, exp, log, relu, sigmoid, abs" in message and "+ - * / **" in message


def test_nothing_is_evaluated_as_python(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    monkeypatch.chdir(tmp_path)
    for text in (f"__import__('os').system('touch {marker}')", "exec('1')", "compile('1','','eval')"):
        with pytest.raises(ExpressionError):
            parse(text)
    assert not marker.exists()


@pytest.mark.timeout(30)
def test_nesting_201_deep_is_rejected_200_accepted():
    error = error_of("(" * 201 + "x" + ")" * 201)
    assert "nested deeper than 200" in str(error) and error.column == 201
    error = error_of("tanh(" * 201 + "x" + ")" * 201)
    assert "nested deeper than 200" in str(error)
    out, _ = parse("(" * 200 + "x" + ")" * 200).build({"x": 2.0})
    assert out.data == 2.0
    out, _ = parse("tanh(" * 200 + "x" + ")" * 200).build({"x": 0.5})
    expected = 0.5
    for _ in range(200):
        expected = math.tanh(expected)
    assert out.data == pytest.approx(expected, rel=1e-12)


@pytest.mark.timeout(30)
def test_length_limit_and_long_inputs_do_not_recurse():
    error = error_of("x" * 10_001)
    assert "10,001 characters" in str(error) and "10,000" in str(error)
    # Within the limit, long chains build fine: 4,999 additions, 9,998 unary minus signs.
    out, _ = parse("+".join(["x"] * 4999)).build({"x": 1.0})
    assert out.data == 4999.0
    out, _ = parse("-" * 9998 + "x").build({"x": 1.0})
    assert out.data == 1.0
    out, _ = parse("1**" * 3000 + "2").build({})  # right-associative: 1 ** (1 ** (... ** 2)) = 1
    assert out.data == 1.0


def test_long_text_error_shows_a_window_with_the_caret():
    text = "x + " * 1000 + "y.z"
    error = error_of(text)
    lines = str(error).splitlines()
    assert len(lines[1]) < 100
    assert lines[1][lines[2].index("^")] == "."


def test_empty_and_non_text():
    assert "empty" in str(error_of("   "))
    with pytest.raises(ExpressionError):
        parse(42)  # type: ignore[arg-type]
