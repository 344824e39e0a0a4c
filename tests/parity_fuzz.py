"""Random expression DAGs built twice, with chainrule and with PyTorch float64 (shared by the parity test)."""

from __future__ import annotations

import math
import random
from typing import Callable

import torch
import torch.autograd.forward_ad as fwd

import chainrule
from chainrule import Value, modes, topological_order
from chainrule.commands.graph import torch_function
from chainrule.engine import reverse_sweep
from chainrule.ops import (
    functions,
    safe_cos,
    safe_exp,
    safe_log,
    safe_log1p,
    safe_sin,
    safe_sqrt,
    softplus,
    softplus_slope,
)

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, 1e-200, 1e200, -1e300, 1.7976931348623157e308,
           math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -2.5, 3.0, 710.0, -745.0]
POWERS = [0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -2.0, -0.5, 1.5, -3.0, 2.5]
CONSTANTS = [2.0, -0.5, 0.0, -0.0, 1e-310, 1e308, math.inf]
# Every one-input op of the table called by name (chainrule.ops.functions), so that a new op is fuzzed
# against its PyTorch function (Op.torch) without a list to update here; each has its C library twin in LIBM.
FUNCTIONS = functions(1)
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
LIBM = {"exp": safe_exp, "log": safe_log, "tanh": math.tanh, "sin": safe_sin, "cos": safe_cos, "sqrt": safe_sqrt,
        "log1p": safe_log1p, "softplus": softplus, "erf": math.erf, "atan": math.atan}
TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)  # as PyTorch's erf backward computes it


def _tensor(x: float) -> torch.Tensor:
    return torch.tensor(x, dtype=torch.float64)


class _LibmKernel(torch.autograd.Function):
    """An op of LIBM with the value from the C library (Python's math, as chainrule) and PyTorch's own
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
        if ctx.name in PYTORCH_SLOPES:
            return PYTORCH_SLOPES[ctx.name](grad, x, out), None
        return grad * (1 - out * out), None


def _libm_exp(x: torch.Tensor) -> torch.Tensor:
    return _tensor(safe_exp(x.item()))


def _softplus_slope(g: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """PyTorch's softplus_backward (beta 1, threshold 20) with the C library's exp."""
    if x.item() > 20.0:
        return g
    z = _libm_exp(x)
    return g * z / (z + 1)


#: PyTorch's derivative formulas of the newer ops, (g, x, out) -> g times the slope, with the C library's values.
PYTORCH_SLOPES = {
    "sqrt": lambda g, x, out: g / (2 * out),
    "log1p": lambda g, x, out: g / (x + 1),
    "softplus": lambda g, x, out: _softplus_slope(g, x),
    "erf": lambda g, x, out: TWO_OVER_ROOT_PI * _libm_exp(-(x * x)) * g,
    "atan": lambda g, x, out: g / (x * x + 1),
}


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
    """An op of LIBM with the C library's value and PyTorch's tangent formula (the "kernels" twin)."""
    primal, tangent = _dual_parts(a)
    out = _tensor(LIBM[name](primal.item()))
    if tangent is None:
        return out
    if name in PYTORCH_SLOPES:
        return _dual(out, PYTORCH_SLOPES[name](tangent, primal, out))
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


# --- second order: chainrule.hessian (forward-over-reverse) against torch.func.hessian ----------------------


class _LibmKernel2(torch.autograd.Function):
    """An op of LIBM with the C library's value, differentiable again in both modes with PyTorch's
    own formulas (its backward calls this function again for the value it needs): the second-order twin."""

    @staticmethod
    def forward(ctx, x, name):
        ctx.name = name
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return _tensor(LIBM[name](x.item()))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _libm_slope(ctx.name, x, grad), None

    @staticmethod
    def jvp(ctx, x_t, _):
        (x,) = ctx.saved_tensors
        return _libm_slope(ctx.name, fwd.unpack_dual(x).primal if isinstance(x, torch.Tensor) else x, x_t)


def _libm_slope(name: str, x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """PyTorch's derivative formula for the kernel, g the incoming gradient (or tangent), with the C library's
    values wherever the formula needs the kernel again."""
    if name == "exp":
        return g * _LibmKernel2.apply(x, "exp")
    if name == "log":
        return g.div(x)
    if name == "tanh":
        return torch.ops.aten.tanh_backward(g, _LibmKernel2.apply(x, "tanh"))
    if name == "sin":
        return g * _LibmKernel2.apply(x, "cos")
    if name == "sqrt":
        return g / (2 * _LibmKernel2.apply(x, "sqrt"))
    if name == "log1p":
        return g / (x + 1)
    if name == "atan":
        return g / (x * x + 1)
    if name == "erf":
        return TWO_OVER_ROOT_PI * _LibmKernel2.apply(-(x * x), "exp") * g
    if name == "softplus":  # softplus_backward: g itself past the threshold
        z = _LibmKernel2.apply(x, "exp")
        return torch.where(x > 20.0, g, g * z / (z + 1))
    return g * -_LibmKernel2.apply(x, "sin")


SECOND_ORDER_VARIANTS = {
    "c / x": VARIANTS["c / x"],
    "x ** k": VARIANTS["x ** k"],
    "kernels": {name: (lambda a, name=name: _LibmKernel2.apply(a, name)) for name in LIBM},
}


def torch_hessian(leaves, steps) -> list[float]:
    """torch.func.hessian of the graph with respect to every leaf, row by row."""
    n = len(leaves)
    found = torch.func.hessian(lambda *xs: run(xs, steps, lambda t: t, TORCH_UNARY, BINARY_OPS)[0],
                               argnums=tuple(range(n)))(*map(_tensor, leaves))
    return [found[i][j].item() for i in range(n) for j in range(n)]


def torch_hessian_twin(leaves, steps, variants: tuple[str, ...] = ()) -> list[float]:
    """The same, forward-over-reverse written out with PyTorch's dual tensors over torch.autograd.grad
    (what torch.func.hessian runs, one column per leaf), with the named SECOND_ORDER_VARIANTS' replacements."""
    unary, binary = dict(TORCH_UNARY), dict(BINARY_OPS)
    for name in variants:
        for op, fn in SECOND_ORDER_VARIANTS[name].items():
            (unary if op in unary else binary)[op] = fn
    if "kernels" in variants and "derivative formulas" in variants:
        unary.update(_BOTH)
    if "x ** k" in variants and "derivative formulas" in variants:
        binary["powk"] = lambda a, b, c: _rule("powk|tensor", a, _tensor(c))
    n = len(leaves)
    columns = [forward_over_reverse(leaves, steps, [1.0 if i == j else 0.0 for i in range(n)], unary, binary)
               for j in range(n)]
    return [columns[j][i] for i in range(n) for j in range(n)]


def forward_over_reverse(leaves, steps, direction, unary, binary) -> list[float]:
    """The Hessian times `direction`: PyTorch's dual tensors over torch.autograd.grad(create_graph=True)."""
    found = [0.0] * len(leaves)
    with fwd.dual_level():
        xs = [_tensor(x).requires_grad_(True) for x in leaves]
        duals = [fwd.make_dual(x, _tensor(t)) for x, t in zip(xs, direction)]
        out, _, _ = run(duals, steps, lambda d: d, unary, binary)
        if out.requires_grad:
            for i, g in enumerate(torch.autograd.grad(out, duals, create_graph=True, allow_unused=True)):
                tangent = None if g is None else fwd.unpack_dual(g).tangent
                found[i] = 0.0 if tangent is None else tangent.item()
    return found


def torch_hvp_twin(leaves, steps, direction, variants: tuple[str, ...] = ()) -> list[float]:
    unary, binary = _with_variants(variants, SECOND_ORDER_VARIANTS)
    if "kernels" in variants and "derivative formulas" in variants:
        unary.update(_BOTH)
    return forward_over_reverse(leaves, steps, direction, unary, binary)


def chainrule_hessian(leaves, steps) -> list[float]:
    n = len(leaves)
    found = chainrule.hessian(lambda *xs: run(xs, steps, lambda v: v, CHAINRULE_UNARY, BINARY_OPS)[0],
                              argnums=tuple(range(n)))(*leaves)
    return [found[i][j] for i in range(n) for j in range(n)]


def chainrule_hessian_in_creation_order(leaves, steps) -> list[float]:
    """chainrule.hessian with its reverse sweeps run over the nodes newest first, in the order they were made
    (PyTorch's order), where chainrule walks its own topological order: the summation order witness."""
    import chainrule.engine as engine

    made: dict = {}
    walk = engine.topological_order

    def in_creation_order(root, leaves=True, reset_grads=False):
        return sorted(walk(root, leaves, reset_grads), key=lambda node: made.get(node, -1))

    engine.topological_order = in_creation_order
    try:
        with modes.observe_nodes(lambda node: made.setdefault(node, len(made))):
            return chainrule_hessian(leaves, steps)
    finally:
        engine.topological_order = walk


class _ChainruleRule(torch.autograd.Function):
    """div, pow, sigmoid or tanh with PyTorch's value and chainrule's derivative: the op table's pullback,
    written in plain PyTorch ops (this function again wherever the pullback divides or takes a power), so
    that PyTorch differentiates it by the chain rule as chainrule does, instead of its own hand-written
    second-order formulas (sigmoid_backward's, tanh_backward's, pow's and div's): the "derivative formulas"
    twin."""

    @staticmethod
    def forward(ctx, a, b, name, constants):
        ctx.name, ctx.constants = name, constants
        ctx.save_for_backward(a, b)
        ctx.save_for_forward(a, b)
        return _RULE_VALUES[name](a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        da, db = _chainrule_pullback(ctx.name, g, a, b, ctx.needs_input_grad[:2])
        return da, db, None, None

    @staticmethod
    def jvp(ctx, ta, tb, *_):
        a, b = (fwd.unpack_dual(x).primal for x in ctx.saved_tensors)
        total = None
        for k, t in enumerate((ta, tb)):
            if t is None or ctx.constants[k]:  # a constant has no tangent: no term (not 0 x ...)
                continue
            term = _chainrule_pullback(ctx.name, t, a, b)[k]
            if term is not None:
                total = term if total is None else total + term
        return total


_RULE_VALUES = {
    "div": lambda a, b: a / b, "pow": lambda a, b: torch.pow(a, b), "sigmoid": lambda a, b: TORCH_UNARY["sigmoid"](a),
    "tanh": lambda a, b: TORCH_UNARY["tanh"](a), "log": lambda a, b: TORCH_UNARY["log"](a),
    "powk": lambda a, b: torch.pow(a, b.item()), "powk|tensor": lambda a, b: torch.pow(a, b),
    # with the "kernels" twin as well: the C library's values
    "tanh|libm": lambda a, b: _tensor(math.tanh(a.item())), "log|libm": lambda a, b: _tensor(safe_log(a.item())),
    # the newer ops, whose backward formulas PyTorch differentiates as written (softplus's by a formula of its own)
    **{name: (lambda a, b, name=name: TORCH_UNARY[name](a)) for name in ("sqrt", "log1p", "softplus", "erf", "atan")},
    **{f"{name}|libm": (lambda a, b, name=name: _tensor(LIBM[name](a.item())))
       for name in ("sqrt", "log1p", "softplus", "erf", "atan")},
    "softplus_slope": lambda a, b: _tensor(softplus_slope(a.item())),
}


def _rule(name: str, a, b=None):
    b = _tensor(0.0) if b is None else b
    constants = tuple(not x.requires_grad and fwd.unpack_dual(x).tangent is None for x in (a, b))
    return _ChainruleRule.apply(a, b, name, constants)


def _chainrule_pullback(name: str, g, a, b, needed=(True, True)) -> tuple:
    """ops.py's pullbacks (their float forms, masks as where()), in PyTorch ops; an input that needs no
    gradient (a constant) gets none computed, as chainrule's forward mode gives a constant no tangent."""
    zero = _tensor(0.0)
    if name == "div":
        return (_rule("div", g, b) if needed[0] else None,
                -g * _rule("div", _rule("div", a, b), b) if needed[1] else None)
    if name == "pow":
        out = _rule("pow", a, b)
        da = torch.where(b == 0.0, zero, g * (b * _rule("pow", a, b - 1.0))) if needed[0] else None
        db = g * torch.where((a == 0.0) & (b >= 0.0), zero, out * torch.log(a)) if needed[1] else None
        return da, db
    base, libm = name.partition("|")[0], "|libm" in name
    if base in ("sqrt", "log1p", "atan"):  # the table's div, by a Value
        return _rule("div", g, {"sqrt": lambda: 2.0 * _rule(name, a), "log1p": lambda: a + 1.0,
                                "atan": lambda: a * a + 1.0}[base]()), None
    if base == "erf":
        return TWO_OVER_ROOT_PI * (_LibmKernel2.apply(-(a * a), "exp") if libm else torch.exp(-(a * a))) * g, None
    if base == "softplus":  # through softplus's slope, itself an op of the table
        return g * _rule("softplus_slope", a), None
    if base == "softplus_slope":  # sigmoid's slope, 0 from the threshold on
        sigmoid = _rule("sigmoid", a)
        return g * (1.0 - sigmoid) * sigmoid * (20.0 > a).double(), None
    if name.startswith("log"):
        return _rule("div", g, a), None
    if name.startswith("powk"):  # a constant exponent b: masked at 0, the inner power by the C library's rule
        k = b.item()
        return (torch.where(b == 0.0, zero, g * (k * _rule("powk|tensor", a, _tensor(k - 1.0)))), None)
    out = _rule(name, a)
    if name == "sigmoid":
        return g * (1.0 - out) * out, None
    return g * (1.0 - out * out), None


SECOND_ORDER_VARIANTS["derivative formulas"] = {
    "div": lambda a, b, c: _rule("div", a, b), "div_c": lambda a, b, c: _rule("div", a, _tensor(c)),
    "c_div": lambda a, b, c: _rule("div", _tensor(c), a),
    "pow": lambda a, b, c: _rule("pow", a, b), "c_pow": lambda a, b, c: _rule("pow", _tensor(c), a),
    "sigmoid": lambda a: _rule("sigmoid", a), "tanh": lambda a: _rule("tanh", a), "log": lambda a: _rule("log", a),
    "powk": lambda a, b, c: _rule("powk", a, _tensor(c)),
    **{name: (lambda a, name=name: _rule(name, a)) for name in ("sqrt", "log1p", "softplus", "erf", "atan")},
}
# Both twins at once: the C library's values under chainrule's derivatives.
_BOTH = {name: (lambda a, name=name: _rule(f"{name}|libm", a))
         for name in ("tanh", "log", "sqrt", "log1p", "softplus", "erf", "atan")}


# --- vjp, jacrev, jacfwd: functions of every leaf with two outputs -----------------------------------------


def two_outputs(xs, steps, make, unary, binary) -> tuple:
    """The graph's output and a node made halfway (a leaf, for a short graph): a function with two outputs."""
    out, _, values = run(xs, steps, make, unary, binary)
    return out, values[len(values) // 2]


def _chainrule_two(steps):
    return lambda *xs: two_outputs(xs, steps, lambda v: v, CHAINRULE_UNARY, BINARY_OPS)


def _torch_two(steps, unary=None, binary=None):
    return lambda *xs: two_outputs(xs, steps, lambda t: t, unary or TORCH_UNARY, binary or BINARY_OPS)


def _with_variants(variants, table):
    unary, binary = dict(TORCH_UNARY), dict(BINARY_OPS)
    for name in variants:
        for op, fn in table[name].items():
            (unary if op in unary else binary)[op] = fn
    return unary, binary


def chainrule_vjp(leaves, steps, cotangents) -> list[float]:
    """[both outputs, then cotangents . d outputs / d leaf for each leaf] from chainrule.vjp."""
    outputs, vjp_fn = chainrule.vjp(_chainrule_two(steps), *leaves)
    return [*outputs, *vjp_fn(tuple(cotangents))]


def torch_vjp(leaves, steps, cotangents) -> list[float]:
    outputs, vjp_fn = torch.func.vjp(_torch_two(steps), *map(_tensor, leaves))
    return [o.item() for o in outputs] + [g.item() for g in vjp_fn(tuple(map(_tensor, cotangents)))]


def torch_vjp_twin(leaves, steps, cotangents, variants: tuple[str, ...] = (), seed_zeros: bool = True) -> list[float]:
    """The same from PyTorch's backward() with the named VARIANTS (0 for an unreached leaf). torch.func
    seeds every output, a zero cotangent too; `seed_zeros=False` leaves those outputs out, as chainrule's
    jacrev does for the other outputs of a row."""
    unary, binary = _with_variants(variants, VARIANTS)
    xs = [torch_leaf(x) for x in leaves]
    outputs = _torch_two(steps, unary, binary)(*xs)
    pairs = [(o, _tensor(c)) for o, c in zip(outputs, cotangents) if o.requires_grad and (seed_zeros or c != 0.0)]
    if pairs:
        torch.autograd.backward([o for o, _ in pairs], [c for _, c in pairs])
    return [o.item() for o in outputs] + [0.0 if x.grad is None else x.grad.item() for x in xs]


def chainrule_vjp_in_creation_order(leaves, steps, cotangents, seed_zeros: bool = True) -> list[float]:
    """chainrule's numbers with the reverse sweep run newest node first (PyTorch's order)."""
    xs = [Value(x) for x in leaves]
    made: dict = {}
    with modes.observe_nodes(lambda node: made.setdefault(node, len(made))):
        outputs = _chainrule_two(steps)(*xs)
    grads: dict = {}
    seeded = [(o, c) for o, c in zip(outputs, cotangents) if seed_zeros or c != 0.0]
    for o, c in seeded:
        grads[o] = grads.get(o, 0.0) + c
    reached = {n for o, _ in seeded for n in topological_order(o)}
    reverse_sweep(sorted((n for n in reached if not n.is_leaf()), key=made.get), grads)
    return [o.data for o in outputs] + [grads.get(x, 0.0) for x in xs]


def chainrule_jacobian(transform, leaves, steps) -> list[float]:
    """d output k / d leaf j, output by output, from chainrule.jacfwd or chainrule.jacrev."""
    found = transform(_chainrule_two(steps), argnums=tuple(range(len(leaves))))(*leaves)
    return [entry for row in found for entry in row]


def torch_jacobian(transform, leaves, steps) -> list[float]:
    """The same from torch.func.jacfwd or torch.func.jacrev."""
    found = transform(_torch_two(steps), argnums=tuple(range(len(leaves))))(*map(_tensor, leaves))
    return [entry.item() for row in found for entry in row]


def torch_jacfwd_twin(leaves, steps, variants: tuple[str, ...] = ()) -> list[float]:
    """The same, one dual-tensor sweep per leaf, with the named FORWARD_VARIANTS."""
    unary, binary = _with_variants(variants, FORWARD_VARIANTS)
    n = len(leaves)
    columns = []
    for j in range(n):
        with fwd.dual_level():
            duals = [fwd.make_dual(_tensor(x), _tensor(1.0 if i == j else 0.0)) for i, x in enumerate(leaves)]
            outputs = _torch_two(steps, unary, binary)(*duals)
            column = []
            for o in outputs:
                tangent = fwd.unpack_dual(o).tangent
                column.append(0.0 if tangent is None else tangent.item())
        columns.append(column)
    return [columns[j][k] for k in range(2) for j in range(n)]

