// chainrule exercise: fit-line

export function fitLine(xs: number[], ys: number[], lr: number, steps: number): number[] {
  const n = xs.length;
  let w = 0, b = 0;
  for (let step = 0; step < steps; step += 1) {
    const residuals = xs.map((x, i) => w * x + b - ys[i]);
    const dw = (2 / n) * residuals.reduce((sum, r, i) => sum + r * xs[i], 0);
    const db = (2 / n) * residuals.reduce((sum, r) => sum + r, 0);
    w -= lr * dw;
    b -= lr * db;
  }
  return [w, b];
}
