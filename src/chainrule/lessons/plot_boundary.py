"""The decision-boundary plot: small networks learning the two moons, trained by the engine's own nn.

    {"kind": "boundary", "samples": 40, "noise": 0.1, "seed": 1, "cells": 16,
     "runs": [{"name": "network", "label": "a small network", "sizes": [8, 8, 1], "activation": "relu",
               "lr": 1.0, "steps": 60, "every": 3}, ...]}

The points are `chainrule.datasets.moons(samples, noise, seed)` (labels -1 and +1). Each run is a
`chainrule.nn.MLP(2, sizes, activation)` initialised from `random.Random(seed)`, trained by full-batch
gradient descent (`chainrule.optim.SGD`) on the max-margin loss `chainrule.losses.max_margin`: every step
one forward pass over the whole batch, zero_grad, the gradient, step (the batch replayed by
`chainrule.compile`, see `train_run`). Every `every` steps (and after the last)
a frame keeps the loss and the accuracy of the model at that moment and its score on a grid of
(cells + 1)^2 points over the data's box, row by row from the top; the page draws where the score is
positive and the line where it is 0.

Placeholders: {{plot.<run>.<field>}} with field lr, steps, parameters, loss, start_loss, accuracy or
start_accuracy (accuracies in percent), and {{plot.data.points}}.
"""

from __future__ import annotations

import math
import random
from typing import Any

from chainrule.datasets import moons
from chainrule.lessons.text import LessonDataError
from chainrule.losses import max_margin
from chainrule.nn import ACTIVATIONS, MLP
from chainrule.optim import SGD

__all__ = ["BOUNDARY_FIELDS", "boundary_number", "boundary_plot", "train_run"]

BOUNDARY_FIELDS = ("lr", "steps", "parameters", "loss", "start_loss", "accuracy", "start_accuracy", "points")
MAX_SAMPLES = 200
MAX_STEPS = 300
MAX_CELLS = 32
MAX_PARAMETERS = 400
MARGIN = 0.5  # around the data, as chainrule.plot draws it
SCORE_DIGITS = 4  # the grid's scores only place the boundary: four decimals are plenty


def _whole(spec: dict[str, Any], key: str, low: int, high: int, where: str, default: int | None = None) -> int:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LessonDataError(f"plot: {where}{key} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _real(spec: dict[str, Any], key: str, where: str, default: float | None = None) -> float:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise LessonDataError(f"plot: {where}{key} must be a finite number of at least 0, not {value!r}")
    return float(value)


def _box(points: list[tuple[float, float]]) -> dict[str, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return {"x0": min(xs) - MARGIN, "x1": max(xs) + MARGIN, "y0": min(ys) - MARGIN, "y1": max(ys) + MARGIN}


def _grid_lines(box: dict[str, float], cells: int) -> tuple[list[float], list[float]]:
    """The grid's cells + 1 columns (x, left to right) and rows (y, from the top)."""
    return ([box["x0"] + (box["x1"] - box["x0"]) * a / cells for a in range(cells + 1)],
            [box["y1"] - (box["y1"] - box["y0"]) * b / cells for b in range(cells + 1)])


def _grid(box: dict[str, float], cells: int) -> list[tuple[float, float]]:
    """(cells + 1)^2 points, row by row from the top, left to right."""
    xs, ys = _grid_lines(box, cells)
    return [(x, y) for y in ys for x in xs]


def train_run(points: list[tuple[float, float]], labels: list[int], sizes: list[int], activation: str, lr: float,
              steps: int, seed: int, every: int = 1, grid: list[tuple[float, float]] | None = None
              ) -> tuple[MLP, list[dict[str, Any]]]:
    """Train a fresh MLP(2, sizes) on the points; (the model, its frames {"step", "loss", "accuracy"[,
    "scores"]}) after 0, every, 2 every, ... steps and after the last.

    Each step is one pass over the whole batch: the loss (the max-margin loss, the mean over the points),
    its gradient with respect to every parameter, then SGD's update. The batch is replayed with
    `chainrule.compile` (the graph of one example, traced once, run over all the points with NumPy): the
    numbers of eager mode, a hundred times faster, so that the lesson opens at once."""
    import numpy as np

    from chainrule.compiled import compile

    model = MLP(2, sizes, activation=activation, rng=random.Random(seed))
    parameters = model.parameters()
    share = 1.0 / len(points)
    example_loss = compile(lambda x, y, label: max_margin([model([x, y])[0]], [label]) * share, parameters)
    score = compile(lambda x, y: model([x, y])[0], parameters)
    xs, ys = np.array([p[0] for p in points]), np.array([p[1] for p in points])
    targets = np.array(labels, dtype=float)
    optimizer = SGD(parameters, lr=lr)
    frames: list[dict[str, Any]] = []
    for step in range(steps + 1):
        losses, grads = example_loss.value_and_grad(xs, ys, targets)
        if step % every == 0 or step == steps:
            correct = int(((score.values(xs, ys) > 0.0) == (targets > 0)).sum())
            frame: dict[str, Any] = {"step": step, "loss": float(losses.sum()), "accuracy": 100.0 * correct / len(labels)}
            if grid is not None:
                scores = score.values(np.array([g[0] for g in grid]), np.array([g[1] for g in grid]))
                frame["scores"] = [round(float(s), SCORE_DIGITS) + 0.0 for s in scores]
            frames.append(frame)
        if step == steps:
            break
        optimizer.zero_grad()
        for parameter, gradient in zip(parameters, grads.tolist()):
            parameter.grad += gradient
        optimizer.step()
    return model, frames


def boundary_plot(spec: dict[str, Any], init_seed: int | None = None) -> dict[str, Any]:
    """(init_seed: the networks' starting weights' seed, when not the data's: a driven plot's choice.)
    {"kind", "points", "labels", "box", "cells", "columns": [{"x"}], "rows": [{"y"}] (the grid's, rows from
    the top), "runs": [{"name", "label", "sizes", "activation", "lr", "steps", "parameters",
    "frames": [{"step", "loss", "accuracy", "scores"}]}]}."""
    samples = _whole(spec, "samples", 4, MAX_SAMPLES, "")
    noise = _real(spec, "noise", "", 0.1)
    seed = _whole(spec, "seed", 0, 2**31, "", 0)
    cells = _whole(spec, "cells", 4, MAX_CELLS, "", 16)
    points, labels = moons(samples, noise, seed)
    box = _box(points)
    grid = _grid(box, cells)
    runs = spec.get("runs")
    if not isinstance(runs, list) or not runs:
        raise LessonDataError("plot: runs must be a non-empty list of {name, label, sizes, lr, steps}")
    out: list[dict[str, Any]] = []
    for run in runs:
        name = run.get("name") if isinstance(run, dict) else None
        if not isinstance(name, str) or not name or name == "data" or not isinstance(run.get("label"), str) \
                or any(r["name"] == name for r in out):
            raise LessonDataError(f"plot: every run needs a name of its own (not \"data\") and a label, not {run!r}")
        where = f"run {name!r}: "
        sizes = run.get("sizes")
        if not isinstance(sizes, list) or not sizes or sizes[-1] != 1 or any(
                isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 32 for n in sizes):
            raise LessonDataError(f"plot: {where}sizes must list the layers' widths (1 to 32), the last one 1")
        activation = run.get("activation", "relu")
        if activation not in ACTIVATIONS:
            raise LessonDataError(f"plot: {where}activation must be one of {', '.join(ACTIVATIONS)}")
        widths = [2, *sizes]
        parameters = sum((widths[k] + 1) * widths[k + 1] for k in range(len(sizes)))
        if parameters > MAX_PARAMETERS:
            raise LessonDataError(f"plot: {where}the network has {parameters} parameters; at most {MAX_PARAMETERS}")
        lr = _real(run, "lr", where)
        steps = _whole(run, "steps", 1, MAX_STEPS, where)
        every = _whole(run, "every", 1, steps, where, 1)
        _, frames = train_run(points, labels, sizes, activation, lr, steps, seed if init_seed is None else init_seed,
                              every, grid)
        if not all(math.isfinite(frame["loss"]) for frame in frames):
            raise LessonDataError(f"plot: run {name!r} overflows; take fewer steps or a smaller learning rate")
        out.append({"name": name, "label": run["label"], "sizes": sizes, "activation": activation, "lr": lr,
                    "steps": steps, "parameters": parameters, "frames": frames})
    xs, ys = _grid_lines(box, cells)
    return {"kind": "boundary", "points": [list(p) for p in points], "labels": labels, "box": box, "cells": cells,
            "columns": [{"x": x} for x in xs], "rows": [{"y": y} for y in ys], "runs": out}


def boundary_number(plot: dict[str, Any], name: str, field: str) -> float:
    if name == "data" and field == "points":
        return len(plot["points"])
    run = next((run for run in plot["runs"] if run["name"] == name), None)
    if run is None or field not in BOUNDARY_FIELDS or field == "points":
        raise KeyError(f"plot.{name}.{field}")
    if field in ("lr", "steps", "parameters"):
        return run[field]
    frame = run["frames"][0 if field.startswith("start_") else -1]
    return frame[field.removeprefix("start_")]
