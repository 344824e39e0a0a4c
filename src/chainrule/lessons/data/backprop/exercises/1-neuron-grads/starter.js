// chainrule exercise: neuron-grads
// Differentiate one neuron by hand.
//
// The neuron: out = Math.tanh(w[0]*x[0] + w[1]*x[1] + b). It has already run, and its output is
// `out`. Put d out/d w1 in grad[0], d out/d w2 in grad[1] and d out/d b in grad[2], then return grad.

function neuronGrads(x, w, b, out, grad) {
  // TODO: three gradients, one per slot of grad
  return grad;
}
