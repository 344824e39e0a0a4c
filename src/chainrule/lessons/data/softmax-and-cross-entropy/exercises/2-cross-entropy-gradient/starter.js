// chainrule exercise: cross-entropy-gradient
// crossEntropyGrad(logits, target): dL/dz_k for L = -log softmax(z)[target].

function crossEntropyGrad(logits, target) {
  const exps = logits.map((z) => Math.exp(z));   // TODO: stable for large scores?
  const total = exps.reduce((a, b) => a + b, 0);
  const p = exps.map((e) => e / total);
  const grad = logits.map(() => 0);              // TODO: the gradient is p - y
  return grad;
}
