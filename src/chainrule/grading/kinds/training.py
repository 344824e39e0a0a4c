"""Case kinds on training one neuron by gradient descent: a linear score s = w . x + b for each point, the
max-margin (hinge) loss L = mean of max(0, 1 - y s) over the batch, labels y of -1 or +1.

    neuron-step    {"name", "points": [[x1, x2, ...], ...], "labels": [-1 | 1, ...], "w": [...], "b", "lr"};
                   call f(points, labels, w, b, lr); expect [the loss before the step, w1, ..., b after one
                   full-batch step].
    neuron-train   the same and "steps"; call f(points, labels, w, b, lr, steps); expect [the loss of every
                   step (before its update), then w1, ..., b after the last one].

The expected numbers come from the engine's own model and training pieces: `chainrule.nn.Neuron` with a
linear activation, `chainrule.losses.max_margin`, `chainrule.optim.SGD` (zero_grad, backward, step).
The mistakes are replayed on plain floats: gradients that are never set back to zero between steps (or
are set to zero for every point), a step up the slope, a sum instead of a mean, points past the margin
counted anyway, and the loss read after the update.
"""

from __future__ import annotations

import random
from typing import Callable

from chainrule.grading.json_objects import Case, JsonList
from chainrule.grading.kinds.base import (
    Attempt,
    CaseError,
    CaseKind,
    Fills,
    Mistake,
    not_a_number,
    not_finite,
    number_field,
    numbers_field,
)

__all__ = ["TRAINING_KINDS", "TRAINING_VARIANTS", "train_on_engine", "train_variant"]

NOT_FINITE = "A number is NaN or infinite: check for a division by zero, or a learning rate so large that the weights blow up."
MAX_STEPS = 500


def _batch(case: Case) -> tuple[list[list[float]], list[float], list[float], float, float]:
    points = case.get("points")
    if not isinstance(points, list) or not points:
        raise CaseError(f"'points' must be a non-empty list of points (lists of numbers), not {points!r}")
    w = numbers_field(case, "w")
    rows = [numbers_field({"point": p}, "point") for p in points]
    if any(len(row) != len(w) for row in rows):
        raise CaseError(f"every point needs {len(w)} coordinates, one per weight in 'w'")
    labels = case.get("labels")
    if not isinstance(labels, list) or len(labels) != len(rows) or any(
            isinstance(y, bool) or y not in (-1, 1) for y in labels):
        raise CaseError("'labels' must hold one label per point, each -1 or 1")
    lr = number_field(case, "lr")
    if lr <= 0:
        raise CaseError(f"'lr' must be a learning rate above 0, not {lr!r}")
    return rows, [float(y) for y in labels], w, number_field(case, "b"), lr


def _steps(case: Case) -> int:
    steps = case.get("steps")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise CaseError(f"'steps' must be a whole number from 1 to {MAX_STEPS}, not {steps!r}")
    return steps


def train_on_engine(points: list[list[float]], labels: list[float], w: list[float], b: float, lr: float,
                    steps: int) -> list[float]:
    """[loss of each step, then the weights and the bias], trained with the engine's nn, loss and optimizer."""
    from chainrule.losses import max_margin
    from chainrule.nn import Neuron
    from chainrule.optim import SGD

    neuron = Neuron(len(w), activation="linear", rng=random.Random(0))
    for parameter, value in zip(neuron.parameters(), [*w, b]):
        parameter.data = float(value)
    optimizer = SGD(neuron.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = max_margin([neuron(point) for point in points], labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.data)
    return losses + [p.data for p in neuron.parameters()]


def train_variant(points: list[list[float]], labels: list[float], w: list[float], b: float, lr: float,
                  steps: int, variant: str) -> list[float]:
    """What a training loop with a classic mistake returns (plain floats; variant "right" has none)."""
    w, n = list(w), len(points)
    grad_w, grad_b = [0.0] * len(w), 0.0
    losses = []

    def loss_at(w: list[float], b: float) -> float:
        return sum(max(0.0, 1 - y * (sum(wi * xi for wi, xi in zip(w, x)) + b)) for x, y in zip(points, labels)) / n

    for _ in range(steps):
        if variant != "never-zeroed":
            grad_w, grad_b = [0.0] * len(w), 0.0
        loss = loss_at(w, b)
        for x, y in zip(points, labels):
            if variant == "zeroed-per-point":
                grad_w, grad_b = [0.0] * len(w), 0.0
            margin = y * (sum(wi * xi for wi, xi in zip(w, x)) + b)
            if margin < 1 or variant == "every-point":
                share = 1.0 if variant == "summed" else 1.0 / n
                grad_w = [g - share * y * xi for g, xi in zip(grad_w, x)]
                grad_b -= share * y
        sign = 1.0 if variant == "ascent" else -1.0
        w = [wi + sign * lr * g for wi, g in zip(w, grad_w)]
        b = b + sign * lr * grad_b
        losses.append(loss_at(w, b) if variant == "loss-after-update" else loss)
    return losses + w + [b]


TRAINING_VARIANTS: dict[str, tuple[str, str]] = {
    "never-zeroed": (
        "Your numbers match a loop that never sets the gradients back to zero: each step adds this step's "
        "gradient on top of every earlier one, so the steps grow and point the wrong way. Set the gradients "
        "to zero at the start of every step, before the points add their shares.",
        "gradients carried over from earlier steps"),
    "zeroed-per-point": (
        "Your numbers match gradients set back to zero for every point, so only the last point's share is "
        "left when the weights move. Zero them once per step, before the loop over the points.",
        "gradients zeroed for every point"),
    "ascent": (
        "Your numbers match a step up the slope. Gradient descent subtracts: w -= lr × dw and b -= lr × db.",
        "a step with += instead of -="),
    "summed": (
        "Your numbers match gradients added up over the points but not divided by their number. The loss is "
        "a mean, so each point's share is divided by n.",
        "the gradient summed, not averaged"),
    "every-point": (
        "Your numbers match a gradient in which every point takes part. A point whose margin y × s is 1 or "
        "more adds nothing to the loss (max(0, 1 - y × s) = 0 there), so it adds nothing to the gradient either.",
        "points past the margin counted in the gradient"),
    "loss-after-update": (
        "Your losses match the loss measured after each update. Record the loss of the forward pass that "
        "the step differentiates, before the weights move.",
        "the loss read after the update"),
}


def _replayed(variant: str) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        points, labels, w, b, lr, *rest = attempt.args
        steps = rest[0] if rest else 1
        return {} if attempt.close_to(train_variant(points, labels, w, b, lr, steps, variant)) else None

    return recognise


def _length(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if len(attempt.got) != len(attempt.want) else None


def _unchanged(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    w, b = attempt.args[2], attempt.args[3]
    return {} if len(attempt.got) == len(attempt.want) and attempt.matches(attempt.want[:-len(w) - 1] + w + [b]) else None


def _mistakes(length_message: str, leave_out: tuple[str, ...] = ()) -> tuple[Mistake, ...]:
    return (
        Mistake("wrong-length", length_message, _length, about="a list of the wrong length"),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("not-moved", "The losses are right but the weights and the bias come back as they went in: after "
                "the gradient, move each parameter, w -= lr × dw and b -= lr × db.", _unchanged,
                about="the parameters never change"),
        *(Mistake(variant, message, _replayed(variant), about=about)
          for variant, (message, about) in TRAINING_VARIANTS.items() if variant not in leave_out),
    )


KINK_GAP = 1e-6  # a margin closer than this to 1 is on the hinge's corner: float rounding may pick either side


def _hinge_corner(case: Case) -> str | None:
    """Why some point's margin y × s comes to 1 (the corner of max(0, 1 - y s)) at some step, else None."""
    points, labels, w, b, lr = _batch(case)
    steps = _steps(case) if "steps" in case else 1
    for step in range(steps):
        margins = [y * (sum(wi * xi for wi, xi in zip(w, x)) + b) for x, y in zip(points, labels)]
        if any(abs(m - 1) < KINK_GAP for m in margins):
            return f"a point's margin y × s is 1, the corner of the hinge loss, at step {step + 1}"
        *w, b = train_variant(points, labels, w, b, lr, 1, "right")[1:]
    return None


def _step_args(case: Case) -> JsonList:
    return list(_batch(case))


def _train_args(case: Case) -> JsonList:
    return [*_batch(case), _steps(case)]


def _parameter_labels(case: Case) -> list[str]:
    return [f"w{i + 1} at the end" for i in range(len(case["w"]))] + ["b at the end"]


TRAINING_KINDS = (
    CaseKind(
        "neuron-step", _step_args, lambda case: train_on_engine(*_batch(case), 1),
        lambda case: ["the loss before the step"] + _parameter_labels(case),
        # One step has no earlier gradient to carry over: never-zeroed cannot show in it.
        _mistakes("Return the list [loss, w1, w2, ..., b]: the loss before the step, then every weight and the "
                  "bias after it.", leave_out=("never-zeroed",)),
        kink=_hinge_corner,
    ),
    CaseKind(
        "neuron-train", _train_args, lambda case: train_on_engine(*_train_args(case)),
        lambda case: [f"the loss of step {k + 1}" for k in range(case["steps"])] + _parameter_labels(case),
        _mistakes("Return one loss per step, then every weight and the bias after the last step, all in one "
                  "list."),
        kink=_hinge_corner,
    ),
)
