// chainrule exercise: neuron-grads
// Gradients of one neuron, by hand.
//
// The neuron computes  out = Math.tanh(w[0]*x[0] + w[1]*x[1] + b);  `out` is given, already computed.
// Fill  grad[0] = d out/d w1,  grad[1] = d out/d w2,  grad[2] = d out/d b,  and return grad.
//
// Hint: tanh's local derivative is 1 - out**2. The sum's derivative with respect to a weight is
// the input that weight multiplies, and 1 with respect to the bias. The chain rule multiplies them.

export function neuronGrads(x: number[], w: number[], b: number, out: number, grad: number[]): number[] {
  // TODO: fill grad[0], grad[1] and grad[2]
  return grad;
}
