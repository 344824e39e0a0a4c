// chainrule exercise: engine-ops
// Build the engine, step 2 of 5: tanh, exp, pow, relu, negation, subtraction and division, each with its local gradient.
// It starts from step 1's code; keep it, and add what this step asks for.

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

  // TODO: tanh(), exp(), pow(k) for a number k, relu(), neg(), sub(other) and div(other), each a new
  // Value with a _backward that sends out.grad to its input times the local gradient.
  tanh(): Value {
    throw new Error("tanh is yours to write");
  }
}
