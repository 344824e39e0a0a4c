// chainrule exercise: loss-gradient

function lossAndGradient(xs, ys, w, b) {
  const n = xs.length;
  const residuals = xs.map((x, i) => w * x + b - ys[i]);
  const loss = residuals.reduce((sum, r) => sum + r * r, 0) / n;
  const dw = (2 / n) * residuals.reduce((sum, r, i) => sum + r * xs[i], 0);
  const db = (2 / n) * residuals.reduce((sum, r) => sum + r, 0);
  return [loss, dw, db];
}
