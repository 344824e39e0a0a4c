"""`chainrule graph`: tables, steps, JSON, SVG, DOT, --why, --check-torch and exit codes, run through
chainrule.cli.main and once as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainrule.cli import main
from chainrule.expr import parse
from chainrule.traces import TRACE_SCHEMA

NEURON = ["tanh(x1*w1 + x2*w2 + b)", "x1=2", "x2=0", "w1=-3", "w2=1", "b=6.8813735870195432"]


def run(capsys, *argv):
    code = main(["graph", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_table_shows_values_and_the_spec_gradients(capsys):
    code, out, err = run(capsys, *NEURON)
    assert code == 0, err
    # Spec section 04, hand-derived: -1.5, 1.0, 0.5, 0.0 for x1, w1, x2, w2; db = 0.5; o ~ 0.7071.
    assert "d(out)/d(x1) = -1.5\n" in out
    assert "d(out)/d(w1) = 1\n" in out
    assert "d(out)/d(x2) = 0.5\n" in out
    assert "d(out)/d(w2) = 0\n" in out
    assert "d(out)/db    = 0.5\n" in out
    assert "out = 0.7071067812" in out
    for label in ("x1", "w1", "x2", "w2", "b", "out"):
        assert f" {label} " in out


def test_steps_print_the_backward_captions(capsys):
    code, out, _ = run(capsys, "a*b + c", "a=2", "b=-3", "c=10", "--steps")
    assert code == 0
    assert "Backward pass:" in out and "out is the output, so its gradient is 1." in out
    assert "a receives b × (gradient at t1) = -3 × 1 = -3" in out
    assert "t1 = a × b = 2 × (-3) = -6" in out


def test_json_is_the_trace(capsys):
    jsonschema = pytest.importorskip("jsonschema")
    code, out, _ = run(capsys, *NEURON, "--json")
    assert code == 0
    t = json.loads(out)
    jsonschema.validate(t, TRACE_SCHEMA)
    grads = {n["label"]: n["grad"] for n in t["nodes"]}
    assert grads["x1"] == pytest.approx(-1.5) and grads["w2"] == 0.0


def test_svg_file_and_dot(capsys, tmp_path):
    target = tmp_path / "neuron.svg"
    code, out, err = run(capsys, *NEURON, "--svg", str(target))
    assert code == 0 and f"wrote {target}" in err
    root = ET.parse(target).getroot()
    assert root.tag.endswith("svg")
    assert len([g for g in root.iter("{http://www.w3.org/2000/svg}g") if "value" in (g.get("class") or "")]) == 10
    code, out, _ = run(capsys, *NEURON, "--dot")
    assert code == 0 and out.startswith("digraph chainrule {")
    code, _, err = run(capsys, *NEURON, "--svg", str(tmp_path / "missing-dir" / "x.svg"))
    assert code == 1 and "cannot write" in err


def test_why_explains_a_gradient_as_paths(capsys):
    code, out, _ = run(capsys, *NEURON, "--why", "w2")
    assert code == 0
    assert "w2 reaches out along one path only, first through t2 = x2 × w2" in out
    assert "derivative with respect to w2 is x2 = 0" in out
    code, out, _ = run(capsys, "a*b + a", "a=3", "b=4", "--why", "a")
    assert "Sum over the 2 paths: 4 + 1 = 5" in out  # d(ab + a)/da = b + 1


@pytest.mark.parametrize("argv, words", [
    (["x*y", "x=1"], "no value for y"),
    (["x*y", "x=1", "y=2", "x=3"], "x is given twice"),
    (["x*y", "x=1", "y"], "'y' is not NAME=VALUE"),
    (["x*y", "x=1", "y=abc"], "the value of y, 'abc', is not a number"),
    (["x*y", "x=1", "1y=2"], "'1y=2' is not NAME=VALUE"),
    (["x*foo(y)", "x=1", "y=2"], "unknown function 'foo'"),
    (["x*y", "x=1", "y=2", "z=3"], "z is not in the expression"),
    (["x*y", "x=1", "y=2", "--why", "q"], "--why q: q is not in the expression"),
    (["x*y", "x=1", "y=inf"], "finite"),
    (["x..y", "x=1"], "column 2"),
])
def test_bad_input_exits_2_and_names_it(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert words in err
    assert out == ""


def test_check_torch_agrees_on_the_neuron(capsys):
    pytest.importorskip("torch")
    code, out, _ = run(capsys, *NEURON, "--check-torch")
    assert code == 0
    assert "All 5 gradients and the output agree with PyTorch float64" in out


def test_check_torch_says_clearly_when_torch_is_missing(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail as if not installed
    code, out, _ = run(capsys, "x*y", "x=1", "y=2", "--check-torch")
    assert code == 1
    assert "PyTorch is not installed" in out


# Random expressions stay where every value is finite (no log of a negative number, no division by 0,
# no negative base to a fractional power): there chainrule and PyTorch must agree exactly.
TEMPLATES_1 = ["tanh({a})", "sigmoid({a})", "exp(tanh({a}))", "relu({a})", "abs({a})", "-({a})",
               "log(1 + ({a})**2)", "({a})**2", "({a})**3"]
TEMPLATES_2 = ["({a} + {b})", "({a} - {b})", "({a} * {b})", "({a}) / (1 + ({b})**2)",
               "(1 + ({a})**2) ** tanh({b})"]

leaf = st.sampled_from(["x", "y", "z", "2", "0.5", "1.5"])
expressions = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(lambda t, a: t.format(a=a), st.sampled_from(TEMPLATES_1), inner),
        st.builds(lambda t, a, b: t.format(a=a, b=b), st.sampled_from(TEMPLATES_2), inner, inner),
    ),
    max_leaves=8,
)


@pytest.mark.timeout(120)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=expressions.filter(lambda t: bool(parse(t).names)),
       values=st.lists(st.floats(-2, 2, allow_nan=False).map(lambda v: round(v, 3)), min_size=3, max_size=3))
def test_check_torch_agrees_on_random_expressions(capsys, text, values):
    pytest.importorskip("torch")
    names = parse(text).names
    assignments = [f"{n}={v}" for n, v in zip("xyz", values) if n in names]
    # "--" ends the options, so an expression may start with "-" (as the help says).
    code, out, err = run(capsys, "--check-torch", "--", text, *assignments)
    assert code == 0, out + err
    assert "agree with PyTorch float64" in out


@pytest.mark.timeout(120)
def test_real_subprocess():
    exe = Path(sys.executable).with_name("chainrule")
    if not exe.exists():
        pytest.skip(f"the chainrule script is not installed next to {sys.executable}")
    done = subprocess.run([str(exe), "graph", *NEURON], capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stderr
    assert "d(out)/d(x1) = -1.5" in done.stdout
    bad = subprocess.run([str(exe), "graph", "x*y", "x=1"], capture_output=True, text=True, timeout=100)
    assert bad.returncode == 2 and "no value for y" in bad.stderr
