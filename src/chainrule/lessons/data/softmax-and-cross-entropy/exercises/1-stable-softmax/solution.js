// chainrule exercise: stable-softmax
// A stable softmax: subtract the largest score first, so the largest exponential is exp(0) = 1.

function softmax(logits) {
  const top = Math.max(...logits);
  const exps = logits.map((z) => Math.exp(z - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}
