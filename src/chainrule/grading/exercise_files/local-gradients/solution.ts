// chainrule exercise: local-gradients
// Reference solution: each operation passes out.grad to its inputs, times its local derivative.

class Value {
  // A number that remembers the values it was made from, and how to pass a gradient back to them.
  data: number;
  grad: number = 0;
  prev: Value[];
  _backward: () => void = () => {};

  constructor(data: number, prev: Value[] = []) {
    this.data = data;
    this.prev = prev;
  }

  add(other: Value): Value {
    const out = new Value(this.data + other.data, [this, other]);
    out._backward = () => {
      // c = a + b: the local derivative is 1 for both inputs.
      this.grad += out.grad;
      other.grad += out.grad;
    };
    return out;
  }

  mul(other: Value): Value {
    const out = new Value(this.data * other.data, [this, other]);
    out._backward = () => {
      // c = a * b: each input's local derivative is the other input.
      this.grad += other.data * out.grad;
      other.grad += this.data * out.grad;
    };
    return out;
  }

  tanh(): Value {
    const out = new Value(Math.tanh(this.data), [this]);
    out._backward = () => {
      // t = tanh(a): the local derivative is 1 - t**2.
      this.grad += (1 - out.data ** 2) * out.grad;
    };
    return out;
  }
}

// Set out.grad = 1, then call every value's _backward, from out back to the leaves.
function backward(out: Value): void {
  const order: Value[] = [];
  const seen = new Set<Value>();
  const visit = (v: Value): void => {
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

type Expr = "neuron" | "reuse" | "chain" | "shared";

// Build the expression `expr` from `vals`, run backward, and copy each leaf's gradient into grad.
export function gradsOf(expr: Expr, vals: number[], grad: number[]): number[] {
  const leaves = vals.map((v) => new Value(v));
  let out: Value;
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
