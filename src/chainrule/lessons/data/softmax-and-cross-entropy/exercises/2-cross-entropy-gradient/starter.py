# chainrule exercise: cross-entropy-gradient
"""cross_entropy_grad(logits, target): dL/dz_k for L = -log softmax(z)[target]."""
import math


def cross_entropy_grad(logits, target):
    exps = [math.exp(z) for z in logits]   # TODO: stable for large scores?
    total = sum(exps)
    p = [e / total for e in exps]
    grad = [0.0 for _ in logits]           # TODO: the gradient is p - y
    return grad
