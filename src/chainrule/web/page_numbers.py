"""Numbers between the server and the page, each rule once: every number the page shows comes with its
text ("<key>_text", chainrule.number_text, the captions' rule; a trace carries its own), and the page
sends what the learner typed as it was typed, for the server to read (chainrule.lessons.checking.parse_number).
Pages format no number themselves."""

from __future__ import annotations

import math
from typing import Any

from chainrule.lessons.checking import NUMBER_HELP, parse_number, too_large, too_large_text
from chainrule.number_text import format_number, with_number_texts

__all__ = ["MAX_TYPED_CHARS", "number_text", "estimate_text", "plot_with_texts", "grade_result_with_texts", "read_number",
           "read_explore_number"]

MAX_TYPED_CHARS = 100  # a typed number longer than this is not one anybody typed


def number_text(x: float) -> str:
    """The text of a number as the page shows it (nan, inf and -inf included)."""
    return format_number(x)


def estimate_text(estimate: float, exact: float) -> str:
    """An estimate of `exact` with as many decimals as it takes to differ from exact's text when the two
    differ (12.00004, not 12, for a slope of 12), at most 12; the usual text otherwise."""
    text = format_number(estimate)
    digits = 4
    while estimate != exact and text == format_number(exact, digits) and digits < 12:
        digits += 1
        text = format_number(estimate, digits)
    return text


def plot_with_texts(plot: dict[str, Any]) -> dict[str, Any]:
    """A lesson plot with the text of every number its captions and tables show: each number under a key
    gets "<key>_text" beside it (a fit plot's learning rates and each frame's w, b and loss; a nudge plot's
    point and each nudge's numbers; a boundary plot's learning rates and each frame's loss and accuracy),
    and a sweeps plot's Jacobian entries, as each sweep fills them (a forward sweep's "column_text", a
    reverse sweep's "row_text", one text per entry)."""
    texts = with_number_texts(plot)
    if plot.get("kind") == "nudge":  # an estimate never reads as exact when it is not
        return texts | {"nudges": [nudge | {"ratio_text": estimate_text(nudge["ratio"], plot["slope"])}
                                   for nudge in texts["nudges"]]}
    if plot.get("kind") != "sweeps":
        return texts

    def listed(frame: dict[str, Any], key: str) -> dict[str, Any]:
        return frame | {f"{key}_text": [number_text(x) for x in frame[key]]}

    return texts | {"functions": [
        function | {"forward": [listed(frame, "column") for frame in function["forward"]],
                    "reverse": [listed(frame, "row") for frame in function["reverse"]]}
        for function in plot["functions"]]}


def grade_result_with_texts(result: dict[str, Any]) -> dict[str, Any]:
    """A grading result whose tests' expected and actual numbers have their texts (a result stored before
    the grader wrote them gets them here): "expected_text" and "actual_text", one text per entry."""
    from chainrule.grading.rounding import graded_texts

    tests = []
    for test in result.get("tests") or []:
        if isinstance(test, dict) and "expected_text" not in test:
            test = test | {"expected_text": graded_texts(test.get("expected")), "actual_text": graded_texts(test.get("actual"))}
        tests.append(test)
    return result | {"tests": tests} if "tests" in result else result


def read_number(value: Any, limit: float | None = None) -> float:
    """A number the learner typed (the text as typed) or a JSON number, as a finite float (within
    -limit..limit when a limit is given). Raises ValueError saying what is wrong (pydantic turns that into
    a 422): not a number (NUMBER_HELP), or too large (its size, not its digits, is the problem)."""
    if isinstance(value, bool):
        raise ValueError(NUMBER_HELP)
    if isinstance(value, (int, float)):
        number = float(value)
        shown = format_number(number)
    elif isinstance(value, str):
        if len(value) > MAX_TYPED_CHARS:
            raise ValueError(f"{NUMBER_HELP} (at most {MAX_TYPED_CHARS} characters)")
        shown = value.strip()[:40]
        parsed = parse_number(value)
        if parsed is None and not too_large(value):
            raise ValueError(NUMBER_HELP)
        number = math.inf if parsed is None else parsed
    else:
        raise ValueError(NUMBER_HELP)
    if number != number:
        raise ValueError(NUMBER_HELP)
    if limit is not None and not abs(number) <= limit:
        raise ValueError(f"{shown} is too large: type a number from {format_number(-limit)} to {format_number(limit)}.")
    if math.isinf(number):
        raise ValueError(too_large_text(shown))
    return number


def read_explore_number(value: Any) -> float:
    """A number typed into the explorable graph: within the range it takes (lessons.graphs.EXPLORE_LIMIT)."""
    from chainrule.lessons.graphs import EXPLORE_LIMIT

    return read_number(value, EXPLORE_LIMIT)
