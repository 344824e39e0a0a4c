"""The data behind a lesson's animated line-fit plot, every number computed by the engine.

A plot spec in lesson.json (under see_it_work):
    {"xs": [...], "ys": [...], "runs": [{"name": "right", "label": "...", "lr": 0.05, "steps": 40}, ...]}
Each run is full-batch gradient descent from w = b = 0 (chainrule.grading.line_fit); the page animates its
frames: the line after each step and the loss falling (or, for a rate too large, climbing).
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.grading.line_fit import fit_line_history
from chainrule.lessons.text import LessonDataError

__all__ = ["line_fit_plot", "plot_number", "PLOT_FIELDS"]

# What a prose placeholder {{plot.<run>.<field>}} may ask for.
PLOT_FIELDS = ("lr", "steps", "w", "b", "loss", "start_loss")
MAX_STEPS = 500


def line_fit_plot(spec: dict[str, Any]) -> dict[str, Any]:
    """{"xs", "ys", "runs": [{"name", "label", "lr", "steps", "frames": [{"step","w","b","loss"}]}]}."""
    xs, ys = spec.get("xs"), spec.get("ys")
    if not isinstance(xs, list) or not isinstance(ys, list) or len(xs) != len(ys) or len(xs) < 2:
        raise LessonDataError("plot: xs and ys must be lists of numbers of the same length, at least two points")
    runs = spec.get("runs")
    if not isinstance(runs, list) or not runs:
        raise LessonDataError("plot: runs must be a non-empty list of {name, label, lr, steps}")
    out = []
    for run in runs:
        name = run.get("name") if isinstance(run, dict) else None
        if not isinstance(name, str) or not name or not isinstance(run.get("label"), str):
            raise LessonDataError(f"plot: every run needs a name and a label, not {run!r}")
        steps = run.get("steps")
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
            raise LessonDataError(f"plot: run {name!r}: steps must be a whole number from 1 to {MAX_STEPS}")
        frames = fit_line_history(xs, ys, float(run.get("lr", 0)), steps)
        if not all(math.isfinite(frame[key]) for frame in frames for key in ("w", "b", "loss")):
            raise LessonDataError(f"plot: run {name!r} overflows; take fewer steps or a smaller learning rate")
        out.append({"name": name, "label": run["label"], "lr": float(run["lr"]), "steps": steps, "frames": frames})
    return {"xs": [float(x) for x in xs], "ys": [float(y) for y in ys], "runs": out}


def plot_number(plot: dict[str, Any], run_name: str, field: str) -> float:
    """One number of a run for the prose; KeyError when there is no such run or field."""
    run = next((run for run in plot["runs"] if run["name"] == run_name), None)
    if run is None or field not in PLOT_FIELDS:
        raise KeyError(f"plot.{run_name}.{field}")
    if field in ("lr", "steps"):
        return run[field]
    if field == "start_loss":
        return run["frames"][0]["loss"]
    return run["frames"][-1][field]
