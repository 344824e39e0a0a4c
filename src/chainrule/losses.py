"""Loss functions on lists of `Value`s, numerically stable, with PyTorch's conventions.

Each loss averages over the examples (``reduction="mean"``, the default) or adds them up
(``reduction="sum"``). For n examples with predictions p_i and targets y_i:

* `mse`:  (1/n) sum (p_i - y_i)^2                                    (torch.nn.MSELoss)
* `max_margin` (hinge): (1/n) sum max(0, 1 - y_i s_i), labels y_i in {-1, +1}
  (the loss of micrograd's moons demo; torch: ``(1 - y * s).clamp(min=0).mean()``)
* `bce_with_logits`: (1/n) sum [max(x_i, 0) - x_i y_i + log(1 + exp(-|x_i|))], targets in [0, 1]
  (torch.nn.BCEWithLogitsLoss). This form never exponentiates a positive number, so a logit of
  +-1000 gives a finite loss and the right gradient sigmoid(x) - y.
* `softmax_cross_entropy`: (1/n) sum [logsumexp(z_i) - z_i[t_i]] for class indices t_i, or
  sum_k p_ik (logsumexp(z_i) - z_ik) for class probabilities p_i (torch.nn.CrossEntropyLoss). The
  log-sum-exp is the op table's `logaddexp` folded over the row, each step max + log1p(exp(-|a - b|)),
  so no exponential can overflow and no number is read from the logits: it is the same graph for any
  logits, which makes it traceable by `chainrule.compile` and stable however far the logits move.
* `l2_penalty`: alpha * sum_p p^2 (weight decay written into the loss).

Every loss is built from Values only, so it can be traced: targets and labels may be Values too (a
column of a compiled function); they are checked when they are plain numbers.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from chainrule.engine import Value
from chainrule.number_text import count_text

__all__ = [
    "mse", "max_margin", "hinge", "bce_with_logits", "softmax_cross_entropy", "logsumexp", "l2_penalty",
]

REDUCTIONS = ("mean", "sum")


def _as_value(x: Value | float) -> Value:
    return x if isinstance(x, Value) else Value(x)


def _check_real(y: object, what: str) -> Value | float:
    """A target as given: a Value (checked by nobody: it may be a traced column) or a finite number."""
    if isinstance(y, Value):
        return y
    if isinstance(y, bool) or not isinstance(y, (int, float)) or not math.isfinite(y):
        raise ValueError(f"{what} must be finite numbers (or Values), got {y!r}")
    return float(y)


def _check_pairs(predictions: Sequence[object], targets: Sequence[object], what: str) -> None:
    if len(predictions) != len(targets):
        raise ValueError(
            f"{what}: {count_text(len(predictions), 'prediction')} but {count_text(len(targets), 'target')}; they must match one to one"
        )
    if not predictions:
        raise ValueError(f"{what}: no examples; give at least one prediction and target")


def _reduce(terms: list[Value], reduction: str) -> Value:
    if reduction == "mean":
        return sum(terms[1:], terms[0]) * (1.0 / len(terms))
    if reduction == "sum":
        return sum(terms[1:], terms[0])
    raise ValueError(f"unknown reduction {reduction!r}; choose one of {', '.join(REDUCTIONS)}")


def mse(predictions: Sequence[Value | float], targets: Sequence[float], reduction: str = "mean") -> Value:
    """Mean squared error: (1/n) sum (p_i - y_i)^2."""
    _check_pairs(predictions, targets, "mse")
    terms = []
    for p, y in zip(predictions, targets):
        diff = _as_value(p) - _check_real(y, "mse targets")
        terms.append(diff * diff)
    return _reduce(terms, reduction)


def max_margin(
    scores: Sequence[Value | float], labels: Sequence[float], margin: float = 1.0, reduction: str = "mean"
) -> Value:
    """Hinge loss: (1/n) sum max(0, margin - y_i s_i) for labels y_i in {-1, +1}.

    Zero once every example is on the right side of the boundary by at least the margin.
    """
    _check_pairs(scores, labels, "max_margin")
    terms = []
    for s, y in zip(scores, labels):
        if not isinstance(y, Value):
            if isinstance(y, bool) or y not in (-1, 1):
                raise ValueError(f"max_margin labels must be -1 or +1 (or Values), got {y!r}")
            y = float(y)
        terms.append((margin - y * _as_value(s)).relu())
    return _reduce(terms, reduction)


hinge = max_margin


def bce_with_logits(
    logits: Sequence[Value | float], targets: Sequence[float], reduction: str = "mean"
) -> Value:
    """Binary cross-entropy on raw scores x: (1/n) sum [max(x, 0) - x y + log(1 + exp(-|x|))].

    Equal to -[y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))] but stable at any x. The -|x| is
    built as x - 2 max(x, 0) (the same number) so that at x = 0 the pieces' one-sided slopes add up
    to the true derivative sigmoid(0) - y = 1/2 - y, as in PyTorch.
    """
    _check_pairs(logits, targets, "bce_with_logits")
    terms = []
    for logit, given in zip(logits, targets):
        y = _check_real(given, "bce_with_logits targets")
        if not isinstance(y, Value) and not 0.0 <= y <= 1.0:
            raise ValueError(f"bce_with_logits targets must lie in [0, 1], got {y!r}")
        x = _as_value(logit)
        positive_part = x.relu()
        minus_abs = x - 2.0 * positive_part
        terms.append(positive_part - x * y + (1.0 + minus_abs.exp()).log())
    return _reduce(terms, reduction)


def logsumexp(values: Sequence[Value | float]) -> Value:
    """log(sum_k exp(v_k)), as the op table's `logaddexp` folded over the values: stable at any size
    (as torch.logsumexp) and built from Values only, so it traces."""
    nodes = [_as_value(v) for v in values]
    if not nodes:
        raise ValueError("logsumexp needs at least one value")
    total = nodes[0]
    for v in nodes[1:]:
        total = total.logaddexp(v)
    return total


def softmax_cross_entropy(
    logits: Sequence[Sequence[Value | float]], targets: Sequence[int | Sequence[Value | float]], reduction: str = "mean"
) -> Value:
    """Cross-entropy of softmax(z_i) against target i: (1/n) sum [logsumexp(z_i) - z_i[t_i]].

    ``logits`` holds one list of class scores per example. A target is a class index (an int) or, as
    torch.nn.CrossEntropyLoss allows, a list of class probabilities p_k (numbers or Values, e.g. one-hot
    columns of a compiled function): the loss is then sum_k p_k (logsumexp(z) - z_k).
    """
    _check_pairs(logits, targets, "softmax_cross_entropy")
    terms = []
    for row, t in zip(logits, targets):
        row = [_as_value(z) for z in row]
        if not row:
            raise ValueError("softmax_cross_entropy: each example needs at least one class score")
        log_sum_exp = logsumexp(row)
        if isinstance(t, (list, tuple)):
            if len(t) != len(row):
                raise ValueError(f"softmax_cross_entropy: {len(t)} class probabilities for {len(row)} classes")
            probabilities = [_check_real(p, "softmax_cross_entropy class probabilities") for p in t]
            terms.append(sum((p * (log_sum_exp - z) for p, z in zip(probabilities[1:], row[1:])),
                             probabilities[0] * (log_sum_exp - row[0])))
            continue
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < len(row):
            raise ValueError(
                f"softmax_cross_entropy targets are class indices 0..{len(row) - 1} "
                f"(or lists of class probabilities), got {t!r}"
            )
        terms.append(log_sum_exp - row[t])
    return _reduce(terms, reduction)


def l2_penalty(parameters: Iterable[Value], alpha: float) -> Value:
    """alpha * sum_p p^2: add it to a loss to pull the weights towards 0."""
    params = list(parameters)
    if not params:
        raise ValueError("l2_penalty needs at least one parameter")
    return alpha * sum((p * p for p in params[1:]), params[0] * params[0])
