// chainrule exercise: stable-softmax
// softmax(logits): one probability per score, p_k = exp(z_k) / sum_j exp(z_j).
// Right for small scores; for scores in the thousands exp overflows. Make it stable.

export function softmax(logits: number[]): number[] {
  const exps = logits.map((z) => Math.exp(z));   // TODO: this overflows for large scores
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}
