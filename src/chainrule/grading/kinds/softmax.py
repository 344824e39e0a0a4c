"""Case kinds on many classes: a stable softmax, the cross-entropy gradient p - y, and one step of a linear classifier.

    softmax          {"name", "logits": [z1, ...]}; call f(logits); expect softmax(z), each p_k = exp(z_k - logsumexp(z))
                     with the log-sum-exp from the engine (`chainrule.losses.logsumexp`).
    softmax-ce-grad  {"name", "logits", "target"} (a class index); call f(logits, target); expect dL/dz_k for
                     L = cross-entropy of softmax(z) against the target, from one backward pass through
                     `chainrule.losses.softmax_cross_entropy`.
    softmax-step     {"name", "points": [[x1, x2], ...], "labels": [class, ...], "W": [[...] per class], "b": [...], "lr"};
                     call f(points, labels, W, b, lr); expect [the mean loss before the step, then W row by row and
                     b after one full-batch gradient-descent step], scores z_k = W_k . x + b_k, all on Values.

The mistakes are replayed on plain floats: an exponential of a large logit that overflows, y never subtracted,
a flipped sign, a step up the slope, a sum instead of a mean, the loss read after the update.
"""

from __future__ import annotations

import math
import sys
from typing import Callable

from chainrule.engine import Value
from chainrule.grading.json_objects import Case, JsonObject
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
    sign_flipped,
)
from chainrule.grading.kinds.slopes import wrong_length
from chainrule.losses import logsumexp, softmax_cross_entropy

__all__ = ["SOFTMAX_KINDS", "softmax_step_variant"]

# Past this, exp(z) is larger than the largest float: Python raises OverflowError, JavaScript gives Infinity.
EXP_OVERFLOWS_ABOVE = math.log(sys.float_info.max)
MAX_CLASSES = 10
UNSTABLE = ("exp of a large logit is larger than any float can hold: it overflows to infinity (Python raises "
            "OverflowError), and infinity / infinity is NaN. Subtract the largest logit from every logit first: "
            "softmax does not change, and the largest exponential becomes exp(0) = 1.")
NOT_FINITE = "A number is NaN or infinite: check for an exponential of a large number, or a division by zero."


def _logits(case: Case, key: str = "logits") -> list[float]:
    logits = numbers_field(case, key, at_least=2)
    if len(logits) > MAX_CLASSES:
        raise CaseError(f"{key!r} may hold at most {MAX_CLASSES} class scores, not {len(logits)}")
    return logits


def _class_index(value: object, classes: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < classes:
        raise CaseError(f"{what} must be a class index from 0 to {classes - 1}, not {value!r}")
    return value


def _engine_softmax(logits: list[float]) -> list[float]:
    nodes = [Value(z) for z in logits]
    total = logsumexp(nodes)
    return [(z - total).exp().data for z in nodes]


def _overflows(logits: list[float]) -> bool:
    return max(logits) > EXP_OVERFLOWS_ABOVE


def _unstable(logits_of: Callable[[Case], list[float]]) -> Mistake:
    """NaN or infinity from a case whose largest logit overflows exp, or Python's OverflowError there."""
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        bad = any(math.isnan(x) or math.isinf(x) for x in attempt.got)
        return {} if bad and _overflows(logits_of(attempt.inputs)) else None

    def raised(error: JsonObject, case: Case) -> Fills | None:
        return {} if error.get("type") == "OverflowError" and _overflows(logits_of(case)) else None

    return Mistake("unstable-exp", UNSTABLE, recognise, raised=raised,
                   about="exp of a large logit overflowed (inf, NaN or OverflowError)")


def _replayed(wrong: Callable[[Attempt], list[float] | None]) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        numbers = wrong(attempt)
        return {} if numbers is not None and attempt.close_to(numbers) and not attempt.matches(attempt.want) else None

    return recognise


# --------------------------------------------------------------------------------- softmax


def _exp_not_divided(attempt: Attempt) -> list[float] | None:
    logits = _logits(attempt.inputs)
    return None if _overflows(logits) else [math.exp(z) for z in logits]


def _shift_not_divided(attempt: Attempt) -> list[float]:
    top = max(_logits(attempt.inputs))
    return [math.exp(z - top) for z in _logits(attempt.inputs)]


SOFTMAX = CaseKind(
    "softmax",
    lambda case: [_logits(case)],
    lambda case: _engine_softmax(_logits(case)),
    lambda case: [f"p{k}" for k in range(len(case["logits"]))],
    (
        wrong_length(lambda attempt: len(attempt.want), "Return one probability per logit, in the logits' order."),
        _unstable(_logits), not_a_number(), not_finite(NOT_FINITE),
        Mistake("not-normalised", "Your numbers are the exponentials themselves. Divide each by their sum, so "
                "that the probabilities add up to 1.", _replayed(_exp_not_divided),
                about="exp(z_k), not divided by the sum"),
        Mistake("shifted-not-divided", "You subtracted the largest logit (good: nothing overflows) but did not "
                "divide by the sum of the exponentials: the probabilities must add up to 1.",
                _replayed(_shift_not_divided), about="exp(z_k - max z), not divided by the sum"),
    ),
)

# --------------------------------------------------------------------------------- the cross-entropy gradient


def _grad_inputs(case: Case) -> tuple[list[float], int]:
    logits = _logits(case)
    return logits, _class_index(case.get("target"), len(logits), "'target'")


def _engine_grad(logits: list[float], target: int) -> list[float]:
    nodes = [Value(z) for z in logits]
    softmax_cross_entropy([nodes], [target]).backward()
    return [z.grad for z in nodes]


def _probabilities_only(attempt: Attempt) -> list[float]:
    return _engine_softmax(_logits(attempt.inputs))


SOFTMAX_CE_GRAD = CaseKind(
    "softmax-ce-grad",
    lambda case: list(_grad_inputs(case)),
    lambda case: _engine_grad(*_grad_inputs(case)),
    lambda case: [f"dL/dz{k}" for k in range(len(case["logits"]))],
    (
        wrong_length(lambda attempt: len(attempt.want), "Return one gradient per logit, dL/dz_k = p_k - y_k."),
        _unstable(_logits), not_a_number(), not_finite(NOT_FINITE),
        Mistake("forgot-y", "Your numbers are the probabilities p themselves. The gradient is p - y: subtract 1 "
                "at the target class (y is 1 there and 0 everywhere else).", _replayed(_probabilities_only),
                about="p, without y subtracted"),
        sign_flipped("Every gradient has the wrong sign: it is p - y, not y - p. Raising the target's logit "
                     "lowers the loss, so its gradient is negative."),
    ),
)

# --------------------------------------------------------------------------------- one step of a classifier

Batch = tuple[list[list[float]], list[int], list[list[float]], list[float], float]


def _batch(case: Case) -> Batch:
    points = case.get("points")
    if not isinstance(points, list) or not points:
        raise CaseError(f"'points' must be a non-empty list of points (lists of numbers), not {points!r}")
    rows = [numbers_field({"point": p}, "point") for p in points]
    weights = case.get("W")
    if not isinstance(weights, list) or not 2 <= len(weights) <= MAX_CLASSES:
        raise CaseError(f"'W' must hold one row of weights per class, 2 to {MAX_CLASSES} rows, not {weights!r}")
    w = [numbers_field({"row": row}, "row") for row in weights]
    if any(len(row) != len(w[0]) for row in w) or any(len(x) != len(w[0]) for x in rows):
        raise CaseError("every row of 'W' and every point need the same number of coordinates")
    b = numbers_field(case, "b")
    if len(b) != len(w):
        raise CaseError(f"'b' must hold one bias per class ({len(w)}), not {len(b)}")
    labels = case.get("labels")
    if not isinstance(labels, list) or len(labels) != len(rows):
        raise CaseError("'labels' must hold one class index per point")
    classes = [_class_index(label, len(w), "every label") for label in labels]
    lr = number_field(case, "lr")
    if lr <= 0:
        raise CaseError(f"'lr' must be a learning rate above 0, not {lr!r}")
    return rows, classes, w, b, lr


def _engine_step(points: list[list[float]], labels: list[int], w: list[list[float]], b: list[float],
                 lr: float) -> list[float]:
    weights = [[Value(v) for v in row] for row in w]
    biases = [Value(v) for v in b]
    scores = [[sum((wi * xi for wi, xi in zip(row, x)), bias) for row, bias in zip(weights, biases)] for x in points]
    loss = softmax_cross_entropy(scores, labels)
    loss.backward()
    parameters = [v for row in weights for v in row] + biases
    return [loss.data] + [p.data - lr * p.grad for p in parameters]


def softmax_step_variant(points: list[list[float]], labels: list[int], w: list[list[float]], b: list[float],
                         lr: float, variant: str) -> list[float]:
    """What one step with a classic mistake returns, on plain floats (variant "right" has none)."""
    n = len(points)

    def scores(w: list[list[float]], b: list[float], x: list[float]) -> list[float]:
        return [sum(wi * xi for wi, xi in zip(row, x)) + bias for row, bias in zip(w, b)]

    def mean_loss(w: list[list[float]], b: list[float]) -> float:
        total = 0.0
        for x, label in zip(points, labels):
            z = scores(w, b, x)
            top = max(z)
            total += top + math.log(sum(math.exp(v - top) for v in z)) - z[label]
        return total / n

    grad_w = [[0.0] * len(row) for row in w]
    grad_b = [0.0] * len(b)
    share = 1.0 if variant == "summed" else 1.0 / n
    for x, label in zip(points, labels):
        z = scores(w, b, x)
        top = max(z)
        e = [math.exp(v - top) for v in z]
        p = [v / sum(e) for v in e]
        for k in range(len(w)):
            g = p[k] - (0.0 if variant == "forgot-y" else float(k == label))
            grad_w[k] = [gw + share * g * xi for gw, xi in zip(grad_w[k], x)]
            grad_b[k] += share * g
    sign = 1.0 if variant == "ascent" else -1.0
    new_w = [[wi + sign * lr * g for wi, g in zip(row, grow)] for row, grow in zip(w, grad_w)]
    new_b = [bi + sign * lr * g for bi, g in zip(b, grad_b)]
    loss = mean_loss(new_w, new_b) if variant == "loss-after-update" else mean_loss(w, b)
    return [loss] + [v for row in new_w for v in row] + new_b


STEP_VARIANTS: dict[str, tuple[str, str]] = {
    "forgot-y": ("Your numbers match a step whose gradient of the scores is p, not p - y: subtract 1 at each "
                 "point's own class before the gradient reaches W and b.", "the scores' gradient p, without y"),
    "ascent": ("Your numbers match a step up the slope. Gradient descent subtracts: W -= lr × dW and b -= lr × db.",
               "a step with += instead of -="),
    "summed": ("Your numbers match gradients added up over the points but not divided by their number. The loss "
               "is a mean, so each point's share is divided by n.", "the gradient summed, not averaged"),
    "loss-after-update": ("Your loss matches the loss after the update. Report the loss of the forward pass the "
                          "step differentiates, before the weights move.", "the loss read after the update"),
}


def _step_replayed(variant: str) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def wrong(attempt: Attempt) -> list[float]:
        points, labels, w, b, lr = attempt.args
        return softmax_step_variant(points, labels, w, b, lr, variant)

    return _replayed(wrong)


def _step_labels(case: Case) -> list[str]:
    w = case["W"]
    return (["the loss before the step"] + [f"W[{k}][{j}] after" for k in range(len(w)) for j in range(len(w[k]))]
            + [f"b[{k}] after" for k in range(len(w))])


def _not_moved(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    _, _, w, b, _ = attempt.args
    unchanged = attempt.want[:1] + [v for row in w for v in row] + list(b)
    return {} if len(attempt.got) == len(attempt.want) and attempt.matches(unchanged) else None


SOFTMAX_STEP = CaseKind(
    "softmax-step",
    lambda case: list(_batch(case)),
    lambda case: _engine_step(*_batch(case)),
    _step_labels,
    (
        wrong_length(lambda attempt: len(attempt.want), "Return [loss, W row by row, then b]: the loss before the "
                     "step, then every weight and every bias after it, in one list."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("not-moved", "The loss is right but W and b come back as they went in: after the gradient, move "
                "each parameter, W -= lr × dW and b -= lr × db.", _not_moved, about="the parameters never change"),
        *(Mistake(variant, message, _step_replayed(variant), about=about)
          for variant, (message, about) in STEP_VARIANTS.items()),
    ),
)

SOFTMAX_KINDS = (SOFTMAX, SOFTMAX_CE_GRAD, SOFTMAX_STEP)
