"""Hidden cases: fresh inputs drawn for every graded run, so an answer that only fits the shown cases fails.

An exercise.json may hold a rule for them:

    "hidden": {"count": 4, "draw": {"w": [-2, 2], "b": [-1, 1]}}

Hidden case k (1, 2, ...) copies a shown case (the shown cases taken at even steps, so N hidden cases
cover the shown ones as evenly as N allows) with every number inside each field named in "draw" replaced by a number drawn uniformly from that field's [low, high], rounded to
DECIMALS places; the other fields (labels, steps, node lists, ...) stay as shown. The grader picks the
seed of a run's draw (never the client) and records it with the result, so a regrade draws the same cases.
A draw the kind refuses (its case checks), that the engine cannot compute finitely, whose answer lies on
a rounding edge of the graded digits (rounding.near_rounding_edge), whose answers all round to 0, or that lands on a kink of the kind (`CaseKind.kink`, such as a
hinge's corner) is drawn again, up to REDRAWS times.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from chainrule.grading.json_objects import Case, JsonObject
from chainrule.grading.kinds.base import CaseError, CaseKind
from chainrule.grading.rounding import graded, near_rounding_edge

__all__ = ["DECIMALS", "HiddenRule", "MAX_HIDDEN", "draw_hidden", "hidden_name", "read_hidden_rule"]

MAX_HIDDEN = 12  # hidden cases per run: each runs in the sandbox beside the shown ones
DECIMALS = 6  # short enough to read once shown; long enough that answers seldom end on a rounding edge
REDRAWS = 50


@dataclass(frozen=True)
class HiddenRule:
    count: int
    draw: tuple[tuple[str, float, float], ...]  # (field, low, high)


def hidden_name(number: int) -> str:
    return f"hidden case {number}"


def _has_numbers(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, list) and bool(value) and all(_has_numbers(v) for v in value)


def read_hidden_rule(rule: object, shown: list[Case]) -> HiddenRule:
    """The "hidden" field of an exercise.json checked, or CaseError saying what is wrong and what is allowed."""
    if not isinstance(rule, dict) or set(rule) != {"count", "draw"}:
        raise CaseError('hidden must be {"count": N, "draw": {"field": [low, high], ...}}')
    count = rule["count"]
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_HIDDEN:
        raise CaseError(f"hidden count must be a whole number from 1 to {MAX_HIDDEN}, not {count!r}")
    draw = rule["draw"]
    if not isinstance(draw, dict) or not draw:
        raise CaseError('hidden draw must name at least one field: {"field": [low, high], ...}')
    ranges = []
    for name, span in draw.items():
        if (not isinstance(span, list) or len(span) != 2 or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in span)
                or not span[0] < span[1]):
            raise CaseError(f"hidden draw {name!r} must be [low, high] with finite numbers, low below high, not {span!r}")
        missing = [case.get("name") for case in shown if not _has_numbers(case.get(name))]
        if missing:
            raise CaseError(f"hidden draw {name!r}: the case {missing[0]!r} has no numbers in {name!r} to draw afresh")
        ranges.append((name, float(span[0]), float(span[1])))
    return HiddenRule(count, tuple(ranges))


def _drawn(value: Any, low: float, high: float, rng: random.Random) -> Any:
    if isinstance(value, list):
        return [_drawn(v, low, high, rng) for v in value]
    return round(rng.uniform(low, high), DECIMALS)


def _unusable(kind: CaseKind, case: Case) -> str | None:
    """Why a drawn case cannot be used (None when it can)."""
    try:
        expected = kind.expected(case)
        kind.args(case)
    except CaseError as problem:
        return str(problem)
    except (OverflowError, ValueError, ZeroDivisionError) as problem:
        return f"the engine cannot compute it ({problem})"
    if not all(math.isfinite(x) for x in expected):
        return "an answer that is not finite"
    if any(near_rounding_edge(x) for x in expected):
        return "an answer half-way between two graded digits"
    if all(graded(x) == 0 for x in expected):
        return "every answer 0, which a function that does nothing passes"
    return kind.kink(case) if kind.kink is not None else None


def draw_hidden(rule: HiddenRule, kind: CaseKind, shown: list[Case], seed: int) -> list[JsonObject]:
    """The hidden cases of the run seeded `seed` (the same seed, the same cases); CaseError when a case keeps
    drawing inputs the kind cannot use (the rule's ranges must change)."""
    rng = random.Random(seed)
    cases: list[JsonObject] = []
    for index in range(rule.count):
        template = shown[index * len(shown) // rule.count]
        for _ in range(REDRAWS):
            case = dict(template) | {"name": hidden_name(index + 1)}
            for name, low, high in rule.draw:
                case[name] = _drawn(template[name], low, high, rng)
            reason = _unusable(kind, case)
            if reason is None:
                cases.append(case)
                break
        else:
            raise CaseError(f"hidden draws from the case {template.get('name')!r} keep giving inputs the case kind "
                            f"{kind.name!r} cannot use (the last: {reason}); change the ranges")
    return cases
