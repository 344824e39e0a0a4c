// chainrule exercise: backward-order
// Reference solution: a depth-first topological order, walked from the output back to the leaves.

class Value {
  // A number that remembers the values it was made from, and how to pass a gradient back to them.
  constructor(data, prev = []) {
    this.data = data;
    this.grad = 0;
    this.prev = prev;
    this._backward = () => {};
  }

  add(other) {
    const out = new Value(this.data + other.data, [this, other]);
    out._backward = () => {
      // c = a + b: the local derivative is 1 for both inputs.
      this.grad += out.grad;
      other.grad += out.grad;
    };
    return out;
  }

  mul(other) {
    const out = new Value(this.data * other.data, [this, other]);
    out._backward = () => {
      // c = a * b: each input's local derivative is the other input.
      this.grad += other.data * out.grad;
      other.grad += this.data * out.grad;
    };
    return out;
  }

  tanh() {
    const out = new Value(Math.tanh(this.data), [this]);
    out._backward = () => {
      // t = tanh(a): the local derivative is 1 - t**2.
      this.grad += (1 - out.data ** 2) * out.grad;
    };
    return out;
  }
}

// Set out.grad = 1, then call every value's _backward, from out back to the leaves.
function backward(out) {
  const order = [];
  const seen = new Set();
  const visit = (v) => {
    if (!seen.has(v)) {
      seen.add(v);
      for (const child of v.prev) visit(child);
      order.push(v);
    }
  };
  visit(out);
  out.grad = 1;
  for (let i = order.length - 1; i >= 0; i--) order[i]._backward();
}

// Build the expression `expr` from `vals`, run backward, and copy each leaf's gradient into grad.
function gradsOf(expr, vals, grad) {
  const leaves = vals.map((v) => new Value(v));
  let out;
  if (expr === "neuron") {
    const [x1, w1, x2, w2, b] = leaves;
    out = x1.mul(w1).add(x2.mul(w2)).add(b).tanh();
  } else if (expr === "reuse") {
    const [a, b] = leaves;
    out = a.mul(b).add(a.mul(a));
  } else if (expr === "chain") {
    const [x, w] = leaves;
    out = x;
    for (let i = 0; i < 10; i++) out = out.mul(w).tanh();
  } else if (expr === "shared") {
    const [x, w] = leaves;
    const h = x.mul(w).tanh();
    out = h.add(h.mul(h)); // h feeds two later values
  } else {
    throw new Error("unknown expression " + expr);
  }
  backward(out);
  leaves.forEach((leaf, i) => {
    grad[i] = leaf.grad;
  });
  return grad;
}
