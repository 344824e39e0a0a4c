"""The step trace (docs/trace.md): spec graphs with hand-derived numbers, schema, reuse, random graphs vs
the engine and PyTorch float64, and explain()."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule
from chainrule import Value
from chainrule.explanations import explain
from chainrule.traces import TRACE_SCHEMA, format_number, trace, trace_to_json

try:
    import torch
except ImportError:  # the random-graph comparison skips with the reason; the other tests still run
    torch = None

DOCS = Path(__file__).resolve().parents[1] / "docs" / "trace.md"


def section03():
    a, b, c, f = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c"), Value(-2.0, label="f")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    L = d * f
    L.label = "L"
    return L, dict(a=a, b=b, c=c, f=f, e=e, d=d, L=L)


def neuron():
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    n = x1 * w1 + x2 * w2 + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    return o, dict(x1=x1, x2=x2, w1=w1, w2=w2, b=b, n=n, o=o)


def by_label(t):
    return {node["label"]: node for node in t["nodes"]}


def step_of(t, label):
    node_id = by_label(t)[label]["id"]
    return next(s for s in t["backward"][1:] if s["node"] == node_id)


def test_section03_gradients_match_the_spec():
    L, _ = section03()
    t = trace(L)
    nodes = by_label(t)
    # Hand-derived in the spec, section 03.
    expected = {"L": 1, "d": -2, "f": 4, "e": -2, "c": -2, "a": 6, "b": -4}
    assert {k: nodes[k]["grad"] for k in expected} == expected
    assert {k: nodes[k]["data"] for k in "abcfedL"} == {"a": 2, "b": -3, "c": 10, "f": -2, "e": -6, "d": 4, "L": -8}


def test_section03_matches_the_contract_example_layout():
    L, _ = section03()
    t = trace(L)
    assert t["schema"] == "chainrule.trace/1"
    assert [n["label"] for n in t["nodes"]] == ["a", "b", "c", "f", "e", "d", "L"]
    assert t["output"] == "n6" and t["nodes"][-1]["id"] == "n6"
    e = t["nodes"][4]
    assert (e["id"], e["op"], e["symbol"], e["inputs"], e["formula"]) == ("n4", "mul", "*", ["n0", "n1"], "e = a × b")
    assert [s["step"] for s in t["forward"]] == list(range(7))
    assert [s["node"] for s in t["forward"]] == [n["id"] for n in t["nodes"]]
    assert t["forward"][0]["caption"] == "a = 2 is an input."
    assert t["forward"][4]["caption"] == "e = a × b = 2 × (-3) = -6"
    # Backward: seed, then L, d, e (reverse topological order of interior nodes).
    assert [s["node"] for s in t["backward"]] == ["n6", "n6", "n5", "n4"]
    assert t["backward"][0] == {"step": 0, "node": "n6", "grad": 1.0, "grad_text": "1",
                                "caption": "L is the output, so its gradient is 1.", "contributions": []}
    assert t["non_finite"] is None


def test_section03_captions_say_the_chain_rule_in_numbers():
    L, _ = section03()
    t = trace(L)
    step = t["backward"][3]
    assert step["node"] == "n4" and step["grad"] == -2
    # The spec's caption: "e = a*b, so a gets b times the gradient at e: -3 * -2 = 6".
    # × throughout, and a negative number that an operator touches in parentheses.
    assert step["caption"] == ("e = a × b, so a receives b × (gradient at e) = -3 × (-2) = 6, "
                               "and b receives a × (gradient at e) = 2 × (-2) = -4")
    numbers = [{key: c[key] for key in ("input", "local", "local_text", "upstream", "contribution", "grad_after")}
               for c in step["contributions"]]
    assert numbers == [
        {"input": "n0", "local": -3.0, "local_text": "b", "upstream": -2.0, "contribution": 6.0, "grad_after": 6.0},
        {"input": "n1", "local": 2.0, "local_text": "a", "upstream": -2.0, "contribution": -4.0, "grad_after": -4.0},
    ]
    # Each number with its text beside it.
    texts = [{key: c[key] for key in ("local_value_text", "upstream_text", "contribution_text", "grad_after_text")}
             for c in step["contributions"]]
    assert texts == [
        {"local_value_text": "-3", "upstream_text": "-2", "contribution_text": "6", "grad_after_text": "6"},
        {"local_value_text": "2", "upstream_text": "-2", "contribution_text": "-4", "grad_after_text": "-4"},
    ]
    add_step = step_of(t, "d")
    assert "e receives 1 × (gradient at d) = 1 × (-2) = -2" in add_step["caption"]
    assert "c receives 1 × (gradient at d) = 1 × (-2) = -2" in add_step["caption"]


def test_neuron_gradients_match_the_spec():
    o, _ = neuron()
    t = trace(o)
    nodes = by_label(t)
    # Hand-derived in the spec, section 04.
    assert nodes["x1"]["grad"] == pytest.approx(-1.5)
    assert nodes["w1"]["grad"] == pytest.approx(1.0)
    assert nodes["x2"]["grad"] == pytest.approx(0.5)
    assert nodes["w2"]["grad"] == 0.0
    assert nodes["b"]["grad"] == pytest.approx(0.5)
    assert nodes["n"]["grad"] == pytest.approx(0.5)
    assert nodes["n"]["data"] == pytest.approx(0.8814, abs=1e-4)
    assert nodes["o"]["data"] == pytest.approx(0.7071, abs=1e-4)
    tanh_step = step_of(t, "o")
    assert tanh_step["caption"] == "o = tanh(n), so n receives (1 - o^2) × (gradient at o) = 0.5 × 1 = 0.5"
    assert "o = tanh(n) = tanh(0.8814) = 0.7071" in [s["caption"] for s in t["forward"]]


def test_value_used_twice_shows_two_contributions_and_their_sum():
    # The spec: with += , b = a + a gives a-bar = 2 (1 from each use).
    a = Value(3.0, label="a")
    b = a + a
    b.label = "b"
    t = trace(b)
    a_id = by_label(t)["a"]["id"]
    contributions = [c for s in t["backward"] for c in s["contributions"] if c["input"] == a_id]
    assert [c["contribution"] for c in contributions] == [1.0, 1.0]
    assert [c["grad_after"] for c in contributions] == [1.0, 2.0]
    assert by_label(t)["a"]["grad"] == 2.0
    assert "a now holds 1 + 1 = 2" in t["backward"][1]["caption"]


def test_reuse_across_steps_keeps_a_running_sum():
    # The spec's reuse expression a*b + a*a: a is used three times; d/da = b + 2a.
    a, b = Value(1.5, label="a"), Value(-4.0, label="b")
    out = a * b + a * a
    t = trace(out)
    a_id = by_label(t)["a"]["id"]
    contributions = [c for s in t["backward"] for c in s["contributions"] if c["input"] == a_id]
    assert len(contributions) == 3
    assert sum(c["contribution"] for c in contributions) == pytest.approx(-4.0 + 2 * 1.5)
    running = [c["grad_after"] for c in contributions]
    assert running[-1] == pytest.approx(-1.0)
    assert running == pytest.approx([sum(c["contribution"] for c in contributions[: i + 1]) for i in range(3)])


def test_labels_generated_for_unlabelled_nodes_and_constants_show_their_value():
    x = Value(3.0, label="x")
    y = (x * 2 + 1).tanh()
    t = trace(y)
    labels = [n["label"] for n in t["nodes"]]
    assert "2" in labels and "1" in labels and "x" in labels
    assert labels[-1] == "out"
    assert len(set(labels)) == len(labels)
    const = by_label(t)["2"]
    assert const["leaf"] and const["constant"]
    assert "2 is a constant input." in [s["caption"] for s in t["forward"]]


def test_trace_does_not_touch_grads():
    L, v = section03()
    for value in v.values():
        value.grad = 0.25
    trace(L)
    assert all(value.grad == 0.25 for value in v.values())


def test_schema_validates_and_docs_hold_the_same_schema():
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(TRACE_SCHEMA)
    for out in (section03()[0], neuron()[0]):
        t = json.loads(trace_to_json(trace(out)))
        jsonschema.validate(t, TRACE_SCHEMA)
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    documented = [b for b in blocks if '"$schema"' in b]
    # The schema lives once, in the package's trace_schema.json; the docs show that file's text.
    shipped = (Path(chainrule.__file__).parent / "trace_schema.json").read_text(encoding="utf-8")
    assert documented == [shipped] and json.loads(shipped) == TRACE_SCHEMA


def test_nan_and_inf_become_null_and_the_caption_says_so():
    jsonschema = pytest.importorskip("jsonschema")
    x = Value(-1.0, label="x")
    y = x.log()
    t = trace(y)
    text = trace_to_json(t)  # strict JSON: would raise on nan
    assert "NaN" not in text and "Infinity" not in text
    node = by_label(t)["out"]
    assert node["data"] is None and node["data_text"] == "nan"
    assert by_label(t)["x"]["data_text"] == "-1"  # every number has its text, finite ones too
    assert "nan" in t["forward"][-1]["caption"]
    z = Value(0.0, label="z")
    t2 = trace(1.0 / z)
    assert "inf" in t2["forward"][-1]["caption"]
    # 1/z at z = 0: +inf, and d(1/z)/dz = -1/z^2 = -inf (as PyTorch gives)
    assert by_label(t2)["out"]["data_text"] == "inf"
    assert by_label(t2)["z"]["grad"] is None and by_label(t2)["z"]["grad_text"] == "-inf"
    jsonschema.validate(json.loads(trace_to_json(t2)), TRACE_SCHEMA)


def test_chainrule_trace_stays_the_function_after_importing_the_module():
    import importlib

    module = importlib.import_module("chainrule.traces")
    L, _ = section03()
    assert chainrule.trace(L)["schema"] == "chainrule.trace/1"
    assert module.trace(L) == chainrule.trace(L)


def test_deep_chain_does_not_recurse():
    x = Value(0.5, label="x")
    y = x
    for _ in range(20000):
        y = y * 1.0
    t = trace(y)
    assert by_label(t)["x"]["grad"] == 1.0
    assert len(t["backward"]) == 20001


@pytest.mark.parametrize("value, text", [
    (-3.0, "-3"), (0.5, "0.5"), (0.7071067811865476, "0.7071"), (6.0, "6"), (-0.0, "0"),
    (0.8813735870195432, "0.8814"), (1e-5, "1e-5"), (123456.0, "123456"), (1234.5678, "1234.5678"), (1234567.0, "1.235e6"),
    (math.nan, "nan"), (math.inf, "inf"), (-math.inf, "-inf"),
])
def test_format_number(value, text):
    assert format_number(value) == text


# --- random graphs: trace gradients == engine backward == PyTorch float64 ----------------------

UNARY = ["tanh", "exp", "sigmoid", "relu", "abs", "neg", "square", "log_abs"]
BINARY = ["add", "sub", "mul", "div_safe", "pow_pos"]


def build(program, leaves, lib):
    """Apply a list of ops to a pool of values, with `lib` supplying the operations, so the same
    program builds a chainrule graph and a torch graph."""
    pool = list(leaves)
    for kind, name, i, j in program:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        pool.append(lib[name](a, b) if kind == 2 else lib[name](a))
    return pool[-1]


CHAINRULE_OPS = {
    "tanh": lambda a: a.tanh(), "exp": lambda a: (a * 0.3).exp(), "sigmoid": lambda a: a.sigmoid(),
    "relu": lambda a: a.relu(), "abs": lambda a: abs(a), "neg": lambda a: -a, "square": lambda a: a ** 2,
    "log_abs": lambda a: (abs(a) + 1.0).log(),
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div_safe": lambda a, b: a / (b * b + 1.0), "pow_pos": lambda a, b: (a * a + 0.5) ** (b.tanh()),
}
TORCH_OPS = {
    "tanh": lambda a: torch.tanh(a), "exp": lambda a: torch.exp(a * 0.3), "sigmoid": lambda a: torch.sigmoid(a),
    "relu": lambda a: torch.relu(a), "abs": lambda a: torch.abs(a), "neg": lambda a: -a, "square": lambda a: a ** 2,
    "log_abs": lambda a: torch.log(torch.abs(a) + 1.0),
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div_safe": lambda a, b: a / (b * b + 1.0), "pow_pos": lambda a, b: (a * a + 0.5) ** torch.tanh(b),
}

op_step = st.one_of(
    st.tuples(st.just(1), st.sampled_from(UNARY), st.integers(0, 50), st.integers(0, 50)),
    st.tuples(st.just(2), st.sampled_from(BINARY), st.integers(0, 50), st.integers(0, 50)),
)


@pytest.mark.timeout(120)
@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.floats(-3, 3, allow_nan=False).filter(lambda v: abs(v) > 1e-3), min_size=1, max_size=4),
    program=st.lists(op_step, min_size=1, max_size=12),
)
def test_random_graphs_trace_equals_engine_and_torch(values, program):
    if torch is None:
        pytest.skip("PyTorch is not installed: pip install torch==2.13.0")
    leaves = [Value(v, label=f"x{i}") for i, v in enumerate(values)]
    out = build(program, leaves, CHAINRULE_OPS)
    t = trace(out)
    out.backward()
    tleaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    tout = build(program, tleaves, TORCH_OPS)
    if tout.requires_grad:
        tout.backward()
    nodes = by_label(t)
    for leaf, tleaf in zip(leaves, tleaves):
        traced = nodes[leaf.label]["grad"] if leaf.label in nodes else 0.0
        expected = tleaf.grad.item() if tleaf.grad is not None else 0.0
        if leaf.label in nodes:
            assert traced == pytest.approx(leaf.grad, rel=1e-12, abs=1e-12)
        assert traced == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert t["nodes"][-1]["data"] == pytest.approx(tout.item(), rel=1e-12, abs=1e-12)


# --- explain ---------------------------------------------------------------------------------------

def test_explain_section03_path_product():
    L, v = section03()
    text = chainrule.explain(L, v["a"])
    assert "a reaches L along one path only" in text
    assert "a -> e -> d -> L" in text
    assert "product: -3 × 1 × (-2) = 6" in text  # dL/da = b * 1 * f, the spec's chain formula, as captions write it
    assert "dL/da = 6" in text


def test_explain_neuron_w2_zero_factor():
    o, v = neuron()
    text = explain(o, v["w2"])
    assert "derivative with respect to w2 is x2 = 0" in text
    assert "nudging w2 changes o by nothing" in text


def test_explain_sums_two_paths_for_a_reused_value():
    a = Value(3.0, label="a")
    b = Value(4.0, label="b")
    out = a * b + a
    text = explain(out, a)
    assert "along 2 paths" in text
    assert "Sum over the 2 paths: 4 + 1 = 5" in text


def test_explain_truncates_many_paths_and_says_so():
    x = Value(1.0, label="x")
    y = x
    for _ in range(10):
        y = y + y  # every level doubles the number of paths: 2**10 in all, d y/d x = 1024
    text = explain(y, x, max_paths=5)
    assert "Showing 5 of 1024 paths" in text
    assert "= 1024" in text
    assert text.count("  Path ") == 5


def test_explain_value_not_in_graph():
    L, _ = section03()
    z = Value(1.0, label="z")
    assert "no path" in explain(L, z)


def test_layout_validates_and_is_the_one_the_svg_draws():
    """The page's layout (chainrule.drawing.page_layout) is part of the schema, and its wide shape is
    exactly where chainrule.draw's SVG puts every box."""
    import xml.etree.ElementTree as ET

    from chainrule.drawing import page_layout, to_svg

    jsonschema = pytest.importorskip("jsonschema")
    for out in (section03()[0], neuron()[0]):
        t = trace(out)
        with_layout = json.loads(trace_to_json(t | {"layout": page_layout(t)}))
        jsonschema.validate(with_layout, TRACE_SCHEMA)
        for shape in ("wide", "narrow"):
            svg = ET.fromstring(to_svg(t, shape))
            rects = {g.get("data-node"): g.find("{http://www.w3.org/2000/svg}rect")
                     for g in svg.iter("{http://www.w3.org/2000/svg}g") if "value" in (g.get("class") or "").split()}
            boxes = with_layout["layout"][shape]["boxes"]
            assert {node: (float(r.get("x")), float(r.get("y"))) for node, r in rects.items()} == {
                node: (box["x"], box["y"]) for node, box in boxes.items()}
    broken = with_layout | {"layout": {"wide": {"shape": "wide"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, TRACE_SCHEMA)


def test_a_subnormal_denominator_gives_the_engines_gradient_in_the_trace():
    # log's slope at 5e-324 is 1/x = inf; the engine divides the incoming 0 instead, so x receives 0, as
    # PyTorch gives. The trace must form each contribution the same way, not slope x upstream = inf x 0.
    x = Value(5e-324, label="x")
    y = x.log() * 0.0
    node_grads = {node["label"]: node["grad"] for node in chainrule.trace(y)["nodes"]}
    y.backward()
    assert x.grad == 0.0 and node_grads["x"] == 0.0
