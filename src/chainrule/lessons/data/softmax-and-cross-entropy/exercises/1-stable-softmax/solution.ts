// chainrule exercise: stable-softmax
// A stable softmax: subtract the largest score first, so the largest exponential is exp(0) = 1.

export function softmax(logits: number[]): number[] {
  const top = Math.max(...logits);
  const exps = logits.map((z) => Math.exp(z - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}
