"""The contour plot: a function of two inputs drawn by its level lines, with the gradient at a point the learner moves.

    {"kind": "contour", "expression": "x*x + 3*y*y", "inputs": ["x", "y"], "span": 2, "cells": 24,
     "stops": 9, "levels": 8, "points": [{"name": "start", "x": 1, "y": 1}, ...]}

The expression (the syntax of `chainrule graph`) has exactly the two names of `inputs`, the first drawn
across, the second up. The engine computes the function on a grid of (cells + 1)^2 points over the square
[-span, span]^2 (the page draws the level lines of `levels` heights between the lowest and the highest),
and its value and gradient (one backward pass each) at every one of stops x stops points of a coarser
lattice over the same square: the places the learner can move the point to, by buttons or arrow keys, so
every arrow the page draws was computed here and the cost stays bounded. The named `points` are numbers
for the prose; the first one is where the point starts, and must lie on the lattice.

Placeholders: {{plot.<point name>.<field>}} with field x, y, value, dx, dy (the partial derivatives) or
size (the gradient's length, the steepest climb per unit step).
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.expr import ExpressionError, parse
from chainrule.lessons.text import LessonDataError

__all__ = ["CONTOUR_FIELDS", "contour_number", "contour_plot"]

CONTOUR_FIELDS = ("x", "y", "value", "dx", "dy", "size")
MAX_CELLS = 40
MAX_STOPS = 11
MAX_LEVELS = 12
MAX_POINTS = 6


def _whole(spec: dict[str, Any], key: str, low: int, high: int) -> int:
    value = spec.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LessonDataError(f"plot: {key} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LessonDataError(f"plot: {what} must be a finite number, not {value!r}")
    return float(value)


def contour_plot(spec: dict[str, Any]) -> dict[str, Any]:
    """{"kind", "expression", "inputs", "span", "cells", "grid" (rows from the lowest second input up, each
    from the lowest first input across), "low", "high", "levels": [{"value"}], "stops" (the lattice's size
    per side), "step", "lattice": [{"x", "y", "value", "dx", "dy", "size"}] (row by row, as the grid),
    "start" (the lattice index of the first point), "points": [{"name", and the lattice's fields}]}."""
    text, inputs = spec.get("expression"), spec.get("inputs")
    if not isinstance(text, str):
        raise LessonDataError("plot: a contour plot needs \"expression\": a function of two inputs, e.g. \"x*x + y*y\"")
    if not (isinstance(inputs, list) and len(inputs) == 2 and all(isinstance(n, str) for n in inputs)
            and inputs[0] != inputs[1]):
        raise LessonDataError("plot: inputs must name the two inputs, across then up, e.g. [\"x\", \"y\"]")
    try:
        expression = parse(text)
    except ExpressionError as error:
        raise LessonDataError(f"plot: expression: {error.message}") from None
    if set(expression.names) != set(inputs):
        raise LessonDataError(f"plot: the expression's names {sorted(expression.names)} must be the inputs {inputs}")
    across, up = inputs
    span = _finite(spec.get("span"), "span")
    if span <= 0:
        raise LessonDataError("plot: span must be above 0: the plot shows the square from -span to span")
    cells, stops = _whole(spec, "cells", 4, MAX_CELLS), _whole(spec, "stops", 3, MAX_STOPS)
    level_count = _whole(spec, "levels", 2, MAX_LEVELS)

    def at(x: float, y: float) -> dict[str, float]:
        output, leaves = expression.build({across: x, up: y})
        output.backward()
        dx, dy = leaves[across].grad, leaves[up].grad
        return {"x": x, "y": y, "value": output.data, "dx": dx, "dy": dy, "size": math.hypot(dx, dy)}

    def coordinate(k: int, count: int) -> float:
        return -span + 2 * span * k / count

    grid = [[expression.build({across: coordinate(i, cells), up: coordinate(j, cells)})[0].data
             for i in range(cells + 1)] for j in range(cells + 1)]
    lattice = [at(coordinate(i, stops - 1), coordinate(j, stops - 1)) for j in range(stops) for i in range(stops)]
    if not all(math.isfinite(v) for row in grid for v in row) or not all(
            math.isfinite(stop[key]) for stop in lattice for key in CONTOUR_FIELDS):
        raise LessonDataError("plot: the function is not finite everywhere on the square; choose a smaller span")
    low, high = min(min(row) for row in grid), max(max(row) for row in grid)
    if high == low:
        raise LessonDataError("plot: the function is flat on the square, so it has no level lines to draw")
    levels = [{"value": low + (high - low) * (k + 0.5) / level_count} for k in range(level_count)]
    raw_points = spec.get("points")
    if not isinstance(raw_points, list) or not 1 <= len(raw_points) <= MAX_POINTS:
        raise LessonDataError(f"plot: points must be a list of 1 to {MAX_POINTS} {{name, x, y}}, the first where the point starts")
    points: list[dict[str, Any]] = []
    for raw in raw_points:
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str) or not name or any(p["name"] == name for p in points):
            raise LessonDataError(f"plot: every point needs a name of its own, not {raw!r}")
        x, y = _finite(raw.get("x"), f"point {name!r}: x"), _finite(raw.get("y"), f"point {name!r}: y")
        points.append({"name": name, **at(x, y)})
    step = 2 * span / (stops - 1)
    first = points[0]
    i, j = round((first["x"] + span) / step), round((first["y"] + span) / step)
    if not (0 <= i < stops and 0 <= j < stops and math.isclose(coordinate(i, stops - 1), first["x"], abs_tol=1e-9)
            and math.isclose(coordinate(j, stops - 1), first["y"], abs_tol=1e-9)):
        raise LessonDataError(f"plot: the first point {first['name']!r} must lie on the lattice: x and y each -span "
                              f"plus a whole number of steps of {step:g}")
    return {"kind": "contour", "expression": text, "inputs": inputs, "span": span, "cells": cells, "grid": grid,
            "low": low, "high": high, "levels": levels, "stops": stops, "step": step, "lattice": lattice,
            "start": j * stops + i, "points": points}


def contour_number(plot: dict[str, Any], name: str, field: str) -> float:
    point = next((p for p in plot["points"] if p["name"] == name), None)
    if point is None or field not in CONTOUR_FIELDS:
        raise KeyError(f"plot.{name}.{field}")
    return float(point[field])
