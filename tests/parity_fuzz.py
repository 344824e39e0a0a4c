"""Random expression DAGs built twice, with chainrule and with PyTorch float64 (shared by the parity test)."""

from __future__ import annotations

import math
import random

import torch

from chainrule import Value, topological_order
from chainrule.ops import safe_exp, safe_log

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 1e-200, 1e200, -1e300, 1.7976931348623157e308,
           math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -2.5, 3.0, 710.0, -745.0]
POWERS = [0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -2.0, -0.5, 1.5, -3.0, 2.5]
CONSTANTS = [2.0, -0.5, 0.0, -0.0, 1e-310, 1e308, math.inf]
UNARY = ["neg", "exp", "log", "tanh", "sigmoid", "relu", "abs", "powk"]
BINARY = ["add", "sub", "mul", "div", "pow"]
WITH_CONSTANT = ["add_c", "c_sub", "mul_c", "div_c", "c_div", "c_pow"]


def leaf_value(rng: random.Random) -> float:
    if rng.random() < 0.5:
        return rng.choice(SPECIAL)
    return rng.choice([rng.uniform(-3, 3), rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)])


def recipe(rng: random.Random) -> tuple[list[float], list[tuple]]:
    """Leaf values and steps (op, i, j, constant); i and j pick earlier nodes by index modulo their count."""
    leaves = [leaf_value(rng) for _ in range(rng.randint(1, 4))]
    steps = []
    for _ in range(rng.randint(1, 10)):
        op = rng.choice(UNARY + BINARY + WITH_CONSTANT)
        constant = rng.choice(POWERS) if op == "powk" else rng.choice(CONSTANTS)
        steps.append((op, rng.randrange(1000), rng.randrange(1000), constant))
    return leaves, steps


def run(leaves, steps, make, unary, binary):
    """Build the graph with `make` (a leaf constructor) and the op functions; return output, leaves and
    every node in the order it was made."""
    values = [make(x) for x in leaves]
    inputs = list(values)
    for op, i, j, c in steps:
        a, b = values[i % len(values)], values[j % len(values)]
        values.append(unary[op](a) if op in unary else binary[op](a, b, c))
    out = values[-1]
    if len(values) > 2:  # a second use of an earlier node, so sums of routes occur
        out = out + values[len(values) // 2]
        values.append(out)
    return out, inputs, values


BINARY_OPS = {
    "add": lambda a, b, c: a + b, "sub": lambda a, b, c: a - b, "mul": lambda a, b, c: a * b,
    "div": lambda a, b, c: a / b, "pow": lambda a, b, c: a ** b, "powk": lambda a, b, c: a ** c,
    "add_c": lambda a, b, c: a + c, "c_sub": lambda a, b, c: c - a, "mul_c": lambda a, b, c: a * c,
    "div_c": lambda a, b, c: a / c, "c_div": lambda a, b, c: c / a, "c_pow": lambda a, b, c: c ** a,
}
CHAINRULE_UNARY = {
    "neg": lambda v: -v, "exp": Value.exp, "log": Value.log, "tanh": Value.tanh, "sigmoid": Value.sigmoid,
    "relu": Value.relu, "abs": abs,
}
TORCH_UNARY = {
    "neg": lambda v: -v, "exp": torch.exp, "log": torch.log, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "relu": torch.relu, "abs": torch.abs,
}


def _tensor(x: float) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64)


class _LibmKernel(torch.autograd.Function):
    """exp, log or tanh with the value from the C library (Python's math, as chainrule) and PyTorch's own
    backward formula: the twin that tells kernel rounding apart from everything else."""

    @staticmethod
    def forward(ctx, x, name):
        value = {"exp": safe_exp, "log": safe_log, "tanh": math.tanh}[name](x.item())
        out = _tensor(value)
        ctx.name = name
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if ctx.name == "exp":
            return grad * out, None
        if ctx.name == "log":
            return grad / x, None
        return grad * (1 - out * out), None


#: PyTorch twins with one of its own choices replaced by chainrule's, each naming a class of differences.
VARIANTS = {
    "c / x": {"c_div": lambda a, b, c: torch.div(_tensor(c), a)},  # PyTorch: a.reciprocal() * c
    "x ** k": {"powk": lambda a, b, c: torch.pow(a, _tensor(c))},  # PyTorch: x*x*x, sqrt, rsqrt... for some k
    "kernels": {name: (lambda a, name=name: _LibmKernel.apply(a, name)) for name in ("exp", "log", "tanh")},
}


def torch_leaf(x: float) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


def chainrule_results(leaves, steps) -> list[float]:
    """[output value, d out / d leaf for each leaf] from chainrule."""
    out, inputs, _ = run(leaves, steps, Value, CHAINRULE_UNARY, BINARY_OPS)
    out.backward()
    return [out.data] + [v.grad for v in inputs]


def chainrule_in_creation_order(leaves, steps) -> list[float]:
    """chainrule's values and op table, but the gradients summed in PyTorch's order: its engine runs the
    nodes newest first, where chainrule walks its own topological order."""
    out, inputs, made = run(leaves, steps, Value, CHAINRULE_UNARY, BINARY_OPS)
    reached = {id(node) for node in topological_order(out)}
    grads = {id(out): 1.0}
    for node in reversed(made):
        if node.is_leaf() or id(node) not in reached:
            continue
        prev = node.inputs
        for child, contribution in zip(prev, node._op.pullback(grads.get(id(node), 0.0), *[p.data for p in prev], node.data)):
            if contribution is not None:
                grads[id(child)] = grads.get(id(child), 0.0) + contribution
    return [out.data] + [grads.get(id(v), 0.0) for v in inputs]


def torch_results(leaves, steps, variants: tuple[str, ...] = ()) -> list[float]:
    """The same from PyTorch float64, with the named variants' replacements (0 for an unreached leaf)."""
    unary, binary = dict(TORCH_UNARY), dict(BINARY_OPS)
    for name in variants:
        for op, fn in VARIANTS[name].items():
            (unary if op in unary else binary)[op] = fn
    out, inputs, _ = run(leaves, steps, torch_leaf, unary, binary)
    if out.requires_grad:
        out.backward()
    return [out.item()] + [0.0 if v.grad is None else v.grad.item() for v in inputs]
