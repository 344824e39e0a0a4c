// chainrule exercise: backward-order
// Put the backward pass in order.
//
// Every operation below already knows its backward step (`_backward`). What is missing is the
// function that decides when each step runs: `backward(out)` (look for TODO). `gradsOf()` is
// finished and is what the tests call: leave it as it is.

class Value {
  // One number in a computation graph, plus what the backward pass needs to know about it.
  constructor(data, prev = []) {
    this.data = data; // the number itself
    this.grad = 0; // d(final result) / d(this value); backward() fills it in
    this.prev = prev; // the values this one was computed from (none for an input)
    this._backward = () => {}; // an input has nobody to pass a gradient to
  }

  add(other) {
    const out = new Value(this.data + other.data, [this, other]);
    out._backward = () => {
      // A sum moves one for one with each input.
      this.grad += out.grad;
      other.grad += out.grad;
    };
    return out;
  }

  mul(other) {
    const out = new Value(this.data * other.data, [this, other]);
    out._backward = () => {
      // A product moves with each input at the rate of the other input.
      this.grad += other.data * out.grad;
      other.grad += this.data * out.grad;
    };
    return out;
  }

  tanh() {
    const out = new Value(Math.tanh(this.data), [this]);
    out._backward = () => {
      // tanh's slope, read off its own output.
      this.grad += (1 - out.data ** 2) * out.grad;
    };
    return out;
  }
}

// The backward pass over every value that `out` was computed from.
function backward(out) {
  // TODO: seed out.grad, put the values in topological order, then call _backward from out back
}

// What the tests call: build expression `expr` on the numbers in `vals`, run backward(), and copy
// each input's gradient into `grad` (same order as `vals`).
function gradsOf(expr, vals, grad) {
  const build = EXPRESSIONS.get(expr);
  if (build === undefined) {
    throw new Error(`unknown expression ${expr}; known: ${[...EXPRESSIONS.keys()].join(", ")}`);
  }
  const inputs = vals.map((number) => new Value(number));
  backward(build(...inputs));
  inputs.forEach((value, position) => {
    grad[position] = value.grad;
  });
  return grad;
}

// The expressions the tests use, written with the operations above.
function neuron(x1, w1, x2, w2, b) {
  return x1.mul(w1).add(x2.mul(w2)).add(b).tanh();
}

function reuse(a, b) {
  return a.mul(b).add(a.mul(a)); // a is read three times
}

function chain(x, w) {
  let y = x;
  for (let i = 0; i < 10; i++) y = y.mul(w).tanh();
  return y;
}

function shared(x, w) {
  const h = x.mul(w).tanh();
  return h.add(h.mul(h)); // the inner value h is read by two later operations
}

const EXPRESSIONS = new Map([
  ["neuron", neuron],
  ["reuse", reuse],
  ["chain", chain],
  ["shared", shared],
]);
