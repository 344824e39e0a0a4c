# chainrule exercise: cross-entropy-gradient
"""The gradient of cross-entropy through softmax: p - y, with p from a stable softmax."""
import math


def cross_entropy_grad(logits, target):
    top = max(logits)
    exps = [math.exp(z - top) for z in logits]
    total = sum(exps)
    p = [e / total for e in exps]
    return [pk - (1.0 if k == target else 0.0) for k, pk in enumerate(p)]
