// chainrule exercise: one-training-step
// One full-batch training step for one neuron. Return [loss, w[0], w[1], ..., b].
//
// Score: s = w[0]*x[0] + w[1]*x[1] + ... + b.  Loss: the mean over the n points of max(0, 1 - y*s).
// Gradient: a point with y*s < 1 adds -y*x[j]/n to dw[j] and -y/n to db; the others add nothing.
// Update: w[j] - lr*dw[j] and b - lr*db. The loss you return is the one before the update.

export function trainStep(points: number[][], labels: number[], w: number[], b: number, lr: number): number[] {
  // TODO: the forward pass, the loss, the gradient and the update
  return [0, ...w, b];
}
