"""The data behind a lesson's animated plot (under see_it_work), every number computed by the engine.

A plot spec names its `kind` (default "line-fit"):

    line-fit   {"xs": [...], "ys": [...], "runs": [{"name": "right", "label": "...", "lr": 0.05, "steps": 40}, ...]}
               Each run is full-batch gradient descent from w = b = 0 (chainrule.grading.line_fit); the page
               animates its frames: the line after each step and the loss falling (or, for a rate too
               large, climbing).
    nudge      a function of one input nudged by smaller and smaller h (lessons/plot_nudge.py)
    boundary   small networks trained on the two moons, their decision boundary as they learn (plot_boundary.py)
    sweeps     a Jacobian filled by forward sweeps and by reverse sweeps, counted (plot_sweeps.py); it may carry
               a paths spec under "paths", its path-sum view shown beneath it
    contour    a function of two inputs by its level lines, the gradient at a point the learner moves (plot_contour.py)
    paths      a gradient as the sum over the paths from an input to the output, and what reverse mode shares
               between them (plot_paths.py)

`lesson_plot(spec)` computes the plot; `plot_number(plot, name, field)` is one of its numbers for a
`{{plot.<name>.<field>}}` placeholder (the fields of each kind are in PLOT_FIELDS).
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.grading.line_fit import fit_line_history
from chainrule.lessons.plot_boundary import BOUNDARY_FIELDS, boundary_number, boundary_plot
from chainrule.lessons.plot_contour import CONTOUR_FIELDS, contour_number, contour_plot
from chainrule.lessons.plot_nudge import NUDGE_FIELDS, nudge_number, nudge_plot
from chainrule.lessons.plot_paths import PATH_FIELDS, path_number, path_plot
from chainrule.lessons.plot_sweeps import SWEEP_FIELDS, sweep_number, sweep_plot
from chainrule.lessons.text import LessonDataError

__all__ = ["PLOT_FIELDS", "PLOT_KINDS", "lesson_plot", "line_fit_plot", "plot_number"]

# What a prose placeholder {{plot.<name>.<field>}} may ask for, by kind of plot.
PLOT_FIELDS = {
    "line-fit": ("lr", "steps", "w", "b", "loss", "start_loss"),
    "nudge": NUDGE_FIELDS,
    "boundary": BOUNDARY_FIELDS,
    "sweeps": SWEEP_FIELDS + PATH_FIELDS,  # the second for the functions of its "paths"
    "contour": CONTOUR_FIELDS,
    "paths": PATH_FIELDS,
}
PLOT_KINDS = tuple(PLOT_FIELDS)
MAX_STEPS = 500


def line_fit_plot(spec: dict[str, Any]) -> dict[str, Any]:
    """{"kind", "xs", "ys", "runs": [{"name", "label", "lr", "steps", "frames": [{"step","w","b","loss"}]}]}."""
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
    return {"kind": "line-fit", "xs": [float(x) for x in xs], "ys": [float(y) for y in ys], "runs": out}


def _line_fit_number(plot: dict[str, Any], run_name: str, field: str) -> float:
    run = next((run for run in plot["runs"] if run["name"] == run_name), None)
    if run is None or field not in PLOT_FIELDS["line-fit"]:
        raise KeyError(f"plot.{run_name}.{field}")
    if field in ("lr", "steps"):
        return run[field]
    if field == "start_loss":
        return run["frames"][0]["loss"]
    return run["frames"][-1][field]


def _sweeps_and_paths(spec: dict[str, Any]) -> dict[str, Any]:
    """A sweeps plot, with the path-sum view of its "paths" spec (if any) to show beneath it."""
    plot = sweep_plot(spec)
    if "paths" not in spec:
        return plot
    if not isinstance(spec["paths"], dict):
        raise LessonDataError("plot: a sweeps plot's \"paths\" is a paths spec: {\"functions\": [...]}")
    paths = path_plot(spec["paths"])
    taken = {f["name"] for f in plot["functions"]} & {f["name"] for f in paths["functions"]}
    if taken:
        raise LessonDataError(f"plot: the names {sorted(taken)} are both a sweeps function and a paths function; "
                              "each needs a name of its own, for the placeholders")
    return plot | {"paths": paths}


def _sweeps_or_paths_number(plot: dict[str, Any], name: str, field: str) -> float:
    if "paths" in plot and any(f["name"] == name for f in plot["paths"]["functions"]):
        return path_number(plot["paths"], name, field)
    return sweep_number(plot, name, field)


_BUILDERS = {"line-fit": line_fit_plot, "nudge": nudge_plot, "boundary": boundary_plot, "sweeps": _sweeps_and_paths,
             "contour": contour_plot, "paths": path_plot}
_NUMBERS = {"line-fit": _line_fit_number, "nudge": nudge_number, "boundary": boundary_number,
            "sweeps": _sweeps_or_paths_number, "contour": contour_number, "paths": path_number}


def lesson_plot(spec: Any) -> dict[str, Any]:
    """The plot a see_it_work "plot" spec describes, computed by the engine; LessonDataError says what is
    wrong with a spec."""
    if not isinstance(spec, dict):
        raise LessonDataError("plot: a plot is an object with a \"kind\" and that kind's fields")
    kind = spec.get("kind", "line-fit")
    if kind not in _BUILDERS:
        raise LessonDataError(f"plot: unknown kind {kind!r}; the kinds are {', '.join(PLOT_KINDS)}")
    return _BUILDERS[kind](spec)


def plot_number(plot: dict[str, Any], name: str, field: str) -> float:
    """One number of the plot for the prose; KeyError when it has no such name or field."""
    return _NUMBERS[plot.get("kind", "line-fit")](plot, name, field)
