// chainrule exercise: local-gradients
// Give each operation its local gradient.
//
// Value holds a number (data), its gradient (grad, starting at 0), the values it was made from
// (prev) and a _backward that passes out.grad back to those values. Fill the three _backward bodies:
//   c = a.add(b)  ->  a.grad += c.grad,            b.grad += c.grad
//   c = a.mul(b)  ->  a.grad += b.data * c.grad,   b.grad += a.data * c.grad
//   t = a.tanh()  ->  a.grad += (1 - t.data ** 2) * t.grad
// Always accumulate with +=: a value used twice must collect what comes back from both uses.
// backward(out) and gradsOf(...) already work; the tests call gradsOf.

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
      // TODO: c = a + b passes out.grad to this and to other
    };
    return out;
  }

  mul(other: Value): Value {
    const out = new Value(this.data * other.data, [this, other]);
    out._backward = () => {
      // TODO: c = a * b gives each input the other input's data times out.grad
    };
    return out;
  }

  tanh(): Value {
    const out = new Value(Math.tanh(this.data), [this]);
    out._backward = () => {
      // TODO: t = tanh(a) gives its input (1 - t ** 2) times out.grad
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
