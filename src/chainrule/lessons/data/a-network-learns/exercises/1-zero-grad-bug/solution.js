// chainrule exercise: zero-grad-bug
// A training loop for one neuron: forward pass, loss, gradient and update, every step.
//
// The neuron scores a point x as s = w[0]*x[0] + w[1]*x[1] + b. A point with label y (1 or -1) is on
// its side with room to spare once y*s >= 1. The batch's loss is the mean of max(0, 1 - y*s).
// train() returns the loss of every step (before its update), then the weights and the bias at the end.

function train(points, labels, w, b, lr, steps) {
  w = [...w];
  const n = points.length;
  const losses = [];
  for (let step = 0; step < steps; step += 1) {
    const gradW = w.map(() => 0);
    let gradB = 0;
    let loss = 0;
    points.forEach((x, i) => {
      const y = labels[i];
      // Forward: the score, and this point's share of the mean loss.
      const s = w.reduce((sum, wj, j) => sum + wj * x[j], 0) + b;
      loss += Math.max(0, 1 - y * s) / n;
      // Backward: this point's share of the gradient; a point past the margin adds nothing.
      if (y * s < 1) {
        for (let j = 0; j < w.length; j += 1) gradW[j] += -y * x[j] / n;
        gradB += -y / n;
      }
    });
    losses.push(loss);
    // Update: one step against the gradient.
    for (let j = 0; j < w.length; j += 1) w[j] -= lr * gradW[j];
    b -= lr * gradB;
  }
  return [...losses, ...w, b];
}
