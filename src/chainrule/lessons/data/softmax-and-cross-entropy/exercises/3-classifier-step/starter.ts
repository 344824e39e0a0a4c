// chainrule exercise: classifier-step
// classifierStep(points, labels, W, b, lr): [loss before the step, W row by row, b] after one step of
// gradient descent on the mean cross-entropy of the scores z_k = W[k] . x + b[k].

function softmax(z: number[]): number[] {
  const top = Math.max(...z);
  const exps = z.map((v) => Math.exp(v - top));
  const total = exps.reduce((a, c) => a + c, 0);
  return exps.map((e) => e / total);
}

export function classifierStep(points: number[][], labels: number[], W: number[][], b: number[], lr: number): number[] {
  const n = points.length;
  let loss = 0;
  const gradW = W.map((row) => row.map(() => 0));
  const gradB = b.map(() => 0);
  points.forEach((x, i) => {
    const z = W.map((row, k) => row.reduce((s, w, j) => s + w * x[j], 0) + b[k]);
    const p = softmax(z);
    loss += -Math.log(p[labels[i]]) / n;
    // TODO: add this point's share of the gradient to gradW and gradB (dL/dz_k = p_k - y_k)
  });
  const newW = W.map((row) => [...row]);   // TODO: step against the gradient
  const newB = [...b];
  return [loss, ...newW.flat(), ...newB];
}
