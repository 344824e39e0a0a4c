// chainrule exercise: cross-entropy-gradient
// The gradient of cross-entropy through softmax: p - y, with p from a stable softmax.

export function crossEntropyGrad(logits: number[], target: number): number[] {
  const top = Math.max(...logits);
  const exps = logits.map((z) => Math.exp(z - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e, k) => e / total - (k === target ? 1 : 0));
}
