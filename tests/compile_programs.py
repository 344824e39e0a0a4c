"""Random straight-line programs of the engine's ops, and the numbers fed to them (extremes included), for the
tests that compare compiled and eager results (test_compile_fuzz, test_compile_gradient_order), and the eager
engine's values and gradients over a batch, example by example (test_compile, test_compile_wide,
test_compile_relu, test_compile_tanh), and PyTorch's for an MLP's hinge loss (test_compile_relu, test_compile_tanh)."""

from __future__ import annotations

import math
import random

import numpy as np

from chainrule import Value

BATCH = 12


EXTREMES = [0.0, -0.0, 5e-324, -1e-310, 1e-300, 1e300, -1e300, 1.7e308, -1.7e308, math.inf, -math.inf, math.nan,
            709.5, 710.0, -710.0, -720.0, -745.0, -746.0, 745.5, 1.0, -1.0]


def number(rng: random.Random) -> float:
    if rng.random() < 0.45:
        return rng.choice(EXTREMES)
    return rng.uniform(-3.0, 3.0) * 10.0 ** rng.choice([0, 0, 0, 1, 2])


UNARY = {
    "neg": lambda a: -a, "tanh": lambda a: a.tanh(), "exp": lambda a: a.exp(), "log": lambda a: a.log(),
    "sigmoid": lambda a: a.sigmoid(), "relu": lambda a: a.relu(), "abs": lambda a: abs(a),
    "square": lambda a: a ** 2, "sqrt": lambda a: a ** 0.5, "inverse": lambda a: a ** -1,
    "sin": lambda a: a.sin(), "cos": lambda a: a.cos(),
}


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b, "logaddexp": lambda a, b: a.logaddexp(b),
}


def random_program(rng: random.Random):
    """(n_inputs, parameter values, steps): each step names what it does and which earlier values it reads."""
    n_inputs, n_params = rng.randint(1, 3), rng.randint(1, 4)
    steps = []
    for i in range(rng.randint(1, 12)):
        pool = n_inputs + n_params + i
        kind = rng.random()
        if kind < 0.35:
            steps.append(("unary", rng.choice(sorted(UNARY)), [rng.randrange(pool)]))
        elif kind < 0.7:
            steps.append(("binary", rng.choice(sorted(BINARY)), [rng.randrange(pool), rng.randrange(pool)]))
        elif kind < 0.85:  # a layer's sum: b + w1 * v1 + w2 * v2 + ..., weights and bias from the parameters
            width = rng.randint(1, 5)
            steps.append(("layer", None, [rng.randrange(pool) for _ in range(2 * width + 1)]))
        else:  # a sum mixing uniform and varying terms in the written order, e.g. p + x + q * q
            steps.append(("mixed", None, [rng.randrange(pool) for _ in range(rng.randint(2, 5))]))
    return n_inputs, [number(rng) for _ in range(n_params)], steps


def program_function(n_inputs, params, steps):
    def fn(*inputs):
        pool = [*inputs, *params]
        for kind, name, reads in steps:
            values = [pool[k] for k in reads]
            if kind == "unary":
                pool.append(UNARY[name](values[0]))
            elif kind == "binary":
                pool.append(BINARY[name](values[0], values[1]))
            elif kind == "layer":
                total = values[0]
                for w, v in zip(values[1::2], values[2::2]):
                    total = total + w * v
                pool.append(total)
            else:
                total = values[0]
                for k, v in enumerate(values[1:]):
                    total = total + (v * v if k % 2 else v)
                pool.append(total)
        return pool[-1] + 0.0  # an op node even when the program is empty
    return fn


def kind(x: float) -> str:
    if x == 0.0:
        return "zero"  # 0 against a subnormal is a class of its own: log gives -inf against -745
    return "nan" if math.isnan(x) else "+inf" if x == math.inf else "-inf" if x == -math.inf else "finite"


def eager_value_and_grad(fn, params, columns):
    """fn's value per example and d(sum of values)/d(param), by the eager engine, example by example (the
    parameters' gradients accumulate over the examples' backward() calls)."""
    for p in params:
        p.grad = 0.0
    values = []
    for row in zip(*columns):
        out = fn(*[Value(float(v)) for v in row])
        out.backward()
        values.append(out.data)
    return np.array(values), np.array([p.grad for p in params])


def torch_mlp_value_and_grad(theta, columns, n, sizes, activation):
    """An MLP(2, sizes)'s hinge loss (a 1/n share a point) in PyTorch, batched: per layer a matrix of the
    neurons' weights plus their biases (each neuron's weights then its bias in theta, as `MLP` lists them),
    `activation` ("relu" or "tanh") between the layers. Values per point and the gradient of their sum."""
    from reference_torch import torch

    flat = torch.tensor(theta, requires_grad=True)
    x, y, label = (torch.tensor(c) for c in columns)
    h, start = torch.stack([x, y], dim=-1), 0
    for i, (k, j) in enumerate(zip([2, *sizes], sizes)):
        block = flat[start:start + j * (k + 1)].reshape(j, k + 1)
        start += j * (k + 1)
        h = torch.addmm(block[:, k], h, block[:, :k].T)
        if i < len(sizes) - 1:
            h = getattr(torch, activation)(h)
    values = torch.relu(1.0 - label * h[:, 0]) / n
    values.sum().backward()
    return values.detach().numpy(), flat.grad.numpy()
