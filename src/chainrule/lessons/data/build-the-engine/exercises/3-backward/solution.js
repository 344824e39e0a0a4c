// chainrule exercise: engine-backward
// Build the engine, step 3 of 5: backward(): a topological order, then every node's _backward from the output back.
// It starts from step 2's code; keep it, and add what this step asks for.

class Value {
  // One number in a computation, with the gradient of the final result with respect to it.
  constructor(data, children = [], op = "") {
    this.data = data;
    this.grad = 0;
    this._prev = children; // the Values this one was computed from
    this._op = op;
    this._backward = () => {}; // sends this Value's grad on to its inputs (a leaf has none)
  }

  static lift(x) {
    return x instanceof Value ? x : new Value(x);
  }

  add(other) {
    other = Value.lift(other);
    const out = new Value(this.data + other.data, [this, other], "+");
    out._backward = () => {
      // d(a + b)/da = 1 and d(a + b)/db = 1; += because a value may be used more than once
      this.grad += out.grad;
      other.grad += out.grad;
    };
    return out;
  }

  mul(other) {
    other = Value.lift(other);
    const out = new Value(this.data * other.data, [this, other], "*");
    out._backward = () => {
      // d(a * b)/da = b and d(a * b)/db = a
      this.grad += other.data * out.grad;
      other.grad += this.data * out.grad;
    };
    return out;
  }

  tanh() {
    const t = Math.tanh(this.data);
    const out = new Value(t, [this], "tanh");
    out._backward = () => {
      this.grad += (1 - t * t) * out.grad;
    };
    return out;
  }

  exp() {
    const e = Math.exp(this.data);
    const out = new Value(e, [this], "exp");
    out._backward = () => {
      this.grad += e * out.grad;
    };
    return out;
  }

  pow(k) {
    const out = new Value(this.data ** k, [this], "**" + k);
    out._backward = () => {
      this.grad += k * this.data ** (k - 1) * out.grad;
    };
    return out;
  }

  relu() {
    const out = new Value(this.data > 0 ? this.data : 0, [this], "relu");
    out._backward = () => {
      this.grad += (out.data > 0 ? 1 : 0) * out.grad;
    };
    return out;
  }

  neg() {
    return this.mul(-1);
  }

  sub(other) {
    return this.add(Value.lift(other).neg());
  }

  div(other) {
    return this.mul(Value.lift(other).pow(-1));
  }

  backward() {
    // Order the graph so that every node comes after all of its inputs ...
    const order = [];
    const seen = new Set();
    const visit = (node) => {
      if (seen.has(node)) return;
      seen.add(node);
      for (const child of node._prev) visit(child);
      order.push(node);
    };
    visit(this);
    // ... then walk it from the output back: each node has all of its gradient before it sends it on.
    this.grad = 1;
    for (let i = order.length - 1; i >= 0; i--) order[i]._backward();
  }
}
