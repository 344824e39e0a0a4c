"""Random expression DAGs built twice, with chainrule and with PyTorch float64 (shared by the parity test)."""

from __future__ import annotations

import math
import random
from typing import Callable

import torch
import torch.autograd.forward_ad as fwd

import chainrule
from chainrule import Value, topological_order
from chainrule.engine import reverse_sweep
from chainrule.commands.graph import torch_function
from chainrule.ops import functions, safe_cos, safe_exp, safe_log, safe_sin

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 1e-200, 1e200, -1e300, 1.7976931348623157e308,
           math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -2.5, 3.0, 710.0, -745.0]
POWERS = [0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -2.0, -0.5, 1.5, -3.0, 2.5]
CONSTANTS = [2.0, -0.5, 0.0, -0.0, 1e-310, 1e308, math.inf]
# Every one-input op of the table called by name (chainrule.ops.functions), so that a new op is fuzzed
# against its PyTorch function (Op.torch) without a list to update here.
FUNCTIONS = {name: op for name, op in functions(1).items()}
UNARY = ["neg", *FUNCTIONS, "powk"]
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
CHAINRULE_UNARY = {"neg": lambda v: -v, **{name: getattr(Value, name) for name in FUNCTIONS}}
TORCH_UNARY = {"neg": lambda v: -v, **{name: torch_function(torch, op) for name, op in FUNCTIONS.items()}}
LIBM = {"exp": safe_exp, "log": safe_log, "tanh": math.tanh, "sin": safe_sin, "cos": safe_cos}


def _tensor(x: float) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64)


class _LibmKernel(torch.autograd.Function):
    """exp, log or tanh with the value from the C library (Python's math, as chainrule) and PyTorch's own
    backward formula: the twin that tells kernel rounding apart from everything else."""

    @staticmethod
    def forward(ctx, x, name):
        value = LIBM[name](x.item())
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
        if ctx.name == "sin":  # PyTorch's formula, grad * cos(x), with the C library's cos
            return grad * _tensor(safe_cos(x.item())), None
        if ctx.name == "cos":  # grad * -sin(x)
            return grad * -_tensor(safe_sin(x.item())), None
        return grad * (1 - out * out), None


#: PyTorch twins with one of its own choices replaced by chainrule's, each naming a class of differences.
VARIANTS = {
    "c / x": {"c_div": lambda a, b, c: torch.div(_tensor(c), a)},  # PyTorch: a.reciprocal() * c
    "x ** k": {"powk": lambda a, b, c: torch.pow(a, _tensor(c))},  # PyTorch: x*x*x, sqrt, rsqrt... for some k
    "kernels": {name: (lambda a, name=name: _LibmKernel.apply(a, name)) for name in LIBM},
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
    reached = set(topological_order(out))
    grads = {out: 1.0}
    reverse_sweep([node for node in made if not node.is_leaf() and node in reached], grads)
    return [out.data] + [grads.get(v, 0.0) for v in inputs]


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


# --- comparing results: bit for bit, and the table of classes the docs show ------------------------------


def same(a: float, b: float) -> bool:
    """Bit-identical as float64 results (every nan counts as the same)."""
    if a != a or b != b:
        return a != a and b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def same_up_to_zero_sign(a: float, b: float) -> bool:
    return same(a, b) or (a == 0.0 and b == 0.0)


def count_classes(counts, examples: dict, seed: int, ours: list[float], theirs: list[float], kinds: tuple[str, str],
                  explain: Callable[[int, float], str]) -> None:
    """Add each result of one graph to counts[(class, kind)]: bit-identical, sign of zero, or the class
    `explain(position, ours)` names by its witness; keep the first (seed, position, ours, theirs) per key."""
    for k, (a, b) in enumerate(zip(ours, theirs)):
        if same(a, b):
            name = "bit-identical"
        elif a == 0.0 and b == 0.0:
            name = "sign of zero"
        else:
            name = explain(k, a)
        key = (name, kinds[0] if k == 0 else kinds[1])
        counts[key] += 1
        examples.setdefault(key, (seed, k, a, b))


def table(counts, columns: dict[str, str]) -> str:
    """The markdown table of counts[(class, kind)], one column per kind (columns: kind -> title), classes
    by size with bit-identical first, and a total row."""
    names = sorted({name for name, _ in counts}, key=lambda n: (n != "bit-identical", -sum(
        c for (m, _), c in counts.items() if m == n), n))
    rows = ["| class | " + " | ".join(columns.values()) + " |", "|---" * (len(columns) + 1) + "|"]
    for name in names:
        rows.append(f"| {name} | " + " | ".join(str(counts[(name, kind)]) for kind in columns) + " |")
    totals = [str(sum(c for (_, k), c in counts.items() if k == kind)) for kind in columns]
    rows.append("| total | " + " | ".join(totals) + " |")
    return "\n".join(rows)


# --- forward mode: chainrule.jvp against torch.func.jvp ------------------------------------------------


def seeds(rng: random.Random, count: int) -> list[float]:
    """A tangent per leaf: mostly ordinary numbers, sometimes 0 or 1 (a zero tangent is a real zero)."""
    return [rng.choice([rng.uniform(-2, 2), rng.uniform(-2, 2), 0.0, 1.0]) for _ in range(count)]


def chainrule_jvp(leaves, steps, tangents) -> list[float]:
    """[output value, its tangent] from chainrule.jvp."""
    value, tangent = chainrule.jvp(lambda *xs: run(xs, steps, lambda v: v, CHAINRULE_UNARY, BINARY_OPS)[0],
                                   leaves, tangents)
    return [value, tangent]


def torch_jvp(leaves, steps, tangents) -> list[float]:
    """The same from torch.func.jvp in float64."""
    value, tangent = torch.func.jvp(lambda *xs: run(xs, steps, lambda t: t, TORCH_UNARY, BINARY_OPS)[0],
                                    tuple(map(_tensor, leaves)), tuple(map(_tensor, tangents)))
    return [value.item(), tangent.item()]


def _dual_parts(x):
    primal, tangent = fwd.unpack_dual(x) if isinstance(x, torch.Tensor) else (_tensor(x), None)
    return primal, tangent


def _dual(primal: torch.Tensor, tangent) -> torch.Tensor:
    return primal if tangent is None else fwd.make_dual(primal, tangent)


def _libm_kernel_dual(a, name: str) -> torch.Tensor:
    """exp, log or tanh with the C library's value and PyTorch's tangent formula (the "kernels" twin)."""
    primal, tangent = _dual_parts(a)
    out = _tensor(LIBM[name](primal.item()))
    if tangent is None:
        return out
    return _dual(out, {"exp": lambda: tangent * out, "log": lambda: tangent / primal,
                       "tanh": lambda: tangent * (1 - out * out),
                       "sin": lambda: tangent * _tensor(safe_cos(primal.item())),
                       "cos": lambda: tangent * -_tensor(safe_sin(primal.item()))}[name]())


def _div_dual_as_chainrule(a, b) -> torch.Tensor:
    """a / b with PyTorch's value and chainrule's tangent: ta / b - tb * (out / b), the two pullbacks."""
    pa, ta = _dual_parts(a)
    pb, tb = _dual_parts(b)
    out = pa / pb
    tangent = None if ta is None else ta / pb
    if tb is not None:
        term = -tb * (out / pb)
        tangent = term if tangent is None else tangent + term
    return _dual(out, tangent)


#: Forward-mode twins of PyTorch, each with one choice replaced by chainrule's (as VARIANTS for reverse mode).
FORWARD_VARIANTS = {
    "c / x": VARIANTS["c / x"],
    "x ** k": VARIANTS["x ** k"],
    "kernels": {name: (lambda a, name=name: _libm_kernel_dual(a, name)) for name in LIBM},
    "division's tangent": {"div": lambda a, b, c: _div_dual_as_chainrule(a, b),
                           "div_c": lambda a, b, c: _div_dual_as_chainrule(a, c),
                           "c_div": lambda a, b, c: _div_dual_as_chainrule(c, a)},
}


def torch_forward_twin(leaves, steps, tangents, variants: tuple[str, ...] = ()) -> list[float]:
    """[value, tangent] from PyTorch's forward-mode AD (dual tensors, what torch.func.jvp runs), with the
    named FORWARD_VARIANTS' replacements."""
    unary, binary = dict(TORCH_UNARY), dict(BINARY_OPS)
    for name in variants:
        for op, fn in FORWARD_VARIANTS[name].items():
            (unary if op in unary else binary)[op] = fn
    with fwd.dual_level():
        duals = [fwd.make_dual(_tensor(x), _tensor(t)) for x, t in zip(leaves, tangents)]
        out, _, _ = run(duals, steps, lambda d: d, unary, binary)
        primal, tangent = fwd.unpack_dual(out)
        return [primal.item(), 0.0 if tangent is None else tangent.item()]
