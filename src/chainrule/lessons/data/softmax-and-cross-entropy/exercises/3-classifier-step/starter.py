# chainrule exercise: classifier-step
"""classifier_step(points, labels, W, b, lr): [loss before the step, W row by row, b] after one step of
gradient descent on the mean cross-entropy of the scores z_k = W[k] . x + b[k]."""
import math


def softmax(z):
    top = max(z)
    exps = [math.exp(v - top) for v in z]
    total = sum(exps)
    return [e / total for e in exps]


def classifier_step(points, labels, W, b, lr):
    n = len(points)
    loss = 0.0
    grad_W = [[0.0 for _ in row] for row in W]
    grad_b = [0.0 for _ in b]
    for x, label in zip(points, labels):
        z = [sum(w * xj for w, xj in zip(row, x)) + bk for row, bk in zip(W, b)]
        p = softmax(z)
        loss += -math.log(p[label]) / n
        # TODO: add this point's share of the gradient to grad_W and grad_b (dL/dz_k = p_k - y_k)
    new_W = [list(row) for row in W]   # TODO: step against the gradient
    new_b = list(b)
    return [loss] + [w for row in new_W for w in row] + new_b
