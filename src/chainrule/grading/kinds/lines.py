"""Case kinds on fitting a line y = w*x + b to points by the mean squared error.

    line-loss-grad    {"name", "xs", "ys", "w", "b"}; call f(xs, ys, w, b); expect [loss, dw, db] of the
                      mean squared error of the line y = w*x + b.
    line-fit          {"name", "xs", "ys", "lr", "steps"}; call f(xs, ys, lr, steps); expect [w, b] after
                      `steps` full-batch gradient-descent steps from w = b = 0.
"""

from __future__ import annotations

from chainrule.grading.json_objects import Case, JsonList
from chainrule.grading.kinds.base import (
    Attempt,
    CaseError,
    CaseKind,
    Fills,
    Mistake,
    Recogniser,
    not_a_number,
    not_finite,
    number_field,
    numbers_field,
)
from chainrule.grading.line_fit import fit_line_history, loss_and_gradient

__all__ = ["LINE_KINDS", "fit_variant", "FIT_VARIANTS"]

NOT_FINITE = "A number is NaN or infinite: check for a division by zero, or values that grow without bound."


def _line(case: Case) -> tuple[list[float], list[float]]:
    xs, ys = numbers_field(case, "xs"), numbers_field(case, "ys")
    if len(xs) != len(ys):
        raise CaseError(f"'xs' and 'ys' must be as long as each other, not {len(xs)} and {len(ys)}")
    return xs, ys


def _fit_args(case: Case) -> JsonList:
    xs, ys = _line(case)
    steps = case.get("steps")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= 10_000:
        raise CaseError(f"'steps' must be a whole number from 0 to 10000, not {steps!r}")
    return [xs, ys, number_field(case, "lr"), steps]


def _fit_expected(case: Case) -> list[float]:
    xs, ys, lr, steps = _fit_args(case)
    last = fit_line_history(xs, ys, lr, steps)[-1]
    return [last["w"], last["b"]]


def fit_variant(xs: list[float], ys: list[float], lr: float, steps: int, variant: str) -> list[float]:
    """[w, b] after the mistaken fits a learner may write instead of full-batch descent."""
    n = len(xs)
    w = b = 0.0
    for _ in range(steps):
        if variant in ("per-point", "per-point-mean"):
            scale = 2.0 / n if variant == "per-point-mean" else 2.0
            for x, y in zip(xs, ys):
                r = w * x + b - y
                w, b = w - lr * scale * r * x, b - lr * scale * r
            continue
        residuals = [w * x + b - y for x, y in zip(xs, ys)]
        dw = sum(r * x for r, x in zip(residuals, xs))
        db = sum(residuals)
        if variant == "no-two-over-n":
            w, b = w - lr * dw, b - lr * db
        elif variant == "no-over-n":
            w, b = w - lr * 2.0 * dw, b - lr * 2.0 * db
        elif variant == "sequential":
            w = w - lr * 2.0 / n * dw
            db = sum(w * x + b - y for x, y in zip(xs, ys))
            b = b - lr * 2.0 / n * db
        elif variant == "sign-flipped-step":
            w, b = w + lr * 2.0 / n * dw, b + lr * 2.0 / n * db
    return [w, b]


FIT_VARIANTS = {
    "per-point": ("Your numbers match an update after every single point (stochastic gradient descent). "
                  "This exercise is full batch: add up the gradient over all n points first, scale it by 2/n, "
                  "then update w and b once per step.", "an update after every point"),
    "per-point-mean": ("Your numbers match an update after every single point (stochastic gradient descent), "
                       "each with its share of the mean. This exercise is full batch: add up the gradient over "
                       "all n points first, then update w and b once per step.",
                       "an update after every point, each scaled by 2/n"),
    "no-two-over-n": ("Your numbers match a step that uses the plain sum: the gradient of the mean squared "
                      "error is (2/n) times it.", "the gradient without its factor 2/n"),
    "no-over-n": ("Your numbers match a step with 2 times the sum but without dividing by n: the loss is the "
                  "mean over the n points, so its gradient is (2/n) times the sum.", "the gradient without /n"),
    "sequential": ("Your numbers match an update of b that already used the new w: compute dw and db from "
                   "the same w and b, then update both.", "b updated with the new w"),
    "sign-flipped-step": ("Your numbers match a step up the slope: gradient descent subtracts, w -= lr * dw "
                          "and b -= lr * db.", "w += lr * dw instead of -="),
}


def _fit_mistake(variant: str) -> Mistake:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        xs, ys, lr, steps = attempt.args
        return {} if len(attempt.got) == 2 and attempt.close_to(fit_variant(xs, ys, lr, steps, variant)) else None

    message, about = FIT_VARIANTS[variant]
    return Mistake(variant, message, recognise, about=about)


def _length(count: int) -> Recogniser:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        return {} if len(attempt.got) != count else None

    return recognise


def _loss_args(case: Case) -> JsonList:
    xs, ys = _line(case)
    return [xs, ys, number_field(case, "w"), number_field(case, "b")]


def _scaled(attempt: Attempt, factors: list[float]) -> bool:
    return len(attempt.got) == 3 and attempt.matches([f * w for f, w in zip(factors, attempt.want)]) and not (
        attempt.matches(attempt.want))


def _sum_not_mean(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    n = len(attempt.inputs["xs"])
    return {} if _scaled(attempt, [n, n, n]) else None


def _summed_loss(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    n = len(attempt.inputs["xs"])
    return {} if _scaled(attempt, [n, 1, 1]) else None


def _half(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if _scaled(attempt, [1, 0.5, 0.5]) else None


def _gradient_sign(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    return {} if _scaled(attempt, [1, -1, -1]) else None


LINE_KINDS = (
    CaseKind(
        "line-loss-grad", _loss_args, lambda case: loss_and_gradient(*_loss_args(case)),
        lambda case: ["loss", "d loss/d w", "d loss/d b"],
        (
            Mistake("wrong-length", "Return the list [loss, dw, db].", _length(3), about="not three numbers"),
            not_a_number(), not_finite(NOT_FINITE),
            Mistake("sum-not-mean", "Your numbers are n times too big: the loss is the mean over the points, so "
                    "divide the sum by n.", _sum_not_mean, about="loss and gradient summed, not averaged"),
            Mistake("summed-loss", "Your loss is n times too big while its gradients are right: the loss is the "
                    "mean of the squared residuals, so divide their sum by n.", _summed_loss,
                    about="the loss summed, not averaged"),
            Mistake("half-gradient", "The gradients are half what they should be: the derivative of r**2 is 2*r.",
                    _half, about="the 2 of d(r**2)/dr left out"),
            Mistake("gradient-sign", "The gradients have the wrong sign: with r = w*x + b - y, d(r**2)/dw is "
                    "2*r*x (if you wrote r = y - (w*x + b), its derivative brings a minus sign).", _gradient_sign,
                    about="the gradients' sign flipped"),
        ),
    ),
    CaseKind(
        "line-fit", _fit_args, _fit_expected, lambda case: ["w", "b"],
        (Mistake("wrong-length", "Return the list [w, b].", _length(2), about="not two numbers"),)
        + tuple(_fit_mistake(variant) for variant in FIT_VARIANTS)
        + (not_a_number(), not_finite(NOT_FINITE),),
    ),
)
