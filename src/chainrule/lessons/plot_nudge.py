"""The nudge plot: a function of one input, nudged by smaller and smaller steps h, every number from the engine.

    {"kind": "nudge", "expression": "(2*x + 1)*(2*x + 1)", "at": 1,
     "nudges": [{"name": "one", "h": 1}, {"name": "tenth", "h": 0.1}, ...]}

The expression (the syntax of `chainrule graph`) has exactly one name, the input. For each nudge the
engine computes f(at + h) (a forward pass on Values), the change f(at + h) - f(at), the ratio change / h
(the slope estimate) and how far that estimate is from the slope (one backward pass at `at`). The page
draws the curve with the secant through (at, f(at)) and (at + h, f(at + h)) beside the tangent, and the
error of every estimate against h on log scales: it falls as h shrinks, then rises again once h is so
small that rounding in f(at + h) - f(at) takes over.

Placeholders: {{plot.<nudge name>.<field>}} with field h, after, change, ratio or error, and
{{plot.function.<field>}} with field at, value or slope.
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.expr import ExpressionError, parse
from chainrule.lessons.text import LessonDataError
from chainrule.number_text import format_number

__all__ = ["NUDGE_FIELDS", "nudge_number", "nudge_plot"]

NUDGE_FIELDS = ("h", "after", "change", "ratio", "error", "at", "value", "slope")
CURVE_POINTS = 61  # samples of the curve the page draws
MAX_NUDGES = 20
TINY = 1e-17  # an error of exactly 0 still needs a place on a log scale


def _number(spec: dict[str, Any], key: str, where: str) -> float:
    value = spec.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LessonDataError(f"plot: {where}{key} must be a finite number, not {value!r}")
    return float(value)


def log_axis(numbers: list[float], most_ticks: int) -> dict[str, Any]:
    """A log scale holding the numbers: {"low", "high"} as powers of ten (at least one apart) and at most
    about `most_ticks` ticks {"power", "text"} down from the highest, each labelled by the one rule for a
    number (10^-3 reads "0.001", 10^-6 "1e-6")."""
    logs = [math.log10(max(abs(x), TINY)) for x in numbers]
    low, high = math.floor(min(logs)), math.ceil(max(logs))
    high = max(high, low + 1)
    every = max(1, math.ceil((high - low) / most_ticks))
    return {"low": low, "high": high,
            "ticks": [{"power": p, "text": format_number(10.0 ** p)} for p in range(high, low - 1, -every)]}


def nudge_plot(spec: dict[str, Any]) -> dict[str, Any]:
    """{"kind", "expression", "input", "at", "value", "slope", "curve": [[x, f(x)], ...],
    "nudges": [{"name", "h", "after", "change", "ratio", "error"}], "h_axis", "error_axis"} (the error
    plot's log scales, `log_axis`)."""
    text = spec.get("expression")
    if not isinstance(text, str):
        raise LessonDataError("plot: a nudge plot needs \"expression\": a function of one input, e.g. \"x*x\"")
    try:
        expression = parse(text)
    except ExpressionError as error:
        raise LessonDataError(f"plot: expression: {error.message}") from None
    if len(expression.names) != 1:
        raise LessonDataError(f"plot: the expression must have exactly one input name, not {expression.names}")
    (name,) = expression.names
    at = _number(spec, "at", "")

    def f(x: float) -> float:
        return expression.build({name: x})[0].data

    output, leaves = expression.build({name: at})
    output.backward()
    value, slope = output.data, leaves[name].grad
    nudges = spec.get("nudges")
    if not isinstance(nudges, list) or not 1 <= len(nudges) <= MAX_NUDGES:
        raise LessonDataError(f"plot: nudges must be a list of 1 to {MAX_NUDGES} {{name, h}}")
    rows: list[dict[str, Any]] = []
    for nudge in nudges:
        label = nudge.get("name") if isinstance(nudge, dict) else None
        if not isinstance(label, str) or not label or label == "function" or any(r["name"] == label for r in rows):
            raise LessonDataError(f"plot: every nudge needs a name of its own (not \"function\"), not {nudge!r}")
        h = _number(nudge, "h", f"nudge {label!r}: ")
        if h == 0:
            raise LessonDataError(f"plot: nudge {label!r}: h must not be 0")
        after = f(at + h)
        change = after - value
        ratio = change / h
        rows.append({"name": label, "h": h, "after": after, "change": change, "ratio": ratio,
                     "error": abs(ratio - slope)})
    if not all(math.isfinite(row[key]) for row in rows for key in ("after", "ratio")) or not math.isfinite(slope):
        raise LessonDataError("plot: the function is not finite at every nudge; choose another point or smaller nudges")
    span = max(abs(row["h"]) for row in rows) * 1.25
    curve = [[at - span + 2 * span * k / (CURVE_POINTS - 1)] for k in range(CURVE_POINTS)]
    for point in curve:
        point.append(f(point[0]))
    if not all(math.isfinite(y) for _, y in curve):
        raise LessonDataError("plot: the function is not finite around the point; choose smaller nudges")
    return {"kind": "nudge", "expression": text, "input": name, "at": at, "value": value, "slope": slope,
            "curve": curve, "nudges": rows, "h_axis": log_axis([row["h"] for row in rows], 5),
            "error_axis": log_axis([row["error"] for row in rows], 6)}


def nudge_number(plot: dict[str, Any], name: str, field: str) -> float:
    if name == "function" and field in ("at", "value", "slope"):
        return plot[field]
    row = next((row for row in plot["nudges"] if row["name"] == name), None)
    if row is None or field not in ("h", "after", "change", "ratio", "error"):
        raise KeyError(f"plot.{name}.{field}")
    return row[field]
