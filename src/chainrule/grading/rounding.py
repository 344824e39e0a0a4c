"""The graded digits: every number a test compares is rounded here, once, the same for every language.

Python's round(x, 9) ties to even; the learner's runtimes only report raw floats, so nothing else rounds.
"""

from __future__ import annotations

import math
from typing import Sequence

from chainrule.number_text import format_number

__all__ = ["DECIMALS", "ROUNDING_EDGE", "near_rounding_edge", "graded", "same_graded", "all_same_graded", "graded_text", "graded_texts"]

DECIMALS = 9


def graded(x: float) -> float:
    """x rounded to the graded digits (9 decimal places), with -0.0 shown as 0.0."""
    return round(x, DECIMALS) + 0.0


# How near a half-way point of the graded digits a number may lie, relative to its size: there a learner's sum
# in another order (a last bit apart) rounds the other way. Drawn hidden cases keep clear of it.
ROUNDING_EDGE = 1e-12


def near_rounding_edge(x: float) -> bool:
    scaled = x * 10 ** DECIMALS
    return bool(abs(scaled - math.floor(scaled) - 0.5) * 10.0 ** -DECIMALS < ROUNDING_EDGE * max(1.0, abs(x)))


def same_graded(x: float, y: float) -> bool:
    return graded(x) == graded(y)


def all_same_graded(got: Sequence[float], want: Sequence[float]) -> bool:
    return len(got) == len(want) and all(same_graded(g, w) for g, w in zip(got, want))


# How a runtime names a number JSON cannot hold, and the words every text of chainrule uses for it.
_SPECIAL_TEXT = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}


def graded_text(x: object) -> str:
    """One entry of a test's numbers as the learner reads it: a number with its graded digits ("0.657600983",
    "1", "-inf"), NaN or an infinity by name, anything else as the learner's language wrote it."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return format_number(graded(float(x)), DECIMALS)
    if isinstance(x, str):
        return _SPECIAL_TEXT.get(x, x)
    return "null" if x is None else str(x)


def graded_texts(values: object) -> str | None:
    """A test's list of numbers as one text, "[-1.5, 1, 0.5]" (None when there is no list)."""
    if values is None:
        return None
    if not isinstance(values, (list, tuple)):
        return graded_text(values)
    return "[" + ", ".join(graded_text(x) for x in values) + "]"
