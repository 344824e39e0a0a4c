# chainrule exercise: classifier-step
"""One gradient-descent step of a three-class linear classifier: dL/dz_k = p_k - y_k for each point, then the
chain rule through z_k = W[k] . x + b[k], averaged over the points."""
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
        for k in range(len(W)):
            dz = (p[k] - (1.0 if k == label else 0.0)) / n
            grad_W[k] = [g + dz * xj for g, xj in zip(grad_W[k], x)]
            grad_b[k] += dz
    new_W = [[w - lr * g for w, g in zip(row, grow)] for row, grow in zip(W, grad_W)]
    new_b = [bk - lr * g for bk, g in zip(b, grad_b)]
    return [loss] + [w for row in new_W for w in row] + new_b
