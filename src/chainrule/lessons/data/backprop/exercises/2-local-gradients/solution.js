// chainrule exercise: local-gradients
// Model solution: each operation adds its local derivative times out.grad to each input's grad.

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

// The backward pass: seed out with gradient 1, then run every _backward, users before inputs.
function backward(out) {
  // Lay the values out so that each one comes after everything it was made from. A stack instead
  // of recursion; a value is appended once all of its inputs have been appended.
  const order = [];
  const placed = new Set();
  const stack = [[out, false]];
  while (stack.length > 0) {
    const [value, inputsDone] = stack.pop();
    if (inputsDone) {
      order.push(value);
    } else if (!placed.has(value)) {
      placed.add(value);
      stack.push([value, true]);
      for (const parent of value.prev) stack.push([parent, false]);
    }
  }
  out.grad = 1;
  for (let i = order.length - 1; i >= 0; i--) order[i]._backward();
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
