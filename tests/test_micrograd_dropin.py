"""chainrule.micrograd against the real micrograd 0.1.0: micrograd's own test file, its demo's training loop,
ops added the micrograd way, graphs of the same shape; and what the drop-in keeps from chainrule (any
depth, a fixed order, a correct repeated backward)."""

from __future__ import annotations

import gc
import math
import random
import subprocess
import sys
import tarfile
import types
from pathlib import Path

import numpy as np
import pytest

from reference_torch import needs_torch, torch  # noqa: E402

micrograd_engine = pytest.importorskip("micrograd.engine")
micrograd_nn = pytest.importorskip("micrograd.nn")

import chainrule  # noqa: E402
from chainrule.datasets import moons  # noqa: E402
from chainrule.micrograd import engine as dropin_engine  # noqa: E402
from chainrule.micrograd import nn as dropin_nn

ORIGINAL_IMPORT = "from micrograd.engine import Value\n"
SDIST = "micrograd-0.1.0.tar.gz"
MEMBER = "micrograd-0.1.0/test/test_engine.py"
# `make test` downloads micrograd's source distribution here (it holds micrograd's own test file, which we
# run but do not copy into this repository); a run without it downloads it from PyPI once.
SDIST_DIR = Path(sys.prefix) / "reference"


def micrograd_test_source() -> str:
    """micrograd 0.1.0's test/test_engine.py, read from its source distribution on PyPI."""
    sdist = SDIST_DIR / SDIST
    if not sdist.is_file():
        SDIST_DIR.mkdir(parents=True, exist_ok=True)
        download = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "micrograd==0.1.0", "--no-deps",
             "--no-binary", ":all:", "-d", str(SDIST_DIR)], capture_output=True, text=True, timeout=300)
        assert sdist.is_file(), f"could not download micrograd's source distribution: {download.stderr[-500:]}"
    with tarfile.open(sdist) as archive:
        return archive.extractfile(MEMBER).read().decode("utf-8")


def load_reference_tests(engine_module: str) -> types.ModuleType:
    """micrograd's test file as a module, its one import line pointing at `engine_module`."""
    source = micrograd_test_source()
    assert source.count(ORIGINAL_IMPORT) == 1
    module = types.ModuleType(f"micrograd_reference_tests_{engine_module.replace('.', '_')}")
    module.__file__ = MEMBER
    exec(compile(source.replace(ORIGINAL_IMPORT, f"from {engine_module} import Value\n"), MEMBER, "exec"),
         module.__dict__)
    return module


@needs_torch
@pytest.mark.parametrize("engine_module", ["micrograd.engine", "chainrule.micrograd.engine"])
@pytest.mark.parametrize("test_name", ["test_sanity_check", "test_more_ops"])
def test_micrograds_own_tests_pass(engine_module: str, test_name: str) -> None:
    module = load_reference_tests(engine_module)
    assert module.Value.__module__ == engine_module
    assert module.torch is torch  # micrograd's tests compare with PyTorch
    getattr(module, test_name)()


# --- the demo's training loop, written once and run on both ----------------------------------------------

def demo_training(engine, nn, steps: int = 8):
    """micrograd's demo loop: moons, MLP(2, [16, 16, 1]), max-margin loss + L2, SGD with a decaying rate.
    Returns each step's loss and accuracy and the final parameters."""
    Value, MLP = engine.Value, nn.MLP
    points, labels = moons(100, 0.1, seed=1337)  # scikit-learn's make_moons in the demo; same shape of data
    X = np.array(points)
    y = np.array([(label + 1) // 2 for label in labels])  # 0/1 labels, as make_moons gives them
    y = y * 2 - 1
    random.seed(1337)
    model = MLP(2, [16, 16, 1])

    def loss(batch_size=None):
        Xb, yb = X, y
        inputs = [list(map(Value, xrow)) for xrow in Xb]
        scores = list(map(model, inputs))
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(yb, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        alpha = 1e-4
        reg_loss = alpha * sum((p * p for p in model.parameters()))
        total_loss = data_loss + reg_loss
        accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
        return total_loss, sum(accuracy) / len(accuracy)

    history = []
    for k in range(steps):
        total_loss, acc = loss()
        model.zero_grad()
        total_loss.backward()
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad
        history.append((total_loss.data, acc))
    return history, [p.data for p in model.parameters()], str(model)


def without_automatic_gc(run):
    """Each step's graph is a web of closure cycles in both engines; one collection per run instead of
    hundreds of automatic ones keeps this test quick on a busy machine (the numbers do not depend on it)."""
    gc.collect()
    gc.disable()
    try:
        return run()
    finally:
        gc.enable()
        gc.collect()


def test_the_demo_training_loop_gives_micrograds_numbers() -> None:
    theirs, their_params, their_repr = without_automatic_gc(lambda: demo_training(micrograd_engine, micrograd_nn))
    ours, our_params, our_repr = without_automatic_gc(lambda: demo_training(dropin_engine, dropin_nn))
    assert our_repr == their_repr
    assert len(our_params) == len(their_params) == 337
    for k, ((loss, acc), (their_loss, their_acc)) in enumerate(zip(ours, theirs)):
        assert acc == their_acc and abs(loss - their_loss) <= 1e-9, (k, loss, their_loss)
    assert max(abs(a - b) for a, b in zip(our_params, their_params)) <= 1e-9
    assert theirs[-1][0] < theirs[1][0] and theirs[-1][1] > theirs[0][1]  # the loop really trains


def test_mlp_shapes_and_parameters_follow_micrograd() -> None:
    for nouts in ([1], [3, 1], [4, 2]):
        random.seed(5)
        theirs = micrograd_nn.MLP(3, nouts)
        random.seed(5)
        ours = dropin_nn.MLP(3, nouts)
        assert [p.data for p in ours.parameters()] == [p.data for p in theirs.parameters()]
        x = [0.5, -1.0, 2.0]
        out, their_out = ours(x), theirs(x)
        assert isinstance(out, list) == isinstance(their_out, list)
        outs = out if isinstance(out, list) else [out]
        their_outs = their_out if isinstance(their_out, list) else [their_out]
        assert [o.data for o in outs] == pytest.approx([o.data for o in their_outs], abs=1e-12)
    neuron = dropin_nn.Neuron(2, nonlin=False)
    assert neuron.b.data == 0.0 and len(neuron.parameters()) == 3 and repr(neuron) == "LinearNeuron(2)"


def graph_shape(root) -> list[tuple[str, float, int]]:
    """Every node as (_op, data, number of inputs), sorted: the graph's shape whatever the node order."""
    seen, stack, shape = set(), [root], []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        shape.append((node._op, round(float(node.data), 12), len(node._prev)))
        stack.extend(node._prev)
    return sorted(shape)


def test_graphs_have_micrograds_nodes_and_op_labels() -> None:
    def program(Value):
        a, b = Value(-2.0), Value(3.0)
        return ((a * b + 1) ** 2 / (b - a) - 3 / a + (-b).relu()) * 2

    ours, theirs = program(dropin_engine.Value), program(micrograd_engine.Value)
    assert isinstance(ours._prev, set) and isinstance(ours._op, str)
    assert graph_shape(ours) == graph_shape(theirs)


def add_exp_the_micrograd_way(Value):
    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad
        out._backward = _backward
        return out
    return exp


def test_an_op_added_the_micrograd_way_just_works(monkeypatch) -> None:
    results = []
    for engine in (micrograd_engine, dropin_engine):
        monkeypatch.setattr(engine.Value, "exp", add_exp_the_micrograd_way(engine.Value), raising=False)
        x, w = engine.Value(0.7), engine.Value(-1.3)
        e = (x * w * 2).exp()
        out = (e - 1) / (e + 1)  # tanh built from the new exp
        out.backward()
        results.append((out.data, x.grad, w.grad))
    assert results[0] == pytest.approx(results[1], rel=1e-12)
    assert results[1][1] == pytest.approx((1 - math.tanh(-0.91) ** 2) * -1.3, rel=1e-12)


def test_deep_graphs_need_no_recursion_limit() -> None:
    x = dropin_engine.Value(0.5)
    out = x
    for _ in range(100_000):  # micrograd's recursive walk stops near 1,000 at the default limit
        out = out * 1.00001
    limit = sys.getrecursionlimit()
    out.backward()
    assert sys.getrecursionlimit() == limit
    assert x.grad == pytest.approx(1.00001**100_000, rel=1e-9)


@needs_torch
def test_repeated_backward_accumulates_leaves_only_as_torch_does() -> None:
    a = dropin_engine.Value(3.0)
    b = a * a
    c = (b + a).tanh() * a
    c.backward()
    first_interior = b.grad
    c.backward()
    assert b.grad == first_interior  # interior recomputed, not doubled
    ta = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    tc = torch.tanh(ta * ta + ta) * ta
    tc.backward(retain_graph=True)
    tc.backward()
    assert a.grad == pytest.approx(ta.grad.item(), rel=1e-12)
    # micrograd itself adds into interior nodes again, so its leaves go wrong (no tanh there: use x * x + x).
    results = []
    for engine in (dropin_engine, micrograd_engine):
        m = engine.Value(3.0)
        mc = (m * m + m) * m
        mc.backward()
        mc.backward()
        results.append(m.grad)
    assert results[0] == 2 * (3 * 9.0 + 2 * 3.0)  # twice d(x^3 + x^2)/dx at 3
    assert results[1] != results[0]


def test_a_negative_base_to_a_fractional_power_is_nan_not_complex() -> None:
    assert isinstance((micrograd_engine.Value(-8.0) ** 0.5).data, complex)
    assert math.isnan((dropin_engine.Value(-8.0) ** 0.5).data)


def test_the_order_is_fixed_so_results_repeat_bit_for_bit() -> None:
    def run() -> list[float]:
        rng = random.Random(2)
        leaves = [dropin_engine.Value(rng.uniform(-1, 1)) for _ in range(30)]
        out = dropin_engine.Value(0.0)
        for _ in range(400):
            a, b = rng.choice(leaves), rng.choice(leaves)
            out = out + (a * b).tanh() * 0.37 + a * b * b
        out.backward()
        return [v.grad for v in leaves]

    first = run()
    assert all(run() == first for _ in range(4))


def test_chainrule_value_refuses_micrograds_constructor_and_names_the_drop_in() -> None:
    a, b = chainrule.Value(1.0), chainrule.Value(2.0)
    with pytest.raises(TypeError, match=r"chainrule\.micrograd\.engine"):
        chainrule.Value(5.0, (a, b), "+")
    made = dropin_engine.Value(5.0, (dropin_engine.Value(1.0),), "+")
    assert made._op == "+" and len(made._prev) == 1


def test_bad_input_gets_chainrules_clear_errors() -> None:
    with pytest.raises(TypeError, match="str"):
        dropin_engine.Value("3")
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*: 'Value' and 'NoneType'"):
        dropin_engine.Value(1.0) * None
    product = dropin_engine.Value(2.0) * np.array([1.0, 3.0])
    assert [v.data for v in product] == [2.0, 6.0]
