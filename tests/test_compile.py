"""chainrule.compile replays a traced graph over a batch and must agree with the eager engine.

The reference is the eager engine itself, run example by example (values, and parameter gradients
accumulated over the examples by repeated backward() calls). Tolerances: relative 1e-12 for values and
1e-10 for gradients, with the same size as an absolute floor for numbers near 0, where a different
order of summation shows as a relative difference.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainrule
from chainrule import TracingError, Value
from chainrule.datasets import moons
from chainrule.losses import l2_penalty
from chainrule.nn import MLP
from chainrule.replay import MatrixSum
from compile_programs import eager_value_and_grad

VALUE_TOLERANCE = 1e-12
GRAD_TOLERANCE = 1e-10


def assert_agrees(fn, params, columns):
    compiled = chainrule.compile(fn, params, n_inputs=len(columns))
    values, grads = compiled.value_and_grad(*columns)
    expected_values, expected_grads = eager_value_and_grad(fn, params, columns)
    np.testing.assert_allclose(values, expected_values, rtol=VALUE_TOLERANCE, atol=VALUE_TOLERANCE)
    np.testing.assert_allclose(grads, expected_grads, rtol=GRAD_TOLERANCE, atol=GRAD_TOLERANCE)
    return compiled


# --- each op, on ordinary numbers and on the awkward ones ---------------------------------------------

a_param, b_param = Value(0.7), Value(-1.3)
OPS = {
    "add": lambda x, y: x + a_param + y,
    "sub": lambda x, y: x - y - b_param,
    "mul": lambda x, y: x * y * a_param,
    "div": lambda x, y: (x * a_param) / (y + b_param),
    "rdiv": lambda x, y: 2.0 / (x * a_param),
    "neg": lambda x, y: -(x * b_param),
    "pow": lambda x, y: (x * a_param) ** (y * b_param),
    "rpow": lambda x, y: 2.0 ** (x * a_param),
    "pow2": lambda x, y: (x * a_param) ** 2,
    "pow3": lambda x, y: (x + b_param) ** 3,
    "pow-1": lambda x, y: (x * a_param) ** -1,
    "pow0.5": lambda x, y: (x * a_param) ** 0.5,
    "pow0": lambda x, y: (x * a_param) ** 0 + x * b_param,
    "exp": lambda x, y: (x * a_param).exp(),
    "log": lambda x, y: (x * a_param).log(),
    "tanh": lambda x, y: (x * a_param + y).tanh(),
    "sigmoid": lambda x, y: (x * a_param).sigmoid(),
    "relu": lambda x, y: (x * a_param + b_param).relu(),
    "abs": lambda x, y: abs(x * a_param + b_param),
    "sin": lambda x, y: (x * a_param + y).sin(),
    "cos": lambda x, y: (x * a_param).cos() * y,
}
ORDINARY = [-2.5, -1.0, -0.3, 0.2, 0.9, 1.7, 3.0]


@pytest.mark.parametrize("name", OPS)
def test_each_op_agrees_with_the_eager_engine_over_a_batch(name):
    fn = OPS[name]
    xs = np.array(ORDINARY)
    ys = np.array(ORDINARY[::-1]) * 0.5
    if name in ("log", "pow0.5", "pow"):
        xs = np.abs(xs)  # a positive base: finite values and gradients to compare in the batch sum
    assert_agrees(fn, [a_param, b_param], [xs, ys])


def assert_agrees_example_by_example(fn, xs, ys):
    """Batches of one: inf and nan in one example must not hide another example's numbers."""
    compiled = chainrule.compile(fn, [a_param, b_param])
    for x in xs:
        for y in ys:
            values, grads = compiled.value_and_grad([x], [y])
            expected_values, expected_grads = eager_value_and_grad(fn, [a_param, b_param], [[x], [y]])
            np.testing.assert_allclose(values, expected_values, rtol=VALUE_TOLERANCE, equal_nan=True,
                                       err_msg=f"at x={x}, y={y}")
            np.testing.assert_allclose(grads, expected_grads, rtol=GRAD_TOLERANCE, equal_nan=True,
                                       err_msg=f"at x={x}, y={y}")


AWKWARD = [0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300, math.inf, -math.inf, math.nan, 1.3, -1.3]


@pytest.mark.parametrize("name", OPS)
def test_each_op_agrees_on_zeros_infinities_and_nan_one_example_at_a_time(name):
    """Masked slopes, inf and nan must come out exactly as the eager engine's, example by example."""
    assert_agrees_example_by_example(OPS[name], AWKWARD, (0.0, 1.3, -math.inf, math.nan))


@pytest.mark.parametrize("name", OPS)
def test_each_op_passes_an_infinite_gradient_from_above_as_the_eager_engine_does(name):
    """The output times a factor that overflows to inf: every gradient arriving at the op is inf, so a
    masked slope (exactly 0) and an unmasked zero slope (0 x inf = nan) come out differently."""
    overflow = a_param * 1e300 * 1e300
    fn = lambda x, y: OPS[name](x, y) * overflow  # noqa: E731
    assert_agrees_example_by_example(fn, (0.0, 1.3, -1.3, math.inf, math.nan), (0.0, 1.3, -2.0))


def test_relu_passes_no_gradient_at_zero_even_from_an_infinite_slope_above():
    """relu(0) has slope 0, masked: 0 x inf must give 0, not nan (PyTorch's rule, and the engine's)."""
    p = Value(1.0)
    fn = lambda x: (x * p).relu() * (p * 1e200) * 1e200  # noqa: E731  upstream gradient overflows to inf
    values, grads = chainrule.compile(fn, [p]).value_and_grad(np.array([0.0, 0.0]))
    assert values.tolist() == [0.0, 0.0]
    assert grads.tolist() == [0.0]


# --- random graphs: every op, values used many times, sums that fuse ----------------------------------

STEPS = {
    "add": (2, lambda a, b: a + b),
    "sub": (2, lambda a, b: a - b),
    "mul": (2, lambda a, b: a * b.tanh()),
    "div": (2, lambda a, b: a / (b * b + 1.0)),
    "rdiv": (1, lambda a: 2.0 / (a * a + 1.0)),
    "neg": (1, lambda a: -a),
    "scale": (1, lambda a: 0.5 * a),
    "tanh": (1, lambda a: a.tanh()),
    "sigmoid": (1, lambda a: a.sigmoid()),
    "relu": (1, lambda a: a.relu()),
    "abs": (1, lambda a: abs(a)),
    "exp": (1, lambda a: a.tanh().exp()),
    "log": (1, lambda a: (a * a + 0.5).log()),
    "square": (1, lambda a: a ** 2),
    "cube": (1, lambda a: a.tanh() ** 3),
    "power": (2, lambda a, b: (a * a + 1.0) ** b.tanh()),
    "rpow": (1, lambda a: 2.0 ** a.tanh()),
    "dot": (3, lambda a, b, c: a * b + a * c + b * c),
}


@st.composite
def programs(draw):
    n_inputs = draw(st.integers(1, 3))
    n_params = draw(st.integers(1, 4))
    steps = []
    for i in range(draw(st.integers(1, 20))):
        name = draw(st.sampled_from(sorted(STEPS)))
        pool = n_inputs + n_params + i
        steps.append((name, [draw(st.integers(0, pool - 1)) for _ in range(STEPS[name][0])]))
    weighted_sum = draw(st.booleans())  # the output a sum of products of parameters and results
    number = st.floats(-2.0, 2.0, allow_nan=False)
    params = [draw(number) for _ in range(n_params)]
    n = draw(st.integers(1, 6))
    columns = [np.array([draw(number) for _ in range(n)]) for _ in range(n_inputs)]
    return n_inputs, params, steps, weighted_sum, columns


def program_function(params, steps, weighted_sum):
    def fn(*inputs):
        pool = [*inputs, *params]
        for name, operands in steps:
            pool.append(STEPS[name][1](*[pool[k] for k in operands]))
        if not weighted_sum:
            return pool[-1] + 0.0
        tail = pool[-4:]
        return sum((p * v for p, v in zip(params * 4, tail)), params[0])
    return fn


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_graphs_agree_with_the_eager_engine(program):
    n_inputs, numbers, steps, weighted_sum, columns = program
    params = [Value(x) for x in numbers]
    assert_agrees(program_function(params, steps, weighted_sum), params, columns)


def test_a_value_used_many_times_collects_every_contribution():
    p = Value(0.3)

    def fn(x):
        h = x * p
        return h * h + h.tanh() * h + (h + h + h).relu() - h / (h * h + 1.0) + h ** 3

    assert_agrees(fn, [p], [np.linspace(-2.0, 2.0, 9)])


# --- the moons MLP ----------------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ["relu", "tanh", "sigmoid"])
def test_the_moons_mlp_loss_agrees_and_its_layers_become_matrix_products(activation):
    model = MLP(2, [16, 16, 1], activation=activation, rng=random.Random(3))
    params = model.parameters()
    points, labels = moons(40, 0.1, 3)
    n = len(points)

    def loss(x, y, label):
        score = model([x, y])[0]
        return (1.0 - label * score).relu() * (1.0 / n) + l2_penalty(params, 1e-4) * (1.0 / n)

    columns = [np.array([p[0] for p in points]), np.array([p[1] for p in points]), np.array(labels, float)]
    compiled = assert_agrees(loss, params, columns)
    # Three layers, three matrix products (the last sum adds the L2 term to the hinge).
    matrix_sums = [i for i in compiled._instructions if isinstance(i, MatrixSum)]
    assert len(matrix_sums) == 4
    assert compiled.instruction_count < 20  # versus 1,7xx traced nodes


def test_parameters_are_read_at_every_call():
    p, q = Value(0.5), Value(-0.25)
    fn = lambda x: (x * p + q).tanh()  # noqa: E731
    compiled = chainrule.compile(fn, [p, q])
    xs = np.array([-1.0, 0.5, 2.0])
    compiled.value_and_grad(xs)
    p.data, q.data = 1.5, 0.75  # as an optimizer does
    values, grads = compiled.value_and_grad(xs)
    expected_values, expected_grads = eager_value_and_grad(fn, [p, q], [xs])
    np.testing.assert_allclose(values, expected_values, rtol=VALUE_TOLERANCE)
    np.testing.assert_allclose(grads, expected_grads, rtol=GRAD_TOLERANCE)
    assert values[0] == pytest.approx(math.tanh(-1.5 + 0.75), rel=1e-15)


def test_constants_are_fixed_at_compile_time_and_unlisted_leaves_get_no_gradient():
    p, c = Value(2.0), Value(3.0)
    compiled = chainrule.compile(lambda x: x * p + c, [p])
    c.data = 100.0  # not a parameter: a constant baked in when traced
    values, grads = compiled.value_and_grad(np.array([1.0, 2.0]))
    assert values.tolist() == [5.0, 7.0]
    assert grads.tolist() == [3.0]  # d/dp of (1 p + 3) + (2 p + 3)


def test_an_output_that_does_not_depend_on_the_example_is_repeated_and_its_gradient_counts_n_times():
    p = Value(3.0)
    values, grads = chainrule.compile(lambda x: p * p, [p]).value_and_grad(np.zeros(4))
    assert values.tolist() == [9.0] * 4
    assert grads.tolist() == [4 * 6.0]


def test_a_parameter_the_graph_does_not_reach_gets_zero():
    p, unused = Value(2.0), Value(5.0)
    values, grads = chainrule.compile(lambda x: x * p, [unused, p]).value_and_grad(np.array([1.0, 4.0]))
    assert values.tolist() == [2.0, 8.0]
    assert grads.tolist() == [0.0, 5.0]


# --- the tracing rule ----------------------------------------------------------------------------------

ROUND_TRIPS = {  # what the function does: what the message names
    "float(x)": (lambda x, p: Value(float(x)) * p, "float(x)"),
    "x.data": (lambda x, p: Value(x.data) * p, "reading x.data"),
    "x.item()": (lambda x, p: Value(x.item()) * p, "x.item()"),
    "if x > 0": (lambda x, p: x * p if x > 0 else -x * p, "comparing (x > y)"),
    "0 < x": (lambda x, p: x * p if 0 < x else p, "comparing (x > y)"),
    "bool(x)": (lambda x, p: x * p if bool(x) else p, "bool(x)"),
    "if x:": (lambda x, p: x * p if x else p, "bool(x)"),
    "math.tanh(x)": (lambda x, p: Value(math.tanh(x)) * p, "float(x)"),
    "max(x, 0)": (lambda x, p: max(x * p, Value(0.0)), "comparing (x < y)"),
    "setting .data": (lambda x, p: setattr(x, "data", 1.0) or x * p, "setting x.data"),
    "round(x)": (lambda x, p: Value(round(x)) * p, "round(x)"),
}


@pytest.mark.parametrize("what", ROUND_TRIPS)
def test_turning_a_placeholder_into_a_number_fails_with_a_clear_message(what):
    fn, named = ROUND_TRIPS[what]
    with pytest.raises(TracingError) as caught:
        chainrule.compile(fn, [Value(1.0)])
    message = str(caught.value)
    assert message.startswith(named) and "is not allowed on a traced value" in message
    assert "x.relu()" in message  # says what to write instead


def test_values_computed_from_a_placeholder_are_placeholders_too_even_through_nn():
    """chainrule.nn applies relu as Value.relu(v), on the class: that result must be traced too."""
    model = MLP(2, [3, 1], rng=random.Random(0))

    def peeks_at_a_hidden_value(x, y):
        hidden = model.layers[0]([x, y])
        if hidden[0].data > 0:  # control flow on an example's number
            return hidden[1]
        return hidden[2]

    with pytest.raises(TracingError, match=r"reading x\.data is not allowed"):
        chainrule.compile(peeks_at_a_hidden_value, model.parameters())


def test_the_rule_is_explained_in_the_message():
    with pytest.raises(TracingError) as caught:
        chainrule.compile(lambda x: Value(float(x)), [])
    message = str(caught.value)
    assert message.startswith("float(x) is not allowed on a traced value")
    assert "placeholders" in message and "no number yet" in message
    assert "replays the graph it records for every example" in message


def test_tracing_leaves_no_mode_behind_and_eager_code_still_works():
    with pytest.raises(TracingError):
        chainrule.compile(lambda x: Value(float(x)), [])
    a = Value(2.0)
    b = a * a
    b.backward()
    assert type(b) is Value and a.grad == 4.0 and float(b) == 4.0


def test_compile_records_the_graph_even_inside_no_grad_and_restores_the_mode():
    p = Value(3.0)
    with chainrule.no_grad():
        compiled = chainrule.compile(lambda x: x * p, [p])
        assert not chainrule.is_grad_enabled()
        assert (p * p).is_leaf()  # still no graph out here
    values, grads = compiled.value_and_grad(np.array([1.0, 2.0]))
    assert values.tolist() == [3.0, 6.0] and grads.tolist() == [3.0]
    assert chainrule.is_grad_enabled()


# --- bad input ---------------------------------------------------------------------------------------


def test_bad_uses_say_what_is_wrong_and_what_is_allowed():
    p = Value(1.0)
    compiled = chainrule.compile(lambda x, y: x * p + y, [p])
    with pytest.raises(TypeError, match="takes 2 columns"):
        compiled.value_and_grad(np.ones(3))
    with pytest.raises(ValueError, match=r"1-D, shape \(N,\)"):
        compiled.value_and_grad(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="same length"):
        compiled.value_and_grad(np.ones(3), np.ones(4))
    with pytest.raises(TypeError, match="column 1 must be numbers"):
        compiled.value_and_grad(np.ones(3), ["a", "b", "c"])
    with pytest.raises(TypeError, match=r"must return one Value, not list \(pick one element"):
        chainrule.compile(lambda x: [x * p], [p])
    with pytest.raises(ValueError, match="leaf Values"):
        chainrule.compile(lambda x: x * p, [p * 2.0])
    with pytest.raises(ValueError, match="appears twice"):
        chainrule.compile(lambda x: x * p, [p, p])
    with pytest.raises(TypeError, match="list of Values"):
        chainrule.compile(lambda x: x * p, p)
    with pytest.raises(TypeError, match="n_inputs="):
        chainrule.compile(lambda *xs: xs[0] * p, [p])
    values, grads = chainrule.compile(lambda *xs: xs[0] * xs[1] * p, [p], n_inputs=2).value_and_grad(
        [2.0], [3.0])
    assert values.tolist() == [6.0] and grads.tolist() == [6.0]


def test_an_empty_batch_gives_empty_values_and_zero_gradients():
    p = Value(1.0)
    values, grads = chainrule.compile(lambda x: x * p + p * p, [p]).value_and_grad(np.array([]))
    assert values.shape == (0,) and grads.tolist() == [0.0]


def test_import_chainrule_works_without_numpy_and_compile_says_what_is_missing():
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import chainrule\n"
        "x = chainrule.Value(2.0); y = (x * x).tanh(); y.backward(); assert x.grad > 0\n"
        "try:\n"
        "    chainrule.compile(lambda v: v * x, [x])\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "chainrule.compile needs NumPy" in result.stdout and "pip install numpy" in result.stdout
