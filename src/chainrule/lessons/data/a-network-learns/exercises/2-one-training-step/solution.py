# chainrule exercise: one-training-step
"""One full-batch training step for one neuron. Return [loss, w[0], w[1], ..., b]."""


def train_step(points, labels, w, b, lr):
    n = len(points)
    loss, dw, db = 0.0, [0.0] * len(w), 0.0
    for x, y in zip(points, labels):
        s = sum(wj * xj for wj, xj in zip(w, x)) + b
        if y * s < 1:
            loss += (1 - y * s) / n
            for j in range(len(w)):
                dw[j] += -y * x[j] / n
            db += -y / n
    return [loss] + [wj - lr * g for wj, g in zip(w, dw)] + [b - lr * db]
