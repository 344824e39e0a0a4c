"""Optimizers that update `Value` parameters in place from their `.grad`, with PyTorch's semantics.

Typical step::

    optimizer.zero_grad()
    loss = ...
    loss.backward()
    optimizer.step()

`SGD` follows ``torch.optim.SGD`` (g is the gradient, mu the momentum, tau the dampening)::

    g <- g + weight_decay * p
    b <- g                          on the first step
    b <- mu * b + (1 - tau) * g     afterwards
    g <- g + mu * b  (nesterov)  or  g <- b
    p <- p - lr * g

`Adam` follows ``torch.optim.Adam`` (t counts steps from 1)::

    g <- g + weight_decay * p       (or, with decoupled_weight_decay=True as in AdamW: p <- p (1 - lr wd))
    m <- m + (1 - beta1) (g - m)            i.e. beta1 m + (1 - beta1) g
    v <- beta2 v + (1 - beta2) g^2
    p <- p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

Note where eps sits: added after the bias-corrected square root, not inside it.
The learning rate is the attribute ``lr``; change it between steps for a schedule.
"""

from __future__ import annotations

import math
from typing import Iterable

from chainrule.engine import Value

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]


def _check_nonnegative(x: float, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not x >= 0.0 or not math.isfinite(x):
        raise ValueError(f"{what} must be a finite number >= 0, got {x!r}")
    return float(x)


class Optimizer:
    """Holds the parameters; `zero_grad()` resets their gradients, `step()` updates them."""

    def __init__(self, parameters: Iterable[Value], lr: float) -> None:
        params = list(parameters)
        if not params:
            raise ValueError("the optimizer got no parameters (pass model.parameters())")
        for p in params:
            if not isinstance(p, Value):
                raise TypeError(f"parameters must be Values, got {type(p).__name__}")
        if len({id(p) for p in params}) != len(params):
            raise ValueError("a parameter appears twice in the list; each must appear once")
        self.params = params
        self.lr = _check_nonnegative(lr, "the learning rate")

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = 0.0

    def step(self) -> None:  # pragma: no cover - every optimizer overrides it
        raise TypeError(f"{type(self).__name__} does not define step()")


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, dampening, Nesterov and weight decay."""

    def __init__(
        self,
        parameters: Iterable[Value],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        super().__init__(parameters, lr)
        self.momentum = _check_nonnegative(momentum, "momentum")
        self.dampening = float(dampening)
        self.weight_decay = _check_nonnegative(weight_decay, "weight_decay")
        if nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening = 0")
        self.nesterov = nesterov
        self.buffers: list[float | None] = [None] * len(self.params)

    def step(self) -> None:
        lr, mu, wd = self.lr, self.momentum, self.weight_decay
        keep = 1.0 - self.dampening
        buffers = self.buffers
        for i, p in enumerate(self.params):
            g = p.grad
            if wd != 0.0:
                g = g + wd * p.data
            if mu != 0.0:
                b = buffers[i]
                b = g if b is None else b * mu + keep * g
                buffers[i] = b
                g = g + mu * b if self.nesterov else b
            p.data = p.data - lr * g


class Adam(Optimizer):
    """Adam with PyTorch's bias correction and eps placement; AdamW with decoupled_weight_decay."""

    def __init__(
        self,
        parameters: Iterable[Value],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ) -> None:
        super().__init__(parameters, lr)
        beta1, beta2 = betas
        for name, beta in (("beta1", beta1), ("beta2", beta2)):
            if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 <= beta < 1.0:
                raise ValueError(f"{name} must lie in [0, 1), got {beta!r}")
        self.betas = (float(beta1), float(beta2))
        self.eps = _check_nonnegative(eps, "eps")
        self.weight_decay = _check_nonnegative(weight_decay, "weight_decay")
        self.decoupled_weight_decay = decoupled_weight_decay
        self.t = 0
        self.m = [0.0] * len(self.params)
        self.v = [0.0] * len(self.params)

    def step(self) -> None:
        self.t += 1
        lr, eps, wd = self.lr, self.eps, self.weight_decay
        beta1, beta2 = self.betas
        step_size = lr / (1.0 - beta1**self.t)
        bias_correction2_sqrt = (1.0 - beta2**self.t) ** 0.5
        weight1 = 1.0 - beta1
        m, v = self.m, self.v
        for i, p in enumerate(self.params):
            g = p.grad
            if wd != 0.0:
                if self.decoupled_weight_decay:
                    p.data = p.data * (1.0 - lr * wd)
                else:
                    g = g + wd * p.data
            # torch computes m with lerp, which picks its rounding by the size of the weight
            if weight1 < 0.5:
                m[i] = m[i] + weight1 * (g - m[i])
            else:
                m[i] = g - (g - m[i]) * (1.0 - weight1)
            v[i] = v[i] * beta2 + (1.0 - beta2) * g * g
            denominator = math.sqrt(v[i]) / bias_correction2_sqrt + eps
            p.data = p.data - step_size * (m[i] / denominator)


class AdamW(Adam):
    """Adam with weight decay applied to the weights directly (torch.optim.AdamW; default wd 0.01)."""

    def __init__(
        self,
        parameters: Iterable[Value],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        super().__init__(parameters, lr, betas, eps, weight_decay, decoupled_weight_decay=True)
