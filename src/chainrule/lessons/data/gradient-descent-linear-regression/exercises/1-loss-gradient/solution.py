# chainrule exercise: loss-gradient


def loss_and_gradient(xs, ys, w, b):
    n = len(xs)
    residuals = [w * x + b - y for x, y in zip(xs, ys)]
    loss = sum(r * r for r in residuals) / n
    dw = 2 / n * sum(r * x for r, x in zip(residuals, xs))
    db = 2 / n * sum(residuals)
    return [loss, dw, db]
