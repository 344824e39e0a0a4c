"""micrograd's `nn` on the drop-in `Value`: Module, Neuron, Layer, MLP.

Same construction and shapes as micrograd, so the same seed gives the same model and the same numbers:
weights come from the global `random` (uniform in [-1, 1], one neuron after another, inputs in order),
each bias starts at 0, a neuron sums b + w1 x1 + ... + wn xn from the left, a layer of width 1 returns
its one Value rather than a list, and every layer but the last applies relu.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from chainrule.micrograd.engine import Value

__all__ = ["Module", "Neuron", "Layer", "MLP"]


class Module:
    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        return []


class Neuron(Module):
    def __init__(self, nin: int, nonlin: bool = True) -> None:
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin

    def __call__(self, x: Sequence[Any]) -> Value:
        act = self.b
        for weight, xi in zip(self.w, x):
            act = act + weight * xi
        return act.relu() if self.nonlin else act

    def parameters(self) -> list[Value]:
        return [*self.w, self.b]

    def __repr__(self) -> str:
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    def __init__(self, nin: int, nout: int, **neuron_options: Any) -> None:
        self.neurons = [Neuron(nin, **neuron_options) for _ in range(nout)]

    def __call__(self, x: Sequence[Any]) -> Value | list[Value]:
        outs = [neuron(x) for neuron in self.neurons]
        return outs[0] if len(outs) == 1 else outs

    def parameters(self) -> list[Value]:
        return [p for neuron in self.neurons for p in neuron.parameters()]

    def __repr__(self) -> str:
        return "Layer of [" + ", ".join(map(str, self.neurons)) + "]"


class MLP(Module):
    def __init__(self, nin: int, nouts: Sequence[int]) -> None:
        widths = [nin, *nouts]
        last = len(nouts) - 1
        self.layers = [Layer(widths[i], widths[i + 1], nonlin=i != last) for i in range(len(nouts))]

    def __call__(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return "MLP of [" + ", ".join(map(str, self.layers)) + "]"
