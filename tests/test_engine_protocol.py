"""Python's operator protocol, numbers outside the float range, micrograd's constructor, and gradients
through tiny denominators (compared with PyTorch float64)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from chainrule import Value, grad  # noqa: E402
from reference_torch import needs_torch, torch  # noqa: E402


def t(x: float) -> "torch.Tensor":
    return torch.tensor(x, dtype=torch.float64, requires_grad=True)


@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "**"])
def test_value_and_numpy_array_work_in_either_order(symbol: str) -> None:
    apply = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
             "/": lambda a, b: a / b, "**": lambda a, b: a ** b}[symbol]
    array = np.array([0.5, 2.0, 3.0])
    for left, right in ((Value(1.5), array), (array, Value(1.5))):
        result = apply(left, right)  # Value * ndarray raised TypeError before
        assert isinstance(result, np.ndarray) and result.dtype == object
        expected = apply(1.5, array) if left.__class__ is Value else apply(array, 1.5)
        assert [v.data for v in result] == pytest.approx(list(expected), rel=1e-15)


class Meters:
    """A user type that knows how to combine with a Value, from either side."""

    def __init__(self, amount):
        self.amount = amount

    def __mul__(self, other):
        return Meters(other * self.amount)

    __rmul__ = __mul__

    def __radd__(self, other):
        return Meters(other + self.amount)


def test_a_user_types_reflected_method_gets_its_turn() -> None:
    product = Value(3.0) * Meters(2.0)
    assert isinstance(product, Meters) and product.amount.data == 6.0
    total = Value(1.0) + Meters(2.5)
    assert isinstance(total, Meters) and total.amount.data == 3.5


def test_when_both_sides_refuse_the_message_names_both_types() -> None:
    class Opaque:
        pass

    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*: 'Value' and 'Opaque'"):
        Value(1.0) * Opaque()
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for -: 'Opaque' and 'Value'"):
        Opaque() - Value(1.0)


def test_numbers_of_every_real_kind_combine() -> None:
    v = Value(2.0)
    assert (v * Fraction(1, 4)).data == 0.5
    assert (v + np.float32(0.5)).data == 2.5
    assert (np.int64(3) * v).data == 6.0
    assert (True + v).data == 3.0
    assert (v ** np.int8(3)).data == 8.0


@pytest.mark.parametrize("make", [lambda: Value(10**400), lambda: Value(1.0) + 10**400,
                                  lambda: 10**400 * Value(1.0), lambda: Value(2.0) ** -(10**400),
                                  lambda: Value(Fraction(10**400, 3))])
def test_a_number_beyond_the_float_range_says_so(make) -> None:
    with pytest.raises(OverflowError, match="too large for a float") as error:
        make()
    assert "not int" not in str(error.value)


def test_a_gigantic_int_still_gets_a_readable_message() -> None:
    with pytest.raises(OverflowError, match=r"about 10\^5000 is|about 10\^5000\)"):
        Value(10**5000)


@pytest.mark.parametrize("call", [lambda a, b: Value(5.0, (a, b), "+"), lambda a, b: Value(5.0, (a,)),
                                  lambda a, b: Value(5.0, (), "")])
def test_micrograds_constructor_is_refused_with_a_pointer_to_the_drop_in(call) -> None:
    a, b = Value(2.0), Value(3.0)
    with pytest.raises(TypeError, match=r"chainrule\.micrograd"):
        call(a, b)


# --- tiny denominators: the gradient is divided, never multiplied by an overflowing 1/x --------------------

TINY = [
    ("log of the smallest subnormal, times 0", lambda v: v.log() * 0.0, 5e-324),
    ("log of a subnormal, times a small number", lambda v: v.log() * 1e-300, 1e-310),
    ("a constant over a subnormal, times 0", lambda v: 2.0 / v * 0.0, 5e-324),
    ("a subnormal over itself", lambda v: v / v, 5e-324),
    ("a subnormal divided into 1, times a tiny", lambda v: (1.0 / v) * 1e-300, 1e-310),
]


@needs_torch
@pytest.mark.parametrize("name,f,x", TINY, ids=[row[0] for row in TINY])
def test_tiny_denominators_give_pytorchs_gradient(name, f, x) -> None:
    tx = t(x)
    f(tx).backward()
    expected = tx.grad.item()
    a = Value(x)
    f(a).backward()
    b = Value(x)
    (functional,) = grad(f(b), [b])
    c = Value(x)
    (differentiable,) = grad(f(c), [c], create_graph=True)
    for ours in (a.grad, functional.data, differentiable.data):
        assert ours == expected or (math.isnan(ours) and math.isnan(expected)), (name, ours, expected)
