"""Engine behaviour: micrograd's known failures as regressions, modes, bad input, memory."""

from __future__ import annotations

import gc
import math
import random

import pytest

import chainrule
from chainrule import AnomalyError, GradcheckError, Value, detect_anomaly, grad, gradcheck, no_grad
from reference_torch import needs_torch, torch  # noqa: E402


def t(x: float) -> "torch.Tensor":
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


def test_a_value_used_twice_collects_both_uses() -> None:
    a = Value(3.0)
    b = a + a
    c = b + b
    c.backward()
    # The spec: with `=` instead of `+=`, b = a + a would give 1 instead of 2; here c = 4a.
    assert a.grad == 4.0
    assert b.grad == 2.0


@needs_torch
def test_repeated_backward_matches_torch_accumulation() -> None:
    a = Value(3.0)
    c = (a * a + a).tanh() * a
    c.backward()
    c.backward()
    ta = t(3.0)
    tc = torch.tanh(ta * ta + ta) * ta
    tc.backward(retain_graph=True)
    tc.backward()
    # Leaves accumulate over calls exactly as PyTorch's do; interior gradients are recomputed.
    assert a.grad == pytest.approx(ta.grad.item(), rel=1e-12)
    single = Value(3.0)
    (single_grad,) = grad((single * single + single).tanh() * single, [single])
    assert a.grad == pytest.approx(2 * single_grad.data, rel=1e-12)


def test_interior_gradients_are_recomputed_not_doubled() -> None:
    a = Value(2.0)
    b = a * 3.0
    c = b * b
    c.backward()
    first = b.grad
    c.backward()
    assert b.grad == first == 2 * 6.0


def test_deep_chain_of_a_hundred_thousand_nodes() -> None:
    x = Value(0.5)
    out = x
    for _ in range(100_000):
        out = out * 1.00001
    out.backward()
    assert x.grad == pytest.approx(1.00001**100_000, rel=1e-9)
    assert out.data == pytest.approx(0.5 * 1.00001**100_000, rel=1e-9)


def test_deep_chain_of_a_million_nodes_backward_and_free() -> None:
    x = Value(1.0)
    out = x
    for _ in range(1_000_000):
        out = out + 1.0
    out.backward()
    assert x.grad == 1.0
    assert out.data == 1_000_001.0
    del out  # freeing a million-deep chain must not overflow the C stack


def test_sum_of_ten_thousand_terms() -> None:
    rng = random.Random(7)
    xs = [Value(rng.uniform(-1, 1)) for _ in range(10_000)]
    ws = [rng.uniform(-1, 1) for _ in range(10_000)]
    total = Value(0.0)
    for x, w in zip(xs, ws):
        total = total + x * w
    total.backward()
    assert [x.grad for x in xs] == ws
    assert total.data == pytest.approx(math.fsum(x.data * w for x, w in zip(xs, ws)), abs=1e-9)


def test_results_are_bitwise_repeatable_and_summation_order_is_fixed() -> None:
    def run() -> list[float]:
        rng = random.Random(11)
        leaves = [Value(rng.uniform(-2, 2)) for _ in range(50)]
        out = Value(0.0)
        for _ in range(300):
            a, b = leaves[rng.randrange(50)], leaves[rng.randrange(50)]
            out = out + (a * b).tanh() * 0.1 + a * 1e-3
        out.backward()
        return [out.data] + [v.grad for v in leaves]

    first = run()
    assert all(run() == first for _ in range(3))
    x, y = Value(1.0), Value(2.0)
    order = [v.data for v in chainrule.topological_order(x * y + x)]
    assert order == [1.0, 2.0, 2.0, 3.0]  # inputs first, in the order they were given


def test_a_dropped_graph_is_freed_without_the_cycle_collector() -> None:
    gc.collect()
    gc.disable()
    try:
        x = Value(0.5)
        out = x
        for _ in range(10_000):
            out = (out * 0.9).tanh() + x
        out.backward()
        del out
        # Nothing of the graph is left for the cycle collector: reference counting freed it all.
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_grad_does_not_touch_dot_grad_and_handles_unused_inputs() -> None:
    x, y, unused = Value(2.0), Value(-1.0), Value(5.0)
    out = x * y + x
    gx, gy, gu = grad(out, [x, y, unused])
    assert (gx.data, gy.data, gu.data) == (0.0, 2.0, 0.0)
    assert x.grad == y.grad == 0.0


def test_no_grad_records_nothing_and_restores_state_after_an_error() -> None:
    x = Value(2.0)
    with no_grad():
        y = x * 3
    assert y.is_leaf() and y.data == 6.0
    with pytest.raises(RuntimeError):
        with no_grad():
            raise RuntimeError("boom")
    assert chainrule.is_grad_enabled()
    z = x * 3
    assert not z.is_leaf()


def test_detect_anomaly_forward_names_op_and_line() -> None:
    x = Value(-1.0)
    with pytest.raises(AnomalyError) as error:
        with detect_anomaly():
            y = x.log()  # noqa: F841 - the line the message must point at, quoted whole
    message = str(error.value)
    assert "log" in message
    assert "test_engine_behaviour.py" in message and "y = x.log()" in message
    assert chainrule.is_grad_enabled()


def test_detect_anomaly_backward_names_op_and_line() -> None:
    x = Value(0.0)
    with detect_anomaly():
        y = x**0.5  # sqrt at 0: value 0 is fine, its slope is infinite
        with pytest.raises(AnomalyError) as error:
            y.backward()
    message = str(error.value)
    assert "backward" in message and "pow0.5" in message and "y = x**0.5" in message


@pytest.mark.parametrize("create_graph", [False, True])
def test_detect_anomaly_covers_grad_as_backward(create_graph: bool) -> None:
    # grad() runs the same backward sweep as backward(), so anomaly mode sees its pullbacks too.
    x = Value(0.0)
    with detect_anomaly():
        y = x**0.5  # the line the message must point at
        with pytest.raises(AnomalyError) as error:
            grad(y, [x], create_graph=create_graph)
    message = str(error.value)
    if create_graph:  # the gradient is built from Values: the inf shows as the node 0 ** -0.5 is made
        assert "forward: pow-0.5(0) gave inf" in message and "grad(y, [x]" in message
    else:
        assert "backward: pow0.5 passed inf" in message and "y = x**0.5" in message
    assert x.grad == 0.0 and chainrule.is_grad_enabled()


def test_outside_detect_anomaly_nan_flows_silently_like_torch() -> None:
    y = Value(-1.0).log()
    assert math.isnan(y.data)


@pytest.mark.parametrize("bad", ["a", None, 1 + 2j, [1], {"x": 1}])
def test_bad_input_raises_type_error_naming_the_type(bad) -> None:
    with pytest.raises(TypeError) as error:
        Value(bad)
    assert type(bad).__name__ in str(error.value)


def test_bad_operand_raises_pythons_type_error_naming_both_sides() -> None:
    # Value returns NotImplemented for an operand it does not know; when the other side refuses too,
    # Python's own message names the operator and both types.
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Value' and 'str'"):
        Value(1.0) + "x"
    with pytest.raises(TypeError, match="can't multiply sequence by non-int of type 'Value'"):
        "x" * Value(1.0)
    with pytest.raises(TypeError, match=r"for \*\* or pow\(\): 'Value' and 'complex'"):
        Value(1.0) ** (1j)
    with pytest.raises(TypeError, match=r"for /: 'NoneType' and 'Value'"):
        None / Value(1.0)


def test_ints_and_bools_become_floats() -> None:
    assert Value(3).data == 3.0 and isinstance(Value(3).data, float)
    assert (Value(1.0) + 2).data == 3.0


def test_gradcheck_accepts_correct_and_flags_a_kink() -> None:
    assert gradcheck(lambda a, b: (a * b).tanh() + a.exp() / b, [0.3, 1.2])
    # relu just right of its kink: analytic slope 1, central difference ~0.55.
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(lambda a: a.relu(), [1e-7], eps=1e-6)
    assert gradcheck(lambda a: a.relu(), [1e-7], eps=1e-6, raise_exception=False) is False


def test_zero_grad_on_graph_and_on_parameters() -> None:
    a, b = Value(1.0), Value(2.0)
    out = a * b
    out.backward()
    assert a.grad == 2.0
    out.zero_grad()
    assert a.grad == b.grad == out.grad == 0.0
    out.backward()
    chainrule.zero_grad([a, b])
    assert a.grad == b.grad == 0.0


def test_repr_shows_data_grad_op_and_label() -> None:
    v = Value(2.0, label="a") * 3
    text = repr(v)
    assert "data=6" in text and "op=mul" in text
    assert "label='a'" in repr(Value(2.0, label="a"))


def test_memory_per_op_node_is_small() -> None:
    import tracemalloc

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    x = Value(0.5)
    out = x
    for _ in range(20_000):
        out = out * 0.5 + x
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert used / 40_000 <= 200, used / 40_000


def test_backward_order_lists_inputs_first_on_random_dags() -> None:
    rng = random.Random(3)
    for _ in range(200):
        values = [Value(rng.uniform(-1, 1)) for _ in range(3)]
        for _ in range(rng.randrange(1, 40)):
            a, b = rng.choice(values), rng.choice(values)  # reuse, including a node with itself
            values.append(rng.choice([lambda: a * b, lambda: a + b, lambda: a.tanh(), lambda: b - a])())
        root = values[-1]
        for leaves in (True, False):
            order = chainrule.topological_order(root, leaves=leaves)
            position = {id(v): i for i, v in enumerate(order)}
            assert len(position) == len(order), "a node was listed twice"
            assert order[-1] is root or root.is_leaf()
            for v in order:
                for p in v.inputs:
                    if leaves or not p.is_leaf():
                        assert position[id(p)] < position[id(v)]


def test_no_grad_in_another_thread_does_not_touch_this_threads_graph() -> None:
    import threading

    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with no_grad():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        assert inside.wait(10)
        x = Value(2.0)
        y = x * x  # built while the other thread is inside no_grad
        assert chainrule.is_grad_enabled() and not y.is_leaf()
        y.backward()
        assert x.grad == 4.0
    finally:
        release.set()
        thread.join(10)
    z = Value(3.0) * 2
    assert not z.is_leaf()
