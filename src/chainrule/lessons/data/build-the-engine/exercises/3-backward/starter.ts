// chainrule exercise: engine-backward
// Build the engine, step 3 of 5: backward(): a topological order, then every node's _backward from the output back.
// It starts from step 2's code; keep it, and add what this step asks for.

export class Value {
  // One number in a computation, with the gradient of the final result with respect to it.
  data: number;
  grad: number;
  _prev: Value[];
  _op: string;
  _backward: () => void;

  constructor(data: number, children: Value[] = [], op = "") {
    this.data = data;
    this.grad = 0;
    this._prev = children; // the Values this one was computed from
    this._op = op;
    this._backward = () => {}; // sends this Value's grad on to its inputs (a leaf has none)
  }

  static lift(x: Value | number): Value {
    return x instanceof Value ? x : new Value(x);
  }

  add(x: Value | number): Value {
    const other = Value.lift(x);
    const out = new Value(this.data + other.data, [this, other], "+");
    out._backward = () => {
      // d(a + b)/da = 1 and d(a + b)/db = 1; += because a value may be used more than once
      this.grad += out.grad;
      other.grad += out.grad;
    };
    return out;
  }

  mul(x: Value | number): Value {
    const other = Value.lift(x);
    const out = new Value(this.data * other.data, [this, other], "*");
    out._backward = () => {
      // d(a * b)/da = b and d(a * b)/db = a
      this.grad += other.data * out.grad;
      other.grad += this.data * out.grad;
    };
    return out;
  }

  tanh(): Value {
    const t = Math.tanh(this.data);
    const out = new Value(t, [this], "tanh");
    out._backward = () => {
      this.grad += (1 - t * t) * out.grad;
    };
    return out;
  }

  exp(): Value {
    const e = Math.exp(this.data);
    const out = new Value(e, [this], "exp");
    out._backward = () => {
      this.grad += e * out.grad;
    };
    return out;
  }

  pow(k: number): Value {
    const out = new Value(this.data ** k, [this], "**" + k);
    out._backward = () => {
      this.grad += k * this.data ** (k - 1) * out.grad;
    };
    return out;
  }

  relu(): Value {
    const out = new Value(this.data > 0 ? this.data : 0, [this], "relu");
    out._backward = () => {
      this.grad += (out.data > 0 ? 1 : 0) * out.grad;
    };
    return out;
  }

  neg(): Value {
    return this.mul(-1);
  }

  sub(other: Value | number): Value {
    return this.add(Value.lift(other).neg());
  }

  div(other: Value | number): Value {
    return this.mul(Value.lift(other).pow(-1));
  }

  backward(): void {
    // TODO: put the graph in topological order, set this Value's grad to 1, then call every node's
    // _backward from the output back.
    throw new Error("backward is yours to write");
  }
}
