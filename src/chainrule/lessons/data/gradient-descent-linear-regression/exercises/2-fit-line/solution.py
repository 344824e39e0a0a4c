# chainrule exercise: fit-line


def fit_line(xs, ys, lr, steps):
    n = len(xs)
    w, b = 0.0, 0.0
    for _ in range(steps):
        residuals = [w * x + b - y for x, y in zip(xs, ys)]
        dw = 2 / n * sum(r * x for r, x in zip(residuals, xs))
        db = 2 / n * sum(residuals)
        w, b = w - lr * dw, b - lr * db
    return [w, b]
