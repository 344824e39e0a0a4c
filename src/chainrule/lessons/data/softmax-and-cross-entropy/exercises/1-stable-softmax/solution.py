# chainrule exercise: stable-softmax
"""A stable softmax: subtract the largest score first, so the largest exponential is exp(0) = 1."""
import math


def softmax(logits):
    top = max(logits)
    exps = [math.exp(z - top) for z in logits]
    total = sum(exps)
    return [e / total for e in exps]
