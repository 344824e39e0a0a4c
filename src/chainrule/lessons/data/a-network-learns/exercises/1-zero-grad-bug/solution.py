# chainrule exercise: zero-grad-bug
"""A training loop for one neuron: forward pass, loss, gradient and update, every step.

The neuron scores a point x as s = w[0]*x[0] + w[1]*x[1] + b. A point with label y (1 or -1) is on
its side with room to spare once y*s >= 1. The batch's loss is the mean of max(0, 1 - y*s).
train() returns the loss of every step (before its update), then the weights and the bias at the end.
"""


def train(points, labels, w, b, lr, steps):
    w = list(w)
    n = len(points)
    losses = []
    for step in range(steps):
        grad_w = [0.0] * len(w)
        grad_b = 0.0
        loss = 0.0
        for x, y in zip(points, labels):
            # Forward: the score, and this point's share of the mean loss.
            s = sum(wi * xi for wi, xi in zip(w, x)) + b
            loss += max(0.0, 1 - y * s) / n
            # Backward: this point's share of the gradient; a point past the margin adds nothing.
            if y * s < 1:
                for j in range(len(w)):
                    grad_w[j] += -y * x[j] / n
                grad_b += -y / n
        losses.append(loss)
        # Update: one step against the gradient.
        for j in range(len(w)):
            w[j] -= lr * grad_w[j]
        b -= lr * grad_b
    return losses + w + [b]
