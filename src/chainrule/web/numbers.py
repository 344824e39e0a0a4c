"""Numbers between the server and the page, each rule once: the page shows the text the server sends
beside every number (chainrule.trace.format_number, the captions' rule) and sends what the learner typed
as it was typed, for the server to read (chainrule.lessons.checking.parse_number)."""

from __future__ import annotations

import math
from typing import Any

from chainrule.lessons.checking import NUMBER_HELP, parse_number
from chainrule.trace import format_number

__all__ = ["MAX_TYPED_CHARS", "number_text", "with_texts", "plot_with_texts", "read_number"]

MAX_TYPED_CHARS = 100  # a typed number longer than this is not one anybody typed


def number_text(x: float | None) -> str:
    """The text of a number as the page shows it; None (JSON's stand-in for nan and infinity) as "nan/inf"."""
    return "nan/inf" if x is None else format_number(x)


def _add(entry: dict[str, Any], *keys: str) -> dict[str, Any]:
    return entry | {f"{key}_text": number_text(entry[key]) for key in keys if key in entry}


def with_texts(trace: dict[str, Any]) -> dict[str, Any]:
    """The trace with "<key>_text" beside each number the page shows: nodes' data and grad, forward steps'
    value, backward steps' grad and each contribution's contribution and grad_after."""
    return trace | {
        "nodes": [_add(node, "data", "grad") for node in trace["nodes"]],
        "forward": [_add(step, "value") for step in trace["forward"]],
        "backward": [
            _add(step, "grad") | {"contributions": [_add(c, "contribution", "grad_after") for c in step.get("contributions", [])]}
            for step in trace["backward"]
        ],
    }


def _add_lists(entry: dict[str, Any], *keys: str) -> dict[str, Any]:
    return entry | {f"{key}_text": [number_text(x) for x in entry[key]] for key in keys if key in entry}


def plot_with_texts(plot: dict[str, Any]) -> dict[str, Any]:
    """A lesson plot with the text of every number its captions and tables show: a fit plot's learning rates
    and each frame's w, b and loss; a nudge plot's point and each nudge's numbers; a boundary plot's
    learning rates and each frame's loss and accuracy; a sweeps plot's inputs, outputs, Jacobian and the
    column or row each sweep fills."""
    kind = plot.get("kind", "line-fit")
    if kind == "nudge":
        return _add(plot, "at", "value", "slope") | {
            "nudges": [_add(row, "h", "after", "change", "ratio", "error") for row in plot["nudges"]]}
    if kind == "boundary":
        return plot | {"runs": [_add(run, "lr") | {"frames": [_add(frame, "loss", "accuracy") for frame in run["frames"]]}
                                for run in plot["runs"]]}
    if kind == "sweeps":
        return plot | {"functions": [
            _add_lists(function, "values", "results") | {
                "jacobian_text": [[number_text(x) for x in row] for row in function["jacobian"]],
                "forward": [_add_lists(frame, "column") for frame in function["forward"]],
                "reverse": [_add_lists(frame, "row") for frame in function["reverse"]]}
            for function in plot["functions"]]}
    return plot | {"runs": [_add(run, "lr") | {"frames": [_add(frame, "w", "b", "loss") for frame in run["frames"]]}
                            for run in plot["runs"]]}


def read_number(value: Any) -> float:
    """A number the learner typed (the text as typed) or a JSON number, as a finite float.
    Raises ValueError with NUMBER_HELP when it is not one (pydantic turns that into a 422)."""
    if isinstance(value, bool):
        raise ValueError(NUMBER_HELP)
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        if len(value) > MAX_TYPED_CHARS:
            raise ValueError(f"{NUMBER_HELP} (at most {MAX_TYPED_CHARS} characters)")
        parsed = parse_number(value)
        if parsed is None:
            raise ValueError(NUMBER_HELP)
        number = parsed
    else:
        raise ValueError(NUMBER_HELP)
    if not math.isfinite(number):
        raise ValueError(NUMBER_HELP)
    return number
