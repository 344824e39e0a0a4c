"""The nudge check compares change / h with the gradient and says when and why they differ (a corner, h not
small, an inf or nan and where it came from); a trace names the node and the operation that produced the
first inf or nan; the playground gets its gradients from the trace's one backward sweep.

Expected numbers are derived by hand for each expression (written next to it)."""

from __future__ import annotations

import sys

import pytest

import chainrule
from chainrule import Value
from chainrule.errors import InputError
from chainrule.lessons.graphs import explore_graph
from chainrule.lessons.playground import run_playground


def nudged(expression, values, name, h):
    return run_playground(expression, values, nudge=(name, h))["nudge"]


def test_a_corner_is_named_with_both_one_sided_slopes():
    # relu(x) * y at x = 0, y = 2: from the right the slope is y = 2, from the left 0; the rule gives 0.
    n = nudged("relu(x)*y", {"x": "0", "y": "2"}, "x", "0.01")
    assert (n["ratio"], n["grad"], n["verdict"]) == (pytest.approx(2.0), 0.0, "kink")
    assert "t1 = relu(x)" in n["note"] and "Nudged up, out changes by 2" in n["note"] and "nudged down, by 0" in n["note"]
    assert "they agree" not in n["note"] and "close" not in n["note"]
    # abs(x - 1) * 3 at x = 1: the corner is in |t1|, at t1 = 0; slopes 3 and -3.
    n = nudged("abs(x - 1) * 3", {"x": "1"}, "x", "0.5")
    assert n["verdict"] == "kink" and "|t1|" in n["note"] and "at t1 = 0" in n["note"] and "by -3" in n["note"]


def test_a_large_h_is_said_to_be_the_reason():
    # f = x**3 - 3*x*x at x = -2: f(-1) - f(-2) = -4 - (-20) = 16, so change / h = 16 with h = 1, while
    # f'(x) = 3x^2 - 6x = 24. With h = 0.1: (f(-1.9) - f(-2)) / 0.1 = (-17.689 + 20) / 0.1 = 23.11.
    n = nudged("x**3 - 3*x*x", {"x": "-2"}, "x", "1")
    assert (n["ratio"], n["grad"], n["verdict"]) == (pytest.approx(16.0), pytest.approx(24.0), "h-large")
    assert "h = 1 is not small" in n["note"] and "with h = 0.1, change / h is 23.11" in n["note"]


def test_a_small_gap_that_shrinks_with_h_is_close_and_a_straight_line_agrees():
    # x**2 + 3x at 2: change / h = 7 + h exactly, the gradient 7.
    n = nudged("x**2 + 3*x", {"x": "2"}, "x", "0.01")
    assert (n["ratio"], n["verdict"]) == (pytest.approx(7.01), "close")
    assert "with h = 0.001, change / h is 7.001" in n["note"]
    n = nudged("x*y", {"x": "2", "y": "3"}, "x", "0.01")
    assert (n["ratio_text"], n["grad_text"], n["verdict"]) == ("3", "3", "agree")


@pytest.mark.parametrize("expression, values, name, words", [
    # 1 / 0 is inf before the nudge: there is no change to measure, and the note names x / y.
    ("x/y", {"x": "1", "y": "0"}, "y", ["already inf before the nudge", "out = x / y = 1 / 0 = inf",
                                         "as y nears 0"]),
    ("log(x)", {"x": "-1"}, "x", ["already nan", "log(x) has no real result for x = -1"]),
    # x ** 0.5 at 0: every value finite, the slope 0.5 * 0 ** -0.5 is inf.
    ("x**0.5", {"x": "0"}, "x", ["Every value is finite, but the gradient is inf", "0.5 × x ** (-0.5)", "at x = 0"]),
])
def test_inf_or_nan_is_named_with_where_it_came_from(expression, values, name, words):
    n = nudged(expression, values, name, "0.01")
    assert n["verdict"] == "not-finite"
    for word in words:
        assert word in n["note"], (word, n["note"])


@pytest.mark.parametrize("build, phase, node_label, words", [
    (lambda: 1.0 / Value(0.0, label="x"), "forward", "out", ["out = 1 / x = 1 / 0 = inf", "grows without bound as x nears 0"]),
    (lambda: Value(-1.0, label="x").log() * 2.0, "forward", "t1", ["t1 = log(x) = log(-1) = nan", "not a number"]),
    (lambda: Value(-4.0, label="x") ** 0.5, "forward", "out", ["out = x ** 0.5 = (-4) ** 0.5 = nan",
                                                               "no real result for x = -4"]),
    (lambda: Value(1000.0, label="x").exp(), "forward", "out", ["exp(x) = exp(1000) = inf", "too large for a float"]),
    (lambda: Value(0.0, label="x") ** 0.5 + 1.0, "backward", "t1", ["x receives", "= inf", "the slope of t1 with respect to x"]),
])
def test_the_trace_names_the_node_and_operation_of_the_first_inf_or_nan(build, phase, node_label, words):
    t = chainrule.trace(build())
    origin = t["non_finite"]
    assert origin["phase"] == phase
    assert next(n for n in t["nodes"] if n["id"] == origin["node"])["label"] == node_label
    for word in words:
        assert word in origin["text"], (word, origin["text"])


def test_only_the_first_producer_is_named_not_what_follows_from_it():
    x = Value(0.0, label="x")
    out = (1.0 / x) * 2.0 - 5.0  # inf, then inf * 2, then inf - 5: the first is 1 / x
    origin = chainrule.trace(out)["non_finite"]
    assert origin["text"].startswith("t1 = 1 / x = 1 / 0 = inf")
    assert chainrule.trace(Value(2.0) * Value(3.0))["non_finite"] is None


def test_the_playground_runs_one_backward_sweep_and_calls_no_pullback_itself():
    """The texts come from the trace: no second sweep (a pullback called from playground.py) to make them."""
    from chainrule import engine

    sweeps, pullbacks_from_playground = [], []

    def watch(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code is engine.reverse_sweep.__code__:
                sweeps.append(1)
            caller = frame.f_back
            if code.co_filename.endswith("ops.py") and caller and caller.f_code.co_filename.endswith("playground.py"):
                pullbacks_from_playground.append(code.co_name)

    sys.setprofile(watch)
    try:
        result = run_playground("x*y + tanh(x) + x/y", {"x": "2", "y": "-3"})
    finally:
        sys.setprofile(None)
    assert len(sweeps) == 1 and pullbacks_from_playground == []
    # ... and its gradients are the engine's: d/dx = y + 1 - tanh(x)^2 + 1/y, d/dy = x - x/y^2.
    grads = {node["label"]: node["grad"] for node in result["trace"]["nodes"]}
    import math
    assert grads["x"] == pytest.approx(-3 + 1 - math.tanh(2) ** 2 - 1 / 3, rel=1e-12)
    assert grads["y"] == pytest.approx(2 - 2 / 9, rel=1e-12)


LOSS = {"leaves": [["w", 0.5], ["x", 2], ["1/n", 0.5]], "nodes": [["wx", "mul", "w", "x"], ["L", "mul", "wx", "1/n"]],
        "constants": ["1/n"], "output": "L"}


def test_a_lesson_graphs_constant_is_shown_as_one_and_cannot_be_changed_or_nudged():
    t = explore_graph(LOSS, {})["trace"]
    node = next(n for n in t["nodes"] if n["label"] == "1/n")
    assert node["constant"] is True and node["leaf"] is True
    assert "1/n = 0.5 is a constant of the formula." in [s["caption"] for s in t["forward"]]
    assert any("the constant 1/n gets wx × (gradient at L) = 1 × 1 = 1, which changes nothing: a constant is not an input" in s["caption"] for s in t["backward"])
    with pytest.raises(InputError, match="1/n is a constant of the formula, not an input"):
        explore_graph(LOSS, {"1/n": 1.0})
    with pytest.raises(InputError, match="cannot nudge '1/n'"):
        explore_graph(LOSS, {}, nudge=("1/n", 0.01))
    # Nudging w: L = w * x / 2 is a straight line in w, slope x / 2 = 1.
    n = explore_graph(LOSS, {}, nudge=("w", 0.01))["nudge"]
    assert (n["verdict"], n["symbol"], n["grad_text"]) == ("agree", "dL/dw", "1")
