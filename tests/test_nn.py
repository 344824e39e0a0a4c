"""chainrule.nn: shapes, seeding, validation, and the forward/backward pass against torch.nn (float64)."""

from __future__ import annotations

import math
import random

import pytest

from chainrule import Value
from chainrule.nn import ACTIVATIONS, MLP, Layer, Module, Neuron
from reference_torch import needs_torch, torch  # noqa: E402


def torch_activation(name: str):
    return {"tanh": torch.tanh, "relu": torch.relu, "sigmoid": torch.sigmoid, "linear": lambda z: z}[name]


def torch_copy(model: MLP) -> list[tuple[torch.nn.Linear, object]]:
    """torch.nn.Linear layers (float64) holding the same weights as `model`, with their activations."""
    layers = []
    for layer in model.layers:
        linear = torch.nn.Linear(layer.nin, layer.nout, dtype=torch.float64)
        with torch.no_grad():
            for j, neuron in enumerate(layer.neurons):
                for k, w in enumerate(neuron.w):
                    linear.weight[j, k] = w.data
                linear.bias[j] = neuron.b.data
        layers.append((linear, torch_activation(layer.activation)))
    return layers


def torch_forward(layers, x: torch.Tensor) -> torch.Tensor:
    for linear, activate in layers:
        x = activate(linear(x))
    return x


def torch_grads_in_chainrule_order(layers) -> list[float]:
    grads = []
    for linear, _ in layers:
        for j in range(linear.out_features):
            grads.extend(linear.weight.grad[j].tolist())
            grads.append(linear.bias.grad[j].item())
    return grads


def test_output_shapes_are_lists_whatever_the_width():
    rng = random.Random(0)
    assert isinstance(Neuron(3, rng=rng)([1.0, 2.0, 3.0]), Value)
    out = Layer(3, 1, rng=rng)([1.0, 2.0, 3.0])
    assert isinstance(out, list) and len(out) == 1 and isinstance(out[0], Value)
    assert len(Layer(3, 4, rng=rng)([1.0, 2.0, 3.0])) == 4
    assert len(MLP(2, [1], rng=rng)([0.5, -0.5])) == 1
    assert len(MLP(2, [4, 3], rng=rng)([0.5, -0.5])) == 3
    single = MLP(2, [16, 16, 1], rng=rng)([Value(0.1), Value(0.2)])
    assert isinstance(single, list) and len(single) == 1


def test_parameter_count_and_order():
    model = MLP(2, [16, 16, 1], rng=random.Random(0))
    # (2 + 1) * 16 + (16 + 1) * 16 + (16 + 1) * 1, worked out by hand
    assert model.num_parameters() == 337
    first = model.layers[0].neurons[0]
    assert model.parameters()[:3] == [first.w[0], first.w[1], first.b]
    assert all(isinstance(p, Value) for p in model.parameters())
    assert isinstance(model, Module)


def test_seeded_initialisation_is_reproducible_and_leaves_global_random_alone():
    state = random.getstate()
    a = MLP(2, [8, 1], rng=random.Random(42))
    b = MLP(2, [8, 1], rng=random.Random(42))
    c = MLP(2, [8, 1], rng=random.Random(43))
    assert random.getstate() == state
    assert [p.data for p in a.parameters()] == [p.data for p in b.parameters()]
    assert [p.data for p in a.parameters()] != [p.data for p in c.parameters()]


def test_initialisation_ranges():
    uniform = MLP(4, [50], rng=random.Random(1))
    weights = [w.data for n in uniform.layers[0].neurons for w in n.w]
    assert all(-1.0 <= w <= 1.0 for w in weights) and max(weights) > 0.9 and min(weights) < -0.9
    assert all(n.b.data == 0.0 for n in uniform.layers[0].neurons)
    torchlike = MLP(16, [50], rng=random.Random(1), init="torch")
    values = [p.data for p in torchlike.parameters()]
    assert all(abs(v) <= 0.25 for v in values) and max(values) > 0.2  # bound 1/sqrt(16)
    assert any(n.b.data != 0.0 for n in torchlike.layers[0].neurons)


def test_zero_grad_clears_every_parameter():
    model = MLP(2, [3, 1], rng=random.Random(0))
    out = model([1.0, -2.0])[0]
    (out * out).backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_neuron_matches_hand_computation(activation):
    neuron = Neuron(2, activation=activation, rng=random.Random(0))
    neuron.w[0].data, neuron.w[1].data, neuron.b.data = 0.5, -1.5, 0.25
    z = 0.25 + 0.5 * 2.0 + (-1.5) * 1.0  # = -0.25
    expected = {"tanh": math.tanh(z), "relu": 0.0, "sigmoid": 1 / (1 + math.exp(-z)), "linear": z}
    assert neuron([2.0, 1.0]).data == pytest.approx(expected[activation], abs=1e-15)


@needs_torch
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_mlp_forward_and_gradients_match_torch(activation):
    rng = random.Random(7)
    model = MLP(3, [5, 4, 2], activation=activation, output_activation="linear", rng=rng, init="torch")
    points = [[rng.uniform(-2, 2) for _ in range(3)] for _ in range(6)]
    outputs = [model(x) for x in points]
    loss = sum((o[0] * 0.7 - o[1] * o[1] for o in outputs), Value(0.0))
    model.zero_grad()
    loss.backward()

    layers = torch_copy(model)
    t_out = torch_forward(layers, torch.tensor(points, dtype=torch.float64))
    t_loss = (t_out[:, 0] * 0.7 - t_out[:, 1] ** 2).sum()
    t_loss.backward()
    expected_outputs = [v for row in t_out.tolist() for v in row]
    assert [v.data for o in outputs for v in o] == pytest.approx(expected_outputs, rel=1e-12, abs=1e-12)
    assert loss.data == pytest.approx(t_loss.item(), rel=1e-12)
    ours = [p.grad for p in model.parameters()]
    assert ours == pytest.approx(torch_grads_in_chainrule_order(layers), rel=1e-10, abs=1e-12)
    predicted = [v for row in model.predict(points) for v in row]
    assert predicted == pytest.approx(expected_outputs, rel=1e-12, abs=1e-12)


def test_output_activation_applies_to_last_layer_only():
    model = MLP(2, [3, 2], activation="tanh", output_activation="sigmoid", rng=random.Random(3))
    assert [layer.activation for layer in model.layers] == ["tanh", "sigmoid"]
    out = model([5.0, -4.0])
    assert all(0.0 < v.data < 1.0 for v in out)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: MLP(2, [], rng=random.Random(0)), "at least one layer"),
        (lambda: MLP(2, [16, 0, 1]), "positive whole number"),
        (lambda: MLP(0, [1]), "positive whole number"),
        (lambda: MLP(2, [1.5]), "positive whole number"),
        (lambda: Neuron(2, activation="gelu"), "unknown activation"),
        (lambda: Layer(2, 2, init="xavier"), "unknown init"),
    ],
)
def test_bad_construction_says_what_is_allowed(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_rng_must_be_a_random_instance():
    with pytest.raises(TypeError, match="random.Random"):
        MLP(2, [1], rng=42)


def test_wrong_number_of_inputs_is_a_clear_error():
    model = MLP(2, [3, 1], rng=random.Random(0))
    with pytest.raises(ValueError, match="takes 2 inputs, got 3"):
        model([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="takes 2 inputs, got 1"):
        model.predict([[1.0]])
