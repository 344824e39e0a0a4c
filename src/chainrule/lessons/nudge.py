"""The nudge check of the explorable graph (section 03) and the playground: move one input by h, compare
(change in the output) / h with the gradient, and say honestly whether they agree, and if not, why.

    nudge_check(build, {"x": 0.0, "y": 2.0}, "x", 0.01, grad=0.0, output="out")

`build(numbers)` runs the graph forward with the engine for those inputs and gives its output (a
Value). The answer holds every number with its text (`number_fields`) and a `verdict` with a `note`:

* "agree": the two are equal up to rounding (a straight line in that input);
* "close": they differ by a little that shrinks with h (the curve bends between x and x + h);
* "h-large": they differ by much, and a smaller h closes the gap: h is not small for this curve;
* "kink": the input sits on a corner of the function (relu at 0, abs at 0): the slope from the right and
  from the left differ, and the node where it happens is named;
* "not-finite": a number is inf or nan, and the first node that produced it is named;
* "differ": none of these (rounding when h is tiny against the output, or a jump).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from chainrule.engine import Value
from chainrule.explanations import derivative_notation
from chainrule.number_text import format_number, number_fields
from chainrule.traces import first_non_finite, graph_nodes, local_derivatives, node_formulas

__all__ = ["nudge_check", "VERDICTS"]

VERDICTS = ("agree", "close", "h-large", "kink", "not-finite", "differ")
AGREE = 1e-6       # relative gap at which change / h and the gradient count as equal
CLOSE = 0.05       # relative gap up to which a gap that shrinks with h is "close"
EPSILON = 2.0 ** -52

Build = Callable[[Mapping[str, float]], Value]


def _relative_gap(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(a), abs(b))


def _slope(build: Build, numbers: Mapping[str, float], name: str, h: float, before: float) -> float:
    after = build({**numbers, name: numbers[name] + h}).data
    return (after - before) / h


def nudge_check(build: Build, numbers: Mapping[str, float], name: str, h: float, grad: float,
                output: str, gradient_origin: str | None = None) -> dict[str, Any]:
    """The output before and after moving input `name` by h, the change, change / h and the gradient
    `grad` (from the backward pass), with a verdict and a note that says why they agree or not.
    gradient_origin: where the first gradient that is not finite came from (a trace's "non_finite" text)."""
    start = build(numbers)
    before = start.data
    moved = build({**numbers, name: numbers[name] + h})
    after = moved.data
    change = after - before
    ratio = change / h
    result: dict[str, Any] = {"input": name, "symbol": derivative_notation(output, name)}
    for key, value in (("h", h), ("before", before), ("after", after), ("change", change), ("ratio", ratio),
                       ("grad", grad)):
        result.update(number_fields(key, value))
    said = {key: format_number(value) for key, value in
            (("h", h), ("ratio", ratio), ("grad", grad), ("x", numbers[name]))}
    said["origin"] = gradient_origin or ""
    verdict, note = _verdict(build, numbers, name, h, before, after, ratio, grad, output, start, moved, said)
    return result | {"verdict": verdict, "note": note}


def _verdict(build: Build, numbers: Mapping[str, float], name: str, h: float, before: float, after: float,
             ratio: float, grad: float, output: str, start: Value, moved: Value, said: dict[str, str]) -> tuple[str, str]:
    if not all(math.isfinite(x) for x in (before, after, ratio, grad)):
        return "not-finite", _not_finite_note(before, after, ratio, grad, output, name, start, moved, said)
    gap = _relative_gap(ratio, grad)
    compared = f"change / h is {said['ratio']} and the gradient is {said['grad']}"
    if gap <= AGREE:
        return "agree", (f"{compared}: they agree. Near {name} = {said['x']}, {output} moves by "
                         f"{said['grad']} for each unit {name} moves.")
    kink = _kink(build, numbers, name, h, before)
    if kink is not None:
        right, left, where = kink
        return "kink", (f"{compared}: they differ because {name} = {said['x']} sits on a corner of {where}. "
                        f"Nudged up, {output} changes by {format_number(right)} per unit of {name}; nudged down, by "
                        f"{format_number(left)}. A corner has no single slope: the gradient {said['grad']} is the one "
                        f"the engine's rule picks there, so change / h matches it from one side only. Try a "
                        f"negative h, or move {name} off the corner.")
    smaller = _slope(build, numbers, name, h / 10, before)
    shrinks = abs(smaller - grad) < 0.9 * abs(ratio - grad)
    tenth = f"with h = {format_number(h / 10)}, change / h is {format_number(smaller)}"
    if shrinks and gap <= CLOSE:
        return "close", (f"{compared}: close, not equal. The curve bends between {name} and {name} + h, and "
                         f"the gap shrinks with h ({tenth}). The gradient is the limit as h goes to 0.")
    if shrinks:
        return "h-large", (f"{compared}: far apart, because h = {said['h']} is not small here: the slope of "
                           f"{output} changes between {name} and {name} + h. A smaller h gets closer ({tenth}); "
                           f"the gradient is the limit as h goes to 0.")
    rounding = 4 * EPSILON * max(abs(before), abs(after)) / abs(h)
    if abs(ratio - grad) <= 10 * rounding:
        return "differ", (f"{compared}: they differ because h = {said['h']} is so small next to {output} = "
                          f"{format_number(before)} that rounding in {output}'s last digits (about "
                          f"{format_number(rounding)} in change / h) is as large as the gap. Try a larger h.")
    return "differ", (f"{compared}: they differ, and a smaller h does not close the gap ({tenth}). The "
                      f"function may jump between {name} and {name} + h.")


def _kink(build: Build, numbers: Mapping[str, float], name: str, h: float, before: float) -> tuple[float, float, str] | None:
    """(slope from the right, slope from the left, the node with the corner) when `name` sits on a corner."""
    # On a curve the two one-sided slopes differ by about (second derivative) x tiny, which shrinks with
    # tiny; at a corner the difference stays.
    tiny = min(abs(h) / 1e4, 1e-6) * max(1.0, abs(numbers[name]))
    sides = []
    for step in (tiny * 100, tiny):
        right, left = _slope(build, numbers, name, step, before), _slope(build, numbers, name, -step, before)
        if not (math.isfinite(right) and math.isfinite(left)):
            return None
        sides.append((right, left))
    (wide_right, wide_left), (right, left) = sides
    if _relative_gap(right, left) <= 1e-3 or abs(right - left) < abs(wide_right - wide_left) / 3:
        return None
    # The corner is the first node whose local derivatives jump between the two sides of the point.
    here = graph_nodes(build(numbers))
    above = graph_nodes(build({**numbers, name: numbers[name] + tiny}))
    below = graph_nodes(build({**numbers, name: numbers[name] - tiny}))
    formulas = node_formulas(here)
    position = {id(v): i for i, v in enumerate(here)}
    for node, up, down, formula in zip(here, above, below, formulas):
        if up._op is None:
            continue
        pairs = zip(local_derivatives(up), local_derivatives(down))
        if any(_relative_gap(s or 0.0, t or 0.0) > 1e-3 for s, t in pairs):
            at = " and ".join(dict.fromkeys(_named(formulas[position[id(p)]].split(" = ")[0], p.data)
                                            for p in node._prev))
            return right, left, f"{formula} (at {at})"
    return right, left, "the function"


def _named(label: str, value: float) -> str:
    number = format_number(value)
    return number if label == number else f"{label} = {number}"


def _not_finite_note(before: float, after: float, ratio: float, grad: float, output: str, name: str,
                     start: Value, moved: Value, said: dict[str, str]) -> str:
    if not math.isfinite(before):
        origin = first_non_finite(start)
        return (f"{output} is already {format_number(before)} before the nudge, so there is no change to measure. "
                + (origin or ""))
    if not math.isfinite(after):
        origin = first_non_finite(moved)
        return (f"Moving {name} by h = {said['h']} makes {output} {format_number(after)}, so change / h is "
                f"{said['ratio']} and cannot match the gradient {said['grad']}. " + (origin or ""))
    if not math.isfinite(grad):
        return (f"Every value is finite, but the gradient is {said['grad']}: change / h ({said['ratio']}) is "
                f"finite, the slope at {name} itself is not. {said['origin']}").strip()
    return f"The change is too large for a float, so change / h is {said['ratio']}."
