// chainrule exercise: classifier-step
// One gradient-descent step of a three-class linear classifier: dL/dz_k = p_k - y_k for each point, then the
// chain rule through z_k = W[k] . x + b[k], averaged over the points.

function softmax(z) {
  const top = Math.max(...z);
  const exps = z.map((v) => Math.exp(v - top));
  const total = exps.reduce((a, c) => a + c, 0);
  return exps.map((e) => e / total);
}

function classifierStep(points, labels, W, b, lr) {
  const n = points.length;
  let loss = 0;
  const gradW = W.map((row) => row.map(() => 0));
  const gradB = b.map(() => 0);
  points.forEach((x, i) => {
    const z = W.map((row, k) => row.reduce((s, w, j) => s + w * x[j], 0) + b[k]);
    const p = softmax(z);
    loss += -Math.log(p[labels[i]]) / n;
    for (let k = 0; k < W.length; k++) {
      const dz = (p[k] - (k === labels[i] ? 1 : 0)) / n;
      gradW[k] = gradW[k].map((g, j) => g + dz * x[j]);
      gradB[k] += dz;
    }
  });
  const newW = W.map((row, k) => row.map((w, j) => w - lr * gradW[k][j]));
  const newB = b.map((bk, k) => bk - lr * gradB[k]);
  return [loss, ...newW.flat(), ...newB];
}
