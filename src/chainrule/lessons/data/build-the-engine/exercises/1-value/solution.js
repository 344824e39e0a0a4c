// chainrule exercise: engine-value
// Build the engine, step 1 of 5: A Value with + and * and their local gradients.

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
}
