"""The op table is the one place an op lives: an op added here, inside this test module, with one
`ops.register(Op(...))` call, is at once seen by every face of the engine and of the project: eager
values and gradients, second derivatives, the step trace's captions, compiled replay, forward mode, the
expression parser, the lessons' graphs and `chainrule graph` (with its PyTorch check). The expected numbers
come from PyTorch (softsign and its derivatives). The docs' op table and the README's list name every op of
the table, so an op added without its documentation fails here too."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import chainrule  # noqa: E402
from chainrule import Value, ops  # noqa: E402
from chainrule.cli import main  # noqa: E402
from chainrule.expr import ExpressionError, parse  # noqa: E402
from chainrule.lessons.graphs import build_graph  # noqa: E402
from chainrule.lessons.text import LessonDataError  # noqa: E402
from reference_torch import needs_torch, torch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _softsign(x: float) -> float:
    return x / (1.0 + abs(x))


SOFTSIGN = ops.Op(
    name="softsign", symbol="softsign", arity=1, forward=_softsign,
    # floats, Values and arrays alike
    pullback=lambda g, a, out: (ops.div(g, (1.0 + ops.apply(ops.ABS, a)) * (1.0 + ops.apply(ops.ABS, a))),),
    formula="{out} = softsign({a})", local_text=("1 / (1 + |{a}|)^2",),
    doc="Softsign, a / (1 + |a|): d/da = 1 / (1 + |a|)^2.",
    function="softsign", torch="nn.functional.softsign",
    array_forward=lambda a: a / (1.0 + np.abs(a)),
)
POINTS = [-3.0, -0.4, 0.0, 0.7, 5.0]


@pytest.fixture
def softsign():
    ops.register(SOFTSIGN)
    yield SOFTSIGN
    ops.unregister(SOFTSIGN)


def t(x: float) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


@needs_torch
def test_an_op_registered_here_is_seen_by_every_face(softsign, capsys) -> None:
    torch_softsign = torch.nn.functional.softsign
    for x in POINTS:
        # eager: value and gradient
        v = Value(x)
        out = ops.apply(softsign, v)
        out.backward()
        tx = t(x)
        (torch_grad,) = torch.autograd.grad(torch_softsign(tx), tx, create_graph=True)
        (torch_second,) = torch.autograd.grad(torch_grad, tx)
        assert out.data == pytest.approx(torch_softsign(tx).item(), rel=1e-14)
        assert v.grad == pytest.approx(torch_grad.item(), rel=1e-14)
        # second order, through the pullback written with ops.apply
        w = Value(x)
        (dw,) = chainrule.grad(ops.apply(softsign, w), [w], create_graph=True)
        (d2w,) = chainrule.grad(dw, [w])
        assert d2w.data == pytest.approx(torch_second.item(), rel=1e-13)
        # forward mode
        tangent = chainrule.jvp(lambda a: ops.apply(softsign, a), [x], [2.0])[1]
        assert tangent == pytest.approx(2 * torch_grad.item(), rel=1e-14)

    # the trace's captions, from the op's templates
    trace = chainrule.trace(ops.apply(softsign, Value(0.5, label="x")))
    assert "out = softsign(x) = softsign(0.5)" in trace["forward"][-1]["caption"]
    assert "x receives (1 / (1 + |x|)^2)" in trace["backward"][1]["caption"]

    # compiled replay: the array form forward, the pullback on arrays backward
    p = Value(1.5)
    compiled = chainrule.compile(lambda x: ops.apply(softsign, x * p), [p])
    values, grads = compiled.value_and_grad(np.array(POINTS))
    p.grad = 0.0
    for x in POINTS:
        ops.apply(softsign, Value(x) * p).backward()
    np.testing.assert_allclose(values, [_softsign(1.5 * x) for x in POINTS], rtol=1e-14)
    assert grads[0] == pytest.approx(p.grad, rel=1e-13)

    # the expression language and the lessons' graphs
    built, leaves = parse("2 * softsign(x)").build({"x": 0.7})
    assert built.data == pytest.approx(2 * torch_softsign(t(0.7)).item(), rel=1e-14)
    output, _ = build_graph({"leaves": [["x", 0.7]], "nodes": [["y", "softsign", "x"]], "output": "y"})
    assert output.data == pytest.approx(torch_softsign(t(0.7)).item(), rel=1e-14)

    # the graph command, with its PyTorch check naming torch's function
    assert main(["graph", "softsign(x) * y", "x=0.7", "y=-2", "--check-torch"]) == 0
    printed = capsys.readouterr().out
    assert "out = softsign(t1)" in printed or "softsign(x)" in printed
    assert "agree with PyTorch" in printed


def test_after_unregister_no_face_knows_it_any_more(softsign) -> None:
    ops.unregister(softsign)
    try:
        with pytest.raises(ExpressionError, match="unknown function 'softsign'"):
            parse("softsign(x)")
        with pytest.raises(LessonDataError, match="unknown op 'softsign'"):
            build_graph({"leaves": [["x", 1]], "nodes": [["y", "softsign", "x"]], "output": "y"})
    finally:
        ops.register(softsign)  # the fixture takes it out again


def test_register_refuses_clashes_and_op_takes_keywords_only() -> None:
    with pytest.raises(TypeError):
        ops.Op("twice", "2x", 1, lambda a: 2 * a, lambda g, a, out: (2 * g,), "{out} = 2 {a}", ("2",))
    with pytest.raises(ValueError, match="already in the table"):
        ops.register(ops.TANH)
    clash = ops.Op(name="grad_of", symbol="g", arity=1, forward=lambda a: a, pullback=lambda g, a, out: (g,),
                   formula="{out} = {a}", local_text=("1",), function="backward")
    with pytest.raises(ValueError, match="Value already has an attribute"):
        ops.register(clash)
    assert "grad_of" not in ops.OPS and Value.backward.__name__ == "backward"


def test_lesson_graph_nodes_with_the_wrong_number_of_inputs_are_a_clear_error() -> None:
    with pytest.raises(LessonDataError, match="takes 1 input, not 2"):
        build_graph({"leaves": [["x", 1], ["y", 2]], "nodes": [["z", "tanh", "x", "y"]], "output": "z"})


def _docs_op_table() -> set[str]:
    text = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    section = text.split("## Operations", 1)[1].split("\n## ", 1)[0]
    return {row.split("|")[2].strip() for row in section.splitlines() if row.startswith("| `")}


def test_the_docs_op_table_and_the_readme_name_every_op_of_the_table() -> None:
    named = _docs_op_table()
    missing = sorted(name for name in ops.OPS if name not in named)
    assert missing == [], f"docs/engine.md's table of operations lacks {missing}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    library = readme.split("## The library", 1)[1].split("\n## ", 1)[0]
    functions = set(re.findall(r"[a-z][a-z0-9]*", " ".join(re.findall(r"`([^`\n]+)`", library))))
    assert sorted(set(ops.functions()) - functions) == [], "README's library section lacks some ops"
