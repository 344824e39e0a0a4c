"""The harness's result lines, read so that nothing learner code prints can crash the grader.

    events = parse_events(outcome.stdout, nonce)   # [{"event": "case", "index": 0, ...}, ...]

The harness prints one line per event, "@@chainrule:<nonce>@@ <json>". Learner code runs in the same
process and can read the nonce, so it can print lines of the same form with anything in them. A line
is kept only when it is a JSON object nested at most MAX_DEPTH deep, whose numbers are all finite
(no NaN, Infinity or 1e999: the harness itself sends non-finite results as the strings "NaN",
"Infinity", "-Infinity") and whose integers have at most MAX_INT_DIGITS digits. Every string is made
valid Unicode (json.loads turns a "\\ud800" escape into a lone surrogate). Any other line is dropped,
so the judging never meets a deep structure, a number it cannot round or print, or a surprise type.
"""

from __future__ import annotations

import json
import math

from chainrule.grading.json_objects import Event
from chainrule.text_safety import valid_data

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "parse_event", "parse_events"]

MAX_DEPTH = 16  # the harness's deepest event is 3 levels; a JSON result list adds a few more
MAX_INT_DIGITS = 20  # any longer integer is not a result the harness sends (it sends floats)


class _Refused(ValueError):
    """A line that is not an event the harness could have printed."""


def _refuse_constant(name: str) -> float:
    raise _Refused(f"{name} is not a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"{text[:20]} is not a finite number")
    return value


def _small_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused("an integer with too many digits")
    return int(text)


def _depth_within(value: object, limit: int) -> bool:
    """True when `value` nests lists and dicts at most `limit` deep (iterative: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return True


def parse_event(payload: bytes) -> Event | None:
    """The event in one line's JSON text, or None when it is not one the harness could have printed."""
    try:
        event = json.loads(payload, parse_constant=_refuse_constant, parse_float=_finite_float,
                           parse_int=_small_int)
    except (ValueError, RecursionError, MemoryError):  # _Refused and JSONDecodeError are ValueErrors
        return None
    if not isinstance(event, dict) or not _depth_within(event, MAX_DEPTH):
        return None
    checked: Event = valid_data(event)  # recursive, and safe now that the depth is bounded
    if checked.get("error") is not None and not isinstance(checked["error"], dict):
        checked["error"] = {"type": "Error", "message": str(checked["error"])[:1000]}
    return checked


def parse_events(stdout: bytes, nonce: str) -> list[Event]:
    """Every event line the run printed with the run's marker, each checked by parse_event."""
    marker = f"@@chainrule:{nonce}@@ ".encode()
    events = []
    for line in stdout.split(b"\n"):
        if line.startswith(marker):
            event = parse_event(line[len(marker):])
            if event is not None:
                events.append(event)
    return events
