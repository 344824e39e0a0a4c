"""Transforms nested over closures, as torch.func nests them: an inner transform whose function captures an outer
one's variable gives a result the outer one differentiates through, for grad, vjp, jvp, jacrev, jacfwd, hessian
and hvp in any order (issue 45 item 1). Expected numbers from torch.func in float64, on a generated set of closure
cases: pairs and triples of transforms over random small functions of the captured variables and their own, at
generic points (no 0, inf or nan, where the classes of tests/test_transforms_torch.py live). Every case must equal
torch.func's number within TOLERANCE (rounding: the two libraries sum the chain rule's terms in other orders)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from chainrule import Value, func
from reference_torch import needs_torch, torch

TOLERANCE = 1e-9  # relative, with the same absolute floor: |ours - theirs| <= 1e-9 * (1 + |theirs|)
FORMS = ("grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "hvp")


def T(x: float):
    return torch.tensor(x, dtype=torch.float64)


# --- random small functions: the same tree evaluated on chainrule Values and on torch tensors ---------------

UNARY = {
    "tanh": (lambda a: a.tanh(), lambda a: torch.tanh(a)),
    "sin": (lambda a: a.sin(), lambda a: torch.sin(a)),
    "cos": (lambda a: a.cos(), lambda a: torch.cos(a)),
    "exp_tanh": (lambda a: a.tanh().exp(), lambda a: torch.exp(torch.tanh(a))),
    "sigmoid": (lambda a: a.sigmoid(), lambda a: torch.sigmoid(a)),
    "square": (lambda a: a ** 2, lambda a: a ** 2),
    "cube": (lambda a: a ** 3, lambda a: a ** 3),
    "log1_sq": (lambda a: (1.0 + a * a).log(), lambda a: torch.log(1.0 + a * a)),
    "abs": (lambda a: abs(a), lambda a: torch.abs(a)),
    "relu": (lambda a: a.relu(), lambda a: torch.relu(a)),
    "neg": (lambda a: -a, lambda a: -a),
}
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / (1.5 + b * b), lambda a, b: a / (1.5 + b * b)),
    "logaddexp": (lambda a, b: a.logaddexp(b), lambda a, b: torch.logaddexp(a, b)),
}


def random_tree(rng: random.Random, variables: int, depth: int):
    """A random expression over variables 0..variables-1, each variable appearing at least once."""
    def grow(d: int):
        if d == 0 or rng.random() < 0.25:
            return ("var", rng.randrange(variables))
        if rng.random() < 0.45:
            return (rng.choice(sorted(UNARY)), grow(d - 1))
        return (rng.choice(sorted(BINARY)), grow(d - 1), grow(d - 1))
    tree = grow(depth)
    for k in range(variables):  # every variable in: a sum keeps each one's derivative alive
        tree = ("add", tree, ("mul", ("var", k), grow(1)))
    return tree


def evaluate(tree, values, side: int):
    kind = tree[0]
    if kind == "var":
        return values[tree[1]]
    if kind in UNARY:
        return UNARY[kind][side](evaluate(tree[1], values, side))
    return BINARY[kind][side](evaluate(tree[1], values, side), evaluate(tree[2], values, side))


# --- the transforms, each used the same way on both sides: a scalar function in, a scalar out ---------------


def apply_form(form: str, g, point: float, side: int):
    """form applied to g at point, reduced to one scalar the same way for chainrule (side 0) and torch (1)."""
    if side == 0:
        if form == "grad":
            return func.grad(g)(point)
        if form == "vjp":
            return func.vjp(g, point)[1](1.3)[0]
        if form == "jvp":
            return func.jvp(g, (point,), (0.7,))[1]
        if form == "jacrev":
            return func.jacrev(g)(point)
        if form == "jacfwd":
            return func.jacfwd(g)(point)
        if form == "hessian":
            return func.hessian(g)(point)
        return func.hvp(g, (point,), (0.7,))[1][0]
    tf, p = torch.func, T(point)
    if form == "grad":
        return tf.grad(g)(p)
    if form == "vjp":
        return tf.vjp(g, p)[1](T(1.3))[0]
    if form == "jvp":
        return tf.jvp(g, (p,), (T(0.7),))[1]
    if form == "jacrev":
        return tf.jacrev(g)(p)
    if form == "jacfwd":
        return tf.jacfwd(g)(p)
    if form == "hessian":
        return tf.hessian(g)(p)
    return tf.jvp(tf.grad(g), (p,), (T(0.7),))[1]  # torch.func's forward-over-reverse hvp


def nested(forms, trees, points, side: int):
    """forms[0] of h_0 at points[0], where h_i(v_i) = trees[i](v_0..v_i, forms[i+1] of h_{i+1} at points[i+1])
    and the last h is trees[-1](v_0..v_last): each inner function closes over the outer variables."""
    def level(i: int, outer: tuple):
        def h(v):
            values = (*outer, v)
            if i + 1 < len(forms):
                values = (*values, apply_form(forms[i + 1], level(i + 1, values), points[i + 1], side))
            return evaluate(trees[i], values, side)
        return h
    return apply_form(forms[0], level(0, ()), points[0], side)


def closure_cases():
    rng = random.Random(45)
    cases = []
    for forms in itertools.product(FORMS, repeat=2):  # every ordered pair, twice
        for _ in range(2):
            cases.append(forms)
    triples = list(itertools.product(FORMS, repeat=3))
    cases += rng.sample(triples, 60)
    out = []
    for n, forms in enumerate(cases):
        trees = [random_tree(rng, i + 1 + (i + 1 < len(forms)), 3) for i in range(len(forms))]
        points = [round(rng.uniform(-1.5, 1.5), 3) for _ in forms]
        out.append((n, forms, trees, points))
    return out


CASES = closure_cases()


@needs_torch
@pytest.mark.parametrize("chunk", range(4))
def test_closure_cases_equal_torch_func(chunk: int) -> None:
    failures = []
    for n, forms, trees, points in CASES[chunk::4]:
        ours = nested(forms, trees, points, 0)
        assert isinstance(ours, float), f"case {n} {forms}: the outermost transform returned {ours!r}"
        theirs = float(nested(forms, trees, points, 1))
        if not (abs(ours - theirs) <= TOLERANCE * (1 + abs(theirs)) or (math.isnan(ours) and math.isnan(theirs))):
            failures.append(f"case {n} {' of '.join(forms)} at {points}: ours {ours!r}, torch.func {theirs!r}")
    assert not failures, f"{len(failures)} of {len(CASES[chunk::4])} differ:\n" + "\n".join(failures[:20])


@needs_torch
def test_the_generated_set_covers_every_ordered_pair_and_triples() -> None:
    pairs = {forms for _, forms, _, _ in CASES if len(forms) == 2}
    assert pairs == set(itertools.product(FORMS, repeat=2))
    assert sum(len(forms) == 3 for _, forms, _, _ in CASES) >= 60


# --- the issue's own cases, with numbers derived by hand and checked against torch.func ----------------------


def test_gradient_of_a_gradient_over_a_closure() -> None:
    # d/dx [x * d/dy (x y)] = d/dx x^2 = 2x = 6 at x = 3
    assert func.grad(lambda x: x * func.grad(lambda y: x * y)(2.0))(3.0) == 6.0


def test_hyperparameter_gradient_through_an_inner_gradient() -> None:
    # d/dw [(w - 1)^2 + lam w^2] = 2(w - 1) + 2 lam w, whose slope in lam is 2w = 1 at w = 0.5
    assert func.grad(lambda lam: func.grad(lambda w: (w - 1) ** 2 + lam * w ** 2)(0.5))(0.1) == 1.0


def test_forward_transforms_over_a_closure_give_numbers() -> None:
    inner = lambda x: func.grad(lambda y: x * x * y)(2.0)  # noqa: E731  (= x^2)
    assert func.jvp(inner, (3.0,), (1.0,)) == (9.0, 6.0)
    assert func.jacfwd(inner)(3.0) == 6.0
    assert func.hessian(inner)(3.0) == 2.0
    assert func.grad(lambda x: func.jvp(lambda y: x * y * y, (2.0,), (1.0,))[1])(3.0) == 4.0  # d/dx 2xy = 2y


@needs_torch
def test_reverse_over_reverse_through_abs_at_zero_is_torch_funcs_zero() -> None:
    f = lambda x, z: abs(z ** 0.5 - x)  # noqa: E731
    theirs = torch.func.grad(torch.func.grad(lambda x, z: torch.abs(z ** 0.5 - x)), argnums=1)(T(-1.0), T(0.0))
    assert func.grad(func.grad(f), argnums=1)(-1.0, 0.0) == float(theirs) == 0.0


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd", "hessian"])
def test_argnums_naming_an_argument_twice_is_refused(transform: str) -> None:
    with pytest.raises(ValueError, match=r"argnums names argument 0 more than once"):
        getattr(func, transform)(lambda x, y: x * y, argnums=(0, 0))(1.0, 2.0)
    with pytest.raises(ValueError, match=r"argnums names argument 1 more than once"):
        getattr(func, transform)(lambda x, y: x * y, argnums=(1, -1))(1.0, 2.0)


BAD_INPUT_CALLS = {
    "grad": lambda: func.grad(lambda x: x * x)("3"),
    "grad_and_value": lambda: func.grad_and_value(lambda x: x * x)("3"),
    "vjp": lambda: func.vjp(lambda x: x * x, "3"),
    "jvp": lambda: func.jvp(lambda x: x * x, ("3",), (1.0,)),
    "jacrev": lambda: func.jacrev(lambda x: x * x)("3"),
    "jacfwd": lambda: func.jacfwd(lambda x: x * x)("3"),
    "hessian": lambda: func.hessian(lambda x: x * x)("3"),
    "hvp": lambda: func.hvp(lambda x: x * x, ("3",), (1.0,)),
}


@pytest.mark.parametrize("transform", BAD_INPUT_CALLS)
def test_a_bad_input_is_named_with_the_transform_it_was_given_to(transform: str) -> None:
    # hessian is jacfwd of jacrev and hvp a jvp of a grad; the error still names what the user called.
    with pytest.raises(TypeError, match=rf"^an input of {transform} must be a real number, not str$"):
        BAD_INPUT_CALLS[transform]()


def test_arguments_not_differentiated_reach_the_function_as_given() -> None:
    # As torch.func and JAX pass an argument they do not differentiate: unchanged. A Value given keeps Value
    # semantics (x / 0 is inf); a float keeps Python's (docs/engine.md, "Composable transforms").
    seen = []

    def f(x, scale):
        seen.append(type(scale))
        return x / scale

    assert float(func.grad(f)(1.0, Value(0.0))) == math.inf
    assert func.grad(f)(1.0, 2.0) == 0.5
    assert seen == [Value, float]


@needs_torch
@pytest.mark.parametrize("name, ours, theirs", [
    ("a quotient by 0", lambda x, y: x * (y / 0.0), lambda x, y: x * (y / 0.0)),
    ("a negative base to a fractional power", lambda x, y: x * y ** (1 / 3), lambda x, y: x * y ** (1 / 3)),
    ("both, through tanh", lambda x, y: (x * y ** 0.5).tanh() + y / 0.0,
     lambda x, y: torch.tanh(x * y ** 0.5) + y / 0.0),
])
def test_an_argument_not_differentiated_has_torch_funcs_semantics_given_as_torch_would_get_it(name, ours, theirs) -> None:
    # A Value where torch.func gets a 0-d tensor: the op table's inf and nan, as the tensor's. A float where
    # torch.func gets a Python float: Python's own arithmetic in both (ZeroDivisionError, a complex number).
    for x, y in [(2.0, -8.0), (0.5, 1.0), (-1.5, -0.25)]:
        expected = torch.func.grad_and_value(theirs)(T(x), T(y))
        got = func.grad_and_value(ours)(x, Value(y))
        for a, b in zip((got[0], got[1]), expected):
            assert float(a) == pytest.approx(float(b), rel=1e-13, nan_ok=True), (name, x, y)
    for function in (ours, theirs):
        transform = func.grad if function is ours else torch.func.grad
        point = 2.0 if function is ours else T(2.0)
        if "quotient" in name:
            with pytest.raises(ZeroDivisionError):
                transform(function)(point, 1.0)
        elif "power" in name:
            with pytest.raises((TypeError, RuntimeError)):  # complex: chainrule refuses the operand, torch the output
                transform(function)(point, -8.0)
