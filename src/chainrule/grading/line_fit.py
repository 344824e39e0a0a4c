"""Fitting a line y = w*x + b by full-batch gradient descent on the mean squared error, with the engine.

    from chainrule.grading.line_fit import line_loss, fit_line_history
    loss, w, b = line_loss([0, 1], [1, 3], 0.0, 0.0)     # Values: loss.backward() fills w.grad, b.grad
    history = fit_line_history([0, 1], [1, 3], lr=0.1, steps=20)

Every gradient here comes from a backward pass over the loss graph, never from a typed-in formula,
so the lesson's numbers and the graded exercises' expected numbers are the engine's own.
"""

from __future__ import annotations

from typing import Sequence

from chainrule.engine import Value

__all__ = ["line_loss", "loss_and_gradient", "fit_line_history"]


def line_loss(xs: Sequence[float], ys: Sequence[float], w: float, b: float) -> tuple[Value, Value, Value]:
    """(loss, w, b): the graph of mean((w*x + b - y)^2) over the points, w and b as leaf Values."""
    if len(xs) != len(ys) or not xs:
        raise ValueError(f"a line fit needs as many ys as xs and at least one point, not {len(xs)} and {len(ys)}")
    w_leaf, b_leaf = Value(float(w), label="w"), Value(float(b), label="b")
    total = Value(0.0)
    for x, y in zip(xs, ys):
        residual = w_leaf * float(x) + b_leaf - float(y)
        total = total + residual * residual
    return total / len(xs), w_leaf, b_leaf


def loss_and_gradient(xs: Sequence[float], ys: Sequence[float], w: float, b: float) -> list[float]:
    """[loss, d loss/d w, d loss/d b] at (w, b), by one backward pass."""
    loss, w_leaf, b_leaf = line_loss(xs, ys, w, b)
    loss.backward()
    return [loss.data, w_leaf.grad, b_leaf.grad]


def fit_line_history(xs: Sequence[float], ys: Sequence[float], lr: float, steps: int,
                     start: tuple[float, float] = (0.0, 0.0)) -> list[dict[str, float]]:
    """Start at (w, b) = start (w = b = 0 unless a driven plot chooses); each step takes the gradient over all points and moves against it.

    Returns steps + 1 rows {"step", "w", "b", "loss"}: row k holds w and b after k steps and the loss
    there (row 0 is the start). Diverging runs are returned as they are; callers pick few enough steps.
    """
    w, b = float(start[0]), float(start[1])
    rows = []
    for step in range(steps + 1):
        loss, dw, db = loss_and_gradient(xs, ys, w, b)
        rows.append({"step": step, "w": w, "b": b, "loss": loss})
        w, b = w - lr * dw, b - lr * db
    return rows
