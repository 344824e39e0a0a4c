"""What a stored or imported value must be for every reader of the store to take it.

    card_problem({"card_id": 1, "state": 2, "stability": -5, ...})  -> "stability must be ... got -5"
    depth_problem(result, MAX_DEPTH)                                -> "nested 300 levels deep ..."
    stored_card(text, "backprop/q1")                                -> fsrs.Card, or None (reported, skipped)

An FSRS card is checked against the ranges py-fsrs (6.3) works in (stability at least its
STABILITY_MIN, difficulty from 1 to 10, a state and a step it knows, times it can add intervals to)
and then reviewed once with every rating by the store's own scheduler: a card it cannot review, or
reviews into a non-finite or backwards schedule, is refused. JSON values are bounded in depth.

Import refuses such values (progress/exchange.py); readers of rows already stored (by an older
import, or edited by hand) use `stored_card` / `stored_json`, which report a bad row on the
"chainrule.progress" logger and skip it, so that one row cannot break review or a lesson page.
"""

from __future__ import annotations

import json
import logging
import math
from datetime import datetime, timezone
from typing import Any, cast

from fsrs import Card, Rating
from fsrs.card import CardDict

from chainrule.progress.scheduling import make_scheduler

__all__ = ["MAX_DEPTH", "card_problem", "depth_problem", "finite_json", "stored_card", "stored_json"]

MAX_DEPTH = 20  # a grading result is 4 levels deep; nothing the store keeps needs more
STABILITY_MIN = 0.001  # py-fsrs's own floor (fsrs.scheduler.STABILITY_MIN)
STABILITY_MAX = 1e9  # days; intervals stop at 100 years, and a larger number is no card py-fsrs made
DIFFICULTY_RANGE = (1.0, 10.0)  # py-fsrs clamps difficulty to this range
MAX_STEP = 100
EARLIEST, LATEST = datetime(1970, 1, 1, tzinfo=timezone.utc), datetime(3000, 1, 1, tzinfo=timezone.utc)
CARD_KEYS = frozenset({"card_id", "state", "step", "stability", "difficulty", "due", "last_review"})

log = logging.getLogger("chainrule.progress")
_scheduler = make_scheduler(fuzzing=False)


def depth_problem(value: object, limit: int = MAX_DEPTH) -> str | None:
    """None when `value` nests lists and objects at most `limit` deep (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return f"nested more than {limit} levels deep (lists and objects inside each other)"
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _moment(value: object, key: str) -> tuple[datetime | None, str | None]:
    if not isinstance(value, str):
        return None, f"{key} must be an ISO 8601 time string"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None, f"{key} must be an ISO 8601 time like 2026-01-31T12:00:00+00:00, got {value!r}"
    if moment.tzinfo is None:
        return None, f"{key} {value!r} has no time zone (add +00:00)"
    if not EARLIEST <= moment < LATEST:
        return None, f"{key} must be between the years 1970 and 2999, got {value!r}"
    return moment, None


def _field_problem(value: dict[str, Any]) -> str | None:
    """The first field of a card dict outside what py-fsrs works with, or None."""
    if set(value) != CARD_KEYS:
        missing, extra = sorted(CARD_KEYS - set(value)), sorted(set(value) - CARD_KEYS)
        return f"an FSRS card needs exactly the keys {sorted(CARD_KEYS)} (missing {missing}, unknown {extra})"
    card_id = value["card_id"]
    if isinstance(card_id, bool) or not isinstance(card_id, int) or not 0 < card_id < 2 ** 63:
        return f"card_id must be a positive integer, got {card_id!r}"
    if isinstance(value["state"], bool) or value["state"] not in (1, 2, 3):
        return f"state must be 1 (learning), 2 (review) or 3 (relearning), got {value['state']!r}"
    step = value["step"]
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP):
        return f"step must be null or a whole number from 0 to {MAX_STEP}, got {step!r}"
    stability, difficulty = value["stability"], value["difficulty"]
    if stability is not None and not (_is_number(stability) and STABILITY_MIN <= stability <= STABILITY_MAX):
        return f"stability must be null or a number from {STABILITY_MIN} to {STABILITY_MAX:g} (days), got {stability!r}"
    low, high = DIFFICULTY_RANGE
    if difficulty is not None and not (_is_number(difficulty) and low <= difficulty <= high):
        return f"difficulty must be null or a number from {low:g} to {high:g}, got {difficulty!r}"
    _, problem = _moment(value["due"], "due")
    if problem:
        return problem
    if value["last_review"] is not None:
        _, problem = _moment(value["last_review"], "last_review")
        if problem:
            return problem
    return None


def _review_problem(card: Card, at: datetime) -> str | None:
    """Why the store's scheduler cannot review `card` at `at` with some rating, or None."""
    low, high = DIFFICULTY_RANGE
    try:
        retrievability = _scheduler.get_card_retrievability(card, current_datetime=at)
        if not (_is_number(retrievability) and 0.0 <= retrievability <= 1.0):
            return f"its recall probability comes out as {retrievability!r}"
        for rating in Rating:
            after, _ = _scheduler.review_card(card, rating, review_datetime=at)
            if not (isinstance(after.stability, float) and math.isfinite(after.stability)
                    and isinstance(after.difficulty, float) and low <= after.difficulty <= high and after.due >= at):
                return f"rated {rating.name}, it would get stability {after.stability!r}, difficulty " \
                       f"{after.difficulty!r}, due {after.due.isoformat()}"
    except Exception as error:  # whatever py-fsrs raises for a card it cannot take
        return f"the scheduler cannot review it ({type(error).__name__}: {error})"
    return None


def card_problem(value: object, now: datetime | None = None, *, review: bool = True) -> str | None:
    """Why `value` is not an FSRS card the store's scheduler can review, or None. review=False checks
    the fields only (enough for a reader that shows when a card is due)."""
    if not isinstance(value, dict):
        return "expected an FSRS card object"
    problem = _field_problem(value)
    if problem or not review:
        return problem
    try:
        card = Card.from_dict(cast(CardDict, value))  # its keys are checked above; from_dict checks the rest
    except Exception as error:  # py-fsrs's own reading, whatever it raises
        return f"not a valid FSRS card ({error})"
    now = now or datetime.now(timezone.utc)
    for moment in sorted({now, max(now, card.due.astimezone(timezone.utc))}):
        problem = _review_problem(card, moment)
        if problem:
            return f"not an FSRS card the scheduler can use: {problem}"
    return None


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text} is not finite")
    return number


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def finite_json(text: str | bytes, **hooks: Any) -> Any:
    """json.loads that refuses NaN, Infinity and numbers too large for a float (no answer could carry
    them); ``hooks``: json.loads's own (object_pairs_hook)."""
    return json.loads(text, parse_float=_finite, parse_constant=_no_constant, **hooks)


def stored_json(text: Any, where: str) -> Any:
    """A stored JSON column's value, or None (reported) when it cannot be read, holds a number that is
    not finite, or is nested too deep."""
    try:
        value = finite_json(text)
    except (TypeError, ValueError, RecursionError) as error:
        log.warning("skipped a stored row (%s): it is not readable JSON (%s)", where, type(error).__name__)
        return None
    problem = depth_problem(value)
    if problem:
        log.warning("skipped a stored row (%s): %s", where, problem)
        return None
    return value


def stored_card(text: Any, where: str, *, review: bool = True) -> Card | None:
    """A stored card as an fsrs.Card, or None (reported, the row skipped) when no reader could use it.
    review=False: for readers that only show when it is due (the fields are checked, not a review)."""
    value = stored_json(text, where)
    if value is None:
        return None
    problem = card_problem(value, review=review)
    if problem:
        log.warning("skipped a stored review card (%s): %s", where, problem)
        return None
    return Card.from_dict(value)
