// chainrule exercise: fit-line
// Fit the line y = w*x + b to the points by full-batch gradient descent on the mean squared error.
//
// Start at w = 0, b = 0. Each step: the gradient over all n points,
//     dw = (2/n) * sum((w*x + b - y) * x),   db = (2/n) * sum(w*x + b - y),
// then w -= lr * dw and b -= lr * db. Return [w, b] after `steps` steps.

function fitLine(xs, ys, lr, steps) {
  let w = 0, b = 0;
  for (let step = 0; step < steps; step += 1) {
    // TODO: one full-batch step
  }
  return [w, b];
}
