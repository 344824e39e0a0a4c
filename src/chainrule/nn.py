"""Neural networks made of `Value`s: `Neuron`, `Layer` and `MLP`, all `Module`s.

A neuron computes ``out = f(w . x + b) = f(b + w1 x1 + ... + wn xn)`` with f one of the activations
``tanh``, ``relu``, ``sigmoid`` or ``linear`` (the identity).

Shapes are always the same kind of thing, whatever the width (unlike micrograd, whose layer of width
1 returns a bare Value instead of a list):

* ``Neuron(nin)(x)`` takes ``len(x) == nin`` inputs and returns one `Value`.
* ``Layer(nin, nout)(x)`` takes ``nin`` inputs and returns a ``list`` of ``nout`` Values
  (a list of one Value when ``nout == 1``).
* ``MLP(nin, [h1, ..., nout])(x)`` takes ``nin`` inputs and returns a ``list`` of ``nout`` Values;
  a scalar model's score is ``model(x)[0]``.

Inputs may be Values or plain numbers. Initialisation draws from a `random.Random` you pass in, never
from the global generator, so ``MLP(2, [16, 16, 1], rng=random.Random(0))`` is the same model every
time. ``init="uniform"`` (the default) draws weights from U(-1, 1) with zero biases, like micrograd;
``init="torch"`` draws weights and biases from U(-1/sqrt(nin), 1/sqrt(nin)), like ``torch.nn.Linear``.

The forward pass is written the plain way, ``sum((wi * xi for wi, xi in zip(w, x)), b)``: one
multiply and one add node per weight. Speed is the engine's job, not the model's.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Sequence

from chainrule.engine import Value
from chainrule.kernels import relu, stable_sigmoid

__all__ = ["ACTIVATIONS", "INITS", "Module", "Neuron", "Layer", "MLP"]

#: The activation functions a neuron can apply to ``w . x + b``.
ACTIVATIONS: tuple[str, ...] = ("tanh", "relu", "sigmoid", "linear")
#: The initialisation schemes: "uniform" (micrograd: w ~ U(-1, 1), b = 0) and "torch" (nn.Linear).
INITS: tuple[str, ...] = ("uniform", "torch")

# How each activation acts on a Value (None: the identity) and on a float (for `predict`).
_ON_VALUE: dict[str, Callable[[Value], Value] | None] = {
    "tanh": Value.tanh, "relu": Value.relu, "sigmoid": Value.sigmoid, "linear": None,
}
_ON_FLOAT: dict[str, Callable[[float], float] | None] = {
    "tanh": math.tanh, "relu": relu, "sigmoid": stable_sigmoid,
    "linear": None,
}


def _check_activation(activation: str) -> str:
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; choose one of {', '.join(ACTIVATIONS)}")
    return activation


def _check_width(n: object, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what} must be a positive whole number, not {n!r}")
    return n


def _check_rng(rng: random.Random | None) -> random.Random:
    if rng is None:
        return random.Random()  # fresh entropy; pass random.Random(seed) for a reproducible model
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random (e.g. random.Random(0)), not {type(rng).__name__}")
    return rng


class Module:
    """Anything with parameters: `parameters()` lists them, `zero_grad()` resets their gradients."""

    def parameters(self) -> list[Value]:
        return []

    def zero_grad(self) -> None:
        """Set every parameter's gradient to 0 (call it before each backward pass)."""
        for p in self.parameters():
            p.grad = 0.0

    def num_parameters(self) -> int:
        return len(self.parameters())


class Neuron(Module):
    """``f(w . x + b)``: ``nin`` weights, one bias and an activation f."""

    def __init__(
        self,
        nin: int,
        activation: str = "relu",
        rng: random.Random | None = None,
        init: str = "uniform",
    ) -> None:
        self.nin = _check_width(nin, "the number of inputs")
        self.activation = _check_activation(activation)
        rng = _check_rng(rng)
        if init == "uniform":
            self.w = [Value(rng.uniform(-1.0, 1.0)) for _ in range(nin)]
            self.b = Value(0.0)
        elif init == "torch":
            bound = 1.0 / math.sqrt(nin)
            self.w = [Value(rng.uniform(-bound, bound)) for _ in range(nin)]
            self.b = Value(rng.uniform(-bound, bound))
        else:
            raise ValueError(f"unknown init {init!r}; choose one of {', '.join(INITS)}")
        self._activate = _ON_VALUE[activation]

    def __call__(self, x: Sequence[Value | float]) -> Value:
        if len(x) != self.nin:
            raise ValueError(f"this neuron takes {self.nin} inputs, got {len(x)}")
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        activate = self._activate
        return act if activate is None else activate(act)

    def parameters(self) -> list[Value]:
        return [*self.w, self.b]

    def __repr__(self) -> str:
        return f"Neuron({self.nin}, activation={self.activation!r})"


class Layer(Module):
    """``nout`` neurons reading the same ``nin`` inputs; returns a list of ``nout`` Values."""

    def __init__(
        self,
        nin: int,
        nout: int,
        activation: str = "relu",
        rng: random.Random | None = None,
        init: str = "uniform",
    ) -> None:
        self.nin = _check_width(nin, "the number of inputs")
        self.nout = _check_width(nout, "the number of outputs")
        rng = _check_rng(rng)
        self.activation = _check_activation(activation)
        self.neurons = [Neuron(nin, activation, rng, init) for _ in range(nout)]

    def __call__(self, x: Sequence[Value | float]) -> list[Value]:
        return [neuron(x) for neuron in self.neurons]

    def parameters(self) -> list[Value]:
        return [p for neuron in self.neurons for p in neuron.parameters()]

    def __repr__(self) -> str:
        return f"Layer({self.nin}, {self.nout}, activation={self.activation!r})"


class MLP(Module):
    """A stack of layers: ``nin -> nouts[0] -> ... -> nouts[-1]``.

    Hidden layers use ``activation`` (default relu), the last layer ``output_activation`` (default
    linear, so the output is a raw score or logit). Calling it returns a list of ``nouts[-1]``
    Values. Parameters are ordered layer by layer, neuron by neuron, each neuron's weights then its
    bias (neuron j of a layer is row j of the matching ``torch.nn.Linear`` weight, plus bias[j]).
    """

    def __init__(
        self,
        nin: int,
        nouts: Sequence[int],
        activation: str = "relu",
        output_activation: str = "linear",
        rng: random.Random | None = None,
        init: str = "uniform",
    ) -> None:
        self.nin = _check_width(nin, "the number of inputs")
        nouts = list(nouts)
        if not nouts:
            raise ValueError("an MLP needs at least one layer size, e.g. [16, 16, 1]")
        for n in nouts:
            _check_width(n, "every layer size")
        self.sizes = [nin, *nouts]
        self.activation = _check_activation(activation)
        self.output_activation = _check_activation(output_activation)
        rng = _check_rng(rng)
        last = len(nouts) - 1
        self.layers = [
            Layer(self.sizes[i], self.sizes[i + 1], output_activation if i == last else activation, rng, init)
            for i in range(len(nouts))
        ]

    def __call__(self, x: Sequence[Value | float]) -> list[Value]:
        if len(x) != self.nin:
            raise ValueError(f"this MLP takes {self.nin} inputs, got {len(x)}")
        # Lift plain numbers once here, not once per neuron that reads them.
        out = [xi if isinstance(xi, Value) else Value(xi) for xi in x]
        for layer in self.layers:
            out = layer(out)
        return out

    def predict(self, points: Sequence[Sequence[float]]) -> list[list[float]]:
        """The same forward pass for many input points, on plain floats: no graph is built.

        For plots and evaluation; returns one list of ``nouts[-1]`` floats per point.
        """
        layers = [
            (
                [([w.data for w in n.w], n.b.data) for n in layer.neurons],
                _ON_FLOAT[layer.activation],
            )
            for layer in self.layers
        ]
        results = []
        for point in points:
            if len(point) != self.nin:
                raise ValueError(f"this MLP takes {self.nin} inputs, got {len(point)}")
            out = [float(xi) for xi in point]
            for neurons, activate in layers:
                sums = [sum([wi * xi for wi, xi in zip(w, out)], b) for w, b in neurons]
                out = sums if activate is None else [activate(s) for s in sums]
            results.append(out)
        return results

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return (
            f"MLP({self.nin}, {self.sizes[1:]}, activation={self.activation!r}, "
            f"output_activation={self.output_activation!r})"
        )
