// chainrule exercise: one-training-step
// One full-batch training step for one neuron. Return [loss, w[0], w[1], ..., b].

export function trainStep(points: number[][], labels: number[], w: number[], b: number, lr: number): number[] {
  const n = points.length;
  let loss = 0, db = 0;
  const dw = w.map(() => 0);
  points.forEach((x, i) => {
    const y = labels[i];
    const s = w.reduce((sum, wj, j) => sum + wj * x[j], 0) + b;
    if (y * s < 1) {
      loss += (1 - y * s) / n;
      for (let j = 0; j < w.length; j += 1) dw[j] += -y * x[j] / n;
      db += -y / n;
    }
  });
  return [loss, ...w.map((wj, j) => wj - lr * dw[j]), b - lr * db];
}
