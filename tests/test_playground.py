"""The playground's domain function: values and gradients against PyTorch float64, forward-mode tangents
against torch.func.jvp and finite differences, forward and reverse sweeps agreeing, display texts from
the one formatting rule, and every bad input named with its field (and column)."""

from __future__ import annotations

import math

import pytest

from chainrule.expr import ExpressionError, parse
from chainrule.lessons.playground import (
    MAX_BOXES,
    MAX_CHARS,
    MAX_NAME,
    STARTING_VALUES,
    PlaygroundError,
    run_playground,
)
from chainrule.traces import format_number
from reference_torch import needs_torch, torch  # noqa: E402

# Each expression with the same function written in PyTorch by hand (an independent source).
CASES = {
    "x*y + tanh(x)": lambda v: v["x"] * v["y"] + torch.tanh(v["x"]),
    "sigmoid(w*x + b) * log(x)": lambda v: torch.sigmoid(v["w"] * v["x"] + v["b"]) * torch.log(v["x"]),
    "x**3 / (1 + exp(-y))": lambda v: v["x"] ** 3 / (1 + torch.exp(-v["y"])),
    "relu(x - y) + abs(x) * 2 - x/y": lambda v: torch.relu(v["x"] - v["y"]) + torch.abs(v["x"]) * 2 - v["x"] / v["y"],
    "(a*b + c) * f": lambda v: (v["a"] * v["b"] + v["c"]) * v["f"],
}
VALUES = {"x": "1.5", "y": "-0.75", "w": "0.4", "b": "-2", "a": "2", "c": "10", "f": "-2"}


def numbers_of(result):
    return {entry["name"]: entry["value"] for entry in result["values"]}


def torch_run(function, numbers):
    leaves = {name: torch.tensor(value, dtype=torch.float64, requires_grad=True) for name, value in numbers.items()}
    out = function(leaves)
    out.backward()
    return out.item(), {name: leaf.grad.item() for name, leaf in leaves.items()}


@needs_torch
@pytest.mark.parametrize("text", list(CASES))
def test_values_and_gradients_agree_with_pytorch(text):
    names = parse(text).names
    result = run_playground(text, {name: VALUES[name] for name in names})
    numbers = numbers_of(result)
    assert numbers == {name: float(VALUES[name]) for name in names}
    value, grads = torch_run(CASES[text], numbers)
    nodes = result["trace"]["nodes"]
    output = next(node for node in nodes if node["id"] == result["trace"]["output"])
    assert output["data"] == pytest.approx(value, rel=1e-12)
    for name in names:
        leaf = next(node for node in nodes if node["label"] == name)
        assert leaf["grad"] == pytest.approx(grads[name], rel=1e-12, abs=1e-15)


@needs_torch
@pytest.mark.parametrize("text", list(CASES))
def test_forward_tangents_agree_with_torch_jvp_and_finite_differences(text):
    names = parse(text).names
    seed = names[-1]
    values = {name: VALUES[name] for name in names}
    result = run_playground(text, values, seed=seed)
    sweeps = result["sweeps"]
    assert sweeps["seed"] == seed
    numbers = numbers_of(result)
    # The output's tangent: torch.func.jvp in the direction of the seed.
    order = list(numbers)
    primals = tuple(torch.tensor(numbers[name], dtype=torch.float64) for name in order)
    directions = tuple(torch.tensor(1.0 if name == seed else 0.0, dtype=torch.float64) for name in order)
    _, expected = torch.func.jvp(lambda *xs: CASES[text](dict(zip(order, xs))), primals, directions)
    assert sweeps["forward"] == pytest.approx(expected.item(), rel=1e-12, abs=1e-15)
    # Every node's tangent: central differences of that node's value (same graph, same node order).
    h = 1e-6
    up = run_playground(text, values | {seed: repr(numbers[seed] + h)})["trace"]["nodes"]
    down = run_playground(text, values | {seed: repr(numbers[seed] - h)})["trace"]["nodes"]
    for row, above, below in zip(sweeps["rows"], up, down):
        difference = (above["data"] - below["data"]) / (2 * h)
        assert row["tangent"] == pytest.approx(difference, rel=1e-5, abs=1e-7), row["label"]


@needs_torch
@pytest.mark.parametrize("text", list(CASES))
def test_forward_and_reverse_agree_on_the_derivative_by_the_followed_input(text):
    names = parse(text).names
    for seed in names:
        sweeps = run_playground(text, {name: VALUES[name] for name in names}, seed=seed)["sweeps"]
        assert sweeps["agree"] is True
        assert sweeps["forward"] == pytest.approx(sweeps["reverse"], rel=1e-12, abs=1e-15)
        leaf_row = next(row for row in sweeps["rows"] if row["label"] == seed)
        assert leaf_row["tangent"] == 1.0  # d seed/d seed
        assert leaf_row["grad"] == sweeps["reverse"]


def test_every_number_carries_its_text():
    result = run_playground("x*y + tanh(x)", {"x": "2", "y": "-3"}, nudge=("x", "0.01"))
    t = result["trace"]
    for node in t["nodes"]:
        assert (node["data_text"], node["grad_text"]) == (format_number(node["data"]), format_number(node["grad"]))
        assert "display" not in node  # one scheme: the trace's own texts
    for step in t["forward"]:
        assert step["value_text"] == format_number(step["value"])
    for step in t["backward"]:
        assert step["grad_text"] == format_number(step["grad"])
        for c in step["contributions"]:
            assert c["contribution_text"] == format_number(c["contribution"])
            assert c["grad_after_text"] == format_number(c["grad_after"])
    for row in result["sweeps"]["rows"]:
        for key in ("value", "tangent", "grad"):
            assert row[f"{key}_text"] == format_number(row[key])
    for key in ("before", "after", "change", "ratio", "grad", "h"):
        assert result["nudge"][f"{key}_text"] == format_number(result["nudge"][key])
    assert result["values"] == [{"name": "x", "value": 2.0, "value_text": "2"}, {"name": "y", "value": -3.0, "value_text": "-3"}]
    assert result["trace"]["nodes"][-1]["data_text"] == "-5.036"  # 2*-3 + tanh(2) = -5.03597...


def test_nan_and_infinity_are_named_not_sent_as_numbers():
    result = run_playground("log(x) + exp(y)", {"x": "-1", "y": "800"})
    nodes = {node["label"]: node for node in result["trace"]["nodes"]}
    assert nodes["t1"]["data"] is None and nodes["t1"]["data_text"] == "nan"   # log(-1)
    assert nodes["t2"]["data"] is None and nodes["t2"]["data_text"] == "inf"   # exp(800)
    assert nodes["y"]["grad_text"] == "inf"  # d exp(y)/dy = exp(800)
    backward = result["trace"]["backward"]
    received = [c["contribution_text"] for step in backward for c in step["contributions"]]
    assert "inf" in received


def test_nudge_moves_the_output_by_about_gradient_times_h():
    result = run_playground("x*y + tanh(x)", {"x": "2", "y": "-3"}, nudge=("x", "0.001"))
    nudge = result["nudge"]
    after = 2.001 * -3 + math.tanh(2.001)
    assert nudge["after"] == pytest.approx(after, rel=1e-12)
    assert nudge["grad"] == pytest.approx(-3 + 1 - math.tanh(2) ** 2, rel=1e-12)
    assert nudge["ratio"] == pytest.approx(nudge["grad"], abs=1e-3)


def test_new_names_start_at_the_starting_values_and_unused_values_are_ignored():
    result = run_playground("p + q*r", {"zz": "5", "q": "7"})
    assert numbers_of(result) == {"p": STARTING_VALUES[0], "q": 7.0, "r": STARTING_VALUES[2]}
    assert result["seed"] == "p"
    assert run_playground("p + q", {}, seed="nope")["seed"] == "p"


def test_an_expression_without_names_is_a_constant_with_no_sweeps():
    result = run_playground("2 * 3", {})
    assert result["names"] == [] and result["sweeps"] is None
    assert result["trace"]["nodes"][-1]["data_text"] == "6"


def problems(*args, **kwargs):
    with pytest.raises(PlaygroundError) as info:
        run_playground(*args, **kwargs)
    return info.value.as_json()


@pytest.mark.parametrize("text, column, length, words", [
    ("x*foo(y)", 3, 3, "unknown function 'foo'"),
    ("2x + 1", 2, 1, "a product needs an explicit *, as in 2*x"),
    ("3.5abc - 1", 4, 3, "as in 3.5*abc"),
    ("x ^ 2", 3, 1, "use ** for powers"),
    ("tanh(x", 5, 1, "never closed"),
    ("x + ", 5, 1, "ends where"),
    ("lambda + 1", 1, 6, "keyword"),
    ("a_very_long_name * 2", 1, 16, f"at most {MAX_NAME}"),
])
def test_an_expression_problem_names_its_column_and_length(text, column, length, words):
    found = problems(text, {})
    assert found[0]["field"] == "expression"
    assert (found[0]["column"], found[0]["length"]) == (column, length)
    assert words in found[0]["message"]


def test_the_parser_errors_carry_the_length_of_what_they_point_at():
    with pytest.raises(ExpressionError) as info:
        parse("1 + root(2)")
    assert (info.value.column, info.value.length) == (5, 4)
    with pytest.raises(ExpressionError) as info:
        parse("")
    assert info.value.column is None and info.value.length is None


def test_limits_on_length_and_size_are_said_clearly():
    long = "x + " * 60 + "x"
    found = problems(long, {})
    assert found[0]["field"] == "expression" and f"at most {MAX_CHARS}" in found[0]["message"]
    assert found[0]["column"] == MAX_CHARS + 1
    big = "+".join(f"x{i}" for i in range(30))  # 30 inputs and 29 sums
    assert len(big) <= MAX_CHARS
    found = problems(big, {})
    assert found == [{"field": "expression", "column": None, "length": None,
                      "message": f"the graph of this expression has 59 values; the playground draws at most "
                                 f"{MAX_BOXES}. Shorten it, or try a part of it first."}]


@pytest.mark.parametrize("typed, words", [
    ("nan", "'nan' is not a number"),
    ("1e400", "too large"),
    ("", "x is empty"),
    ("   ", "x is empty"),
    ("2000", "out of range"),
    ("1,000.5", "is not a number"),
    ("<script>", "is not a number"),
])
def test_a_bad_number_is_a_field_problem(typed, words):
    found = problems("x*y", {"x": typed, "y": "1"})
    assert [p["field"] for p in found] == ["values.x"]
    assert words in found[0]["message"]
    assert "-1000 to 1000" in found[0]["message"]


def test_every_bad_field_is_named_at_once():
    found = problems("x*y", {"x": "", "y": "abc"}, nudge=("z", "0"))
    assert [p["field"] for p in found] == ["values.x", "values.y", "nudge.input", "nudge.h"]


def test_typed_numbers_in_other_notations_are_read():
    result = run_playground("x + y + z", {"x": " \u22121,5 ", "y": "2.5E-3", "z": 4})
    assert numbers_of(result) == {"x": -1.5, "y": 0.0025, "z": 4.0}


def test_the_readme_states_the_limits_the_code_has():
    from pathlib import Path

    readme = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8").split())
    assert f"(up to {MAX_CHARS} characters, {MAX_BOXES} values and names of {MAX_NAME} characters)" in readme
