"""The graded digits: every number a test compares is rounded here, once, the same for every language.

Python's round(x, 9) ties to even; the learner's runtimes only report raw floats, so nothing else rounds.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["DECIMALS", "graded", "same_graded", "all_same_graded"]

DECIMALS = 9


def graded(x: float) -> float:
    """x rounded to the graded digits (9 decimal places), with -0.0 shown as 0.0."""
    return round(x, DECIMALS) + 0.0


def same_graded(x: float, y: float) -> bool:
    return graded(x) == graded(y)


def all_same_graded(got: Sequence[float], want: Sequence[float]) -> bool:
    return len(got) == len(want) and all(same_graded(g, w) for g, w in zip(got, want))
