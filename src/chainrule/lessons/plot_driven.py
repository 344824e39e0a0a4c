"""Driven plots: plots a learner drives with sliders, every number computed by the engine on request.

A lesson folder declares them in `driven.json` beside lesson.json (optional):

    {"plots": [
      {"name": "rate", "kind": "descent", "section": "03", "title": "Choose the learning rate",
       "xs": [0, 1, 2, 3, 4], "ys": [1.2, 2.9, 5.1, 7.2, 8.8], "steps": 30,
       "surface": {"w": [-1, 4], "b": [-3, 4]},
       "controls": {"lr": {"values": [0.005, 0.05, 0.1], "start": 0.05}, "w": {...}, "b": {...}}}]}

Three kinds, each with the controls of KINDS (every control is optional in the file; a control left out
keeps its default, and the page offers no slider for it):

    descent   gradient descent on a line fit from a chosen start (w, b) with a chosen learning rate
              (chainrule.grading.line_fit): the loss after each step, the line, and the path drawn on a
              contour map of the loss over (w, b) (`surface`: the box of the map)
    network   a network with two hidden layers of `width` neurons learning the two moons with a chosen
              learning rate and seed (lessons.plot_boundary.train_run, compiled replay): its boundary and
              loss after every `every` steps
    slope     f (an expression of one input) at a chosen x, nudged by a chosen h: the secant beside the
              tangent, and the error of the nudge estimate for every h from 1 down to 1e-15

A control's "values" are the stops of its slider (at most MAX_STOPS); "start" is one of them. A request
may ask for any number within the control's limits (LIMITS, the one place they are set); anything else is
refused with a DrivenError that says what is allowed. `drive(spec, values)` computes a plot;
`driven_problems(folder, add)` checks a folder's driven.json for `chainrule lessons check`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

from chainrule.compute_cost import costs_cpu
from chainrule.errors import InputError
from chainrule.grading.line_fit import fit_line_history, line_loss
from chainrule.lessons import plot_boundary
from chainrule.lessons.graphs import EXPLORE_LIMIT
from chainrule.lessons.plot_nudge import MAX_NUDGES, nudge_plot
from chainrule.lessons.plots import MAX_STEPS as MAX_FIT_STEPS
from chainrule.lessons.text import LessonDataError
from chainrule.number_text import format_number

__all__ = ["DRIVEN_FILE", "KINDS", "LIMITS", "DrivenError", "drive", "driven_plots", "driven_problems", "read_driven"]

DRIVEN_FILE = "driven.json"
MAX_STOPS = 40       # stops of one slider: enough to sweep a range, few enough to step through by keyboard
SURFACE_CELLS = 24   # the loss map's cells per side: (cells + 1)^2 losses, each one forward pass
SURFACE_LEVELS = 8   # the contour map's bands
SMALLEST_H, LARGEST_H = 1e-15, 1.0
H_SWEEP = [10.0 ** -k for k in range(16)]  # the error curve's h: 1 down to 1e-15, one per power of ten
MAX_WIDTH = 16       # neurons per hidden layer: (2+1)*16 + (16+1)*16 + 17 = 337 <= plot_boundary.MAX_PARAMETERS

# Each kind's controls: (label, low, high, default, whole number?). The one place their limits live;
# the rest reuse the lessons' own (EXPLORE_LIMIT for typed numbers, the plots' step caps).
LIMITS: dict[str, dict[str, tuple[str, float, float, float, bool]]] = {
    "descent": {"lr": ("Learning rate", 0.0, 1.0, 0.05, False),
                "w": ("Starting w", -EXPLORE_LIMIT, EXPLORE_LIMIT, 0.0, False),
                "b": ("Starting b", -EXPLORE_LIMIT, EXPLORE_LIMIT, 0.0, False)},
    "network": {"width": ("Neurons per hidden layer", 1, MAX_WIDTH, 8, True),
                "lr": ("Learning rate", 0.0, 10.0, 1.0, False),
                "seed": ("Seed of the starting weights", 0, 1000, 1, True)},
    "slope": {"at": ("The point x", -EXPLORE_LIMIT, EXPLORE_LIMIT, 1.0, False),
              "h": ("The nudge h", SMALLEST_H, LARGEST_H, 1e-3, False)},
}
KINDS = tuple(LIMITS)
_SECTIONS = ("02", "03", "04")  # sections a driven plot may stand in: where the lesson shows its workings
_FIELDS = {"descent": {"xs", "ys", "steps", "surface"},
           "network": {"samples", "noise", "data_seed", "cells", "steps", "every"},
           "slope": {"expression"}}
_COMMON = {"name", "kind", "section", "title", "controls"}


class DrivenError(InputError):
    """A request for a driven plot that cannot be computed: which control, what is allowed (the web's 422)."""


# --- reading the folder -------------------------------------------------------------------------------


def _control_value(kind: str, control: str, value: Any) -> float:
    label, low, high, _, whole = LIMITS[kind][control]
    allowed = f"a {'whole number' if whole else 'number'} from {format_number(low)} to {format_number(high)}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high or (whole and value != int(value)):
        shown = format_number(value) if isinstance(value, float) else repr(value)
        raise DrivenError(f"{control} ({label.lower()}) = {shown} is not allowed: choose {allowed}", field=control)
    return float(value)


def _check_spec(spec: Any) -> None:
    """Raise LessonDataError saying what is wrong with one driven plot's spec (its numbers are computed
    once at the defaults, so a spec the engine cannot run is refused here, not on the page)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
        raise LessonDataError(f"every driven plot needs a \"name\", not {spec!r}")
    name, kind = spec["name"], spec.get("kind")
    if kind not in LIMITS:
        raise LessonDataError(f"driven plot {name!r}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    unknown = set(spec) - _COMMON - _FIELDS[kind]
    if unknown:
        raise LessonDataError(f"driven plot {name!r}: unknown fields {', '.join(sorted(unknown))}; a {kind} plot holds "
                              f"{', '.join(sorted(_COMMON | _FIELDS[kind]))}")
    if spec.get("section") not in _SECTIONS or not isinstance(spec.get("title"), str) or not spec["title"].strip():
        raise LessonDataError(f"driven plot {name!r}: needs a \"title\" and a \"section\", one of {', '.join(_SECTIONS)}")
    controls = spec.get("controls", {})
    if not isinstance(controls, dict) or set(controls) - set(LIMITS[kind]):
        raise LessonDataError(f"driven plot {name!r}: controls must be an object whose keys are among "
                              f"{', '.join(LIMITS[kind])}")
    for control, stops in controls.items():
        values = stops.get("values") if isinstance(stops, dict) else None
        if not isinstance(values, list) or not 2 <= len(values) <= MAX_STOPS:
            raise LessonDataError(f"driven plot {name!r}: control {control!r} needs \"values\", 2 to {MAX_STOPS} stops")
        try:
            numbers = [_control_value(kind, control, value) for value in values]
        except DrivenError as error:
            raise LessonDataError(f"driven plot {name!r}: {error}") from None
        if numbers != sorted(set(numbers)) or stops.get("start") not in values:
            raise LessonDataError(f"driven plot {name!r}: control {control!r}: values rise, no two the same, and "
                                  "\"start\" is one of them")
    try:
        drive(spec, {})
    except DrivenError as error:
        raise LessonDataError(f"driven plot {name!r}: {error}") from None


def read_driven(folder: Path) -> list[Any] | None:
    """The plots of the folder's driven.json as written (None without one); LessonDataError when unreadable."""
    path = folder / DRIVEN_FILE
    if not path.exists():
        return None
    try:
        plots = json.loads(path.read_text(encoding="utf-8")).get("plots")
    except (OSError, ValueError, AttributeError) as error:
        raise LessonDataError(f"must be a JSON object {{\"plots\": [...]}} ({error})") from None
    if not isinstance(plots, list):
        raise LessonDataError('must hold {"plots": [...]}, a list of driven plots')
    return plots


def driven_problems(folder: Path, add: Callable[..., None]) -> None:
    """Check the folder's driven.json (if any); `add(path, message, line=...)` records each problem."""
    path = folder / DRIVEN_FILE
    try:
        plots = read_driven(folder)
    except LessonDataError as error:
        add(path, str(error), line=1)
        return
    seen: set[str] = set()
    for spec in plots or []:
        try:
            _check_spec(spec)
            if spec["name"] in seen:
                raise LessonDataError(f"two driven plots are named {spec['name']!r}; each needs a name of its own")
            seen.add(spec["name"])
        except LessonDataError as error:
            add(path, str(error))


def driven_plots(folder: Path) -> list[dict[str, Any]]:
    """The folder's driven plots as the page builds its sliders: [{"name", "kind", "section", "title",
    "controls": [{"name", "label", "values", "start"}]}] (only the controls the file lists)."""
    out = []
    for spec in read_driven(folder) or []:
        controls = [{"name": control, "label": LIMITS[spec["kind"]][control][0], "values": [float(v) for v in stops["values"]],
                     "start": float(stops["start"])} for control, stops in spec.get("controls", {}).items()]
        out.append({key: spec[key] for key in ("name", "kind", "section", "title")} | {"controls": controls})
    return out


# --- computing a plot ---------------------------------------------------------------------------------


@costs_cpu
def drive(spec: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """The plot of `spec` for the controls' `values` ({control: number}; one left out takes its start, or
    the kind's default); DrivenError names a control that is unknown or out of its limits."""
    kind = spec["kind"]
    unknown = set(values) - set(LIMITS[kind])
    if unknown:
        raise DrivenError(f"unknown control {sorted(unknown)[0]!r}: a {kind} plot's controls are {', '.join(LIMITS[kind])}",
                          field="values")
    chosen = {}
    for control, (_, _, _, default, _) in LIMITS[kind].items():
        start = spec.get("controls", {}).get(control, {}).get("start", default)
        chosen[control] = _control_value(kind, control, values.get(control, start))
    return {"descent": _descent, "network": _network, "slope": _slope}[kind](spec, chosen) | {
        "kind": kind, "name": spec["name"], "chosen": chosen}


def _descent(spec: dict[str, Any], chosen: dict[str, float]) -> dict[str, Any]:
    """Gradient descent from (w, b) = chosen start; frames up to the first that overflows (a rate too
    large diverges: the frames show it climbing, and `diverged` says it left the numbers behind)."""
    xs, ys, steps = spec.get("xs"), spec.get("ys"), spec.get("steps")
    if not isinstance(xs, list) or not isinstance(ys, list) or len(xs) != len(ys) or len(xs) < 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in xs + ys):
        raise DrivenError("xs and ys must be lists of numbers of the same length, at least two points")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_FIT_STEPS:
        raise DrivenError(f"steps must be a whole number from 1 to {MAX_FIT_STEPS}")
    frames = fit_line_history(xs, ys, chosen["lr"], steps, start=(chosen["w"], chosen["b"]))
    cut = next((k for k, f in enumerate(frames) if not all(math.isfinite(f[key]) for key in ("w", "b", "loss"))),
               len(frames))
    return {"xs": [float(x) for x in xs], "ys": [float(y) for y in ys], "steps": steps, "frames": frames[:cut],
            "diverged": cut < len(frames), "surface": _surface(spec, xs, ys)}


def _surface(spec: dict[str, Any], xs: list[float], ys: list[float]) -> dict[str, Any]:
    """The loss over a box of (w, b), each (cells + 1)^2 grid point one forward pass of the engine's loss
    graph, and each point's band between SURFACE_LEVELS levels spaced evenly on a log scale."""
    box = spec.get("surface")
    if not isinstance(box, dict) or set(box) != {"w", "b"} or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                             and abs(v) <= EXPLORE_LIMIT for v in pair)
            and pair[0] < pair[1] for pair in box.values()):
        raise DrivenError(f"surface must be {{\"w\": [low, high], \"b\": [low, high]}}, each low below high, within "
                          f"{format_number(EXPLORE_LIMIT)}")
    (w0, w1), (b0, b1) = box["w"], box["b"]
    cells = SURFACE_CELLS
    ws = [w0 + (w1 - w0) * a / cells for a in range(cells + 1)]
    bs = [b1 - (b1 - b0) * k / cells for k in range(cells + 1)]  # rows from the top
    losses = [line_loss(xs, ys, w, b)[0].data for b in bs for w in ws]
    low, high = math.log10(max(min(losses), 1e-12)), math.log10(max(losses))
    levels = [10.0 ** (low + (high - low) * k / SURFACE_LEVELS) for k in range(1, SURFACE_LEVELS)]
    bands = [sum(loss > level for level in levels) for loss in losses]
    best = min(range(len(losses)), key=losses.__getitem__)
    return {"box": {"w0": float(w0), "w1": float(w1), "b0": float(b0), "b1": float(b1)}, "cells": cells,
            "levels": levels, "bands": bands, "lowest": {"w": ws[best % (cells + 1)], "b": bs[best // (cells + 1)],
                                                          "loss": losses[best]}}


def _network(spec: dict[str, Any], chosen: dict[str, float]) -> dict[str, Any]:
    width = int(chosen["width"])
    boundary = {"samples": spec.get("samples", 40), "noise": spec.get("noise", 0.1), "seed": spec.get("data_seed", 1),
                "cells": spec.get("cells", 16),
                "runs": [{"name": "network", "label": f"{width} neurons per hidden layer", "sizes": [width, width, 1],
                          "activation": "relu", "lr": chosen["lr"], "steps": spec.get("steps"),
                          "every": spec.get("every", 1)}]}
    try:
        plot = plot_boundary.boundary_plot(boundary, init_seed=int(chosen["seed"]))
    except LessonDataError as error:
        raise DrivenError(str(error).removeprefix("plot: ")) from None
    run = plot.pop("runs")[0]
    return plot | {"run": run}


def _slope(spec: dict[str, Any], chosen: dict[str, float]) -> dict[str, Any]:
    """The nudge plot (lessons.plot_nudge) of the chosen h and of every h of H_SWEEP, at the chosen x."""
    sweep = [{"name": f"h{k}", "h": h} for k, h in enumerate(H_SWEEP)]
    assert len(sweep) < MAX_NUDGES  # the sweep and the chosen nudge fit one nudge plot
    try:
        plot = nudge_plot({"expression": spec.get("expression"), "at": chosen["at"],
                           "nudges": [{"name": "chosen", "h": chosen["h"]}, *sweep]})
    except LessonDataError as error:
        raise DrivenError(str(error).removeprefix("plot: ")) from None
    chosen_row, *rows = plot["nudges"]
    return plot | {"chosen_nudge": chosen_row, "nudges": rows}
