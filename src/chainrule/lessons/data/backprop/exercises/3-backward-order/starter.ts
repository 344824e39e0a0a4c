// chainrule exercise: backward-order
// Put the backward pass in order.
//
// Every operation below already knows its backward step (`_backward`). What is missing is the
// function that decides when each step runs: `backward(out)` (look for TODO). `gradsOf()` is
// finished and is what the tests call: leave it as it is.

class Value {
  // One number in a computation graph, plus what the backward pass needs to know about it.
  data: number; // the number itself
  grad: number = 0; // d(final result) / d(this value); backward() fills it in
  prev: Value[]; // the values this one was computed from (none for an input)
  _backward: () => void = () => {}; // an input has nobody to pass a gradient to

  constructor(data: number, prev: Value[] = []) {
    this.data = data;
    this.prev = prev;
  }

  add(other: Value): Value {
    const out = new Value(this.data + other.data, [this, other]);
    out._backward = () => {
      // A sum moves one for one with each input.
      this.grad += out.grad;
      other.grad += out.grad;
    };
    return out;
  }

  mul(other: Value): Value {
    const out = new Value(this.data * other.data, [this, other]);
    out._backward = () => {
      // A product moves with each input at the rate of the other input.
      this.grad += other.data * out.grad;
      other.grad += this.data * out.grad;
    };
    return out;
  }

  tanh(): Value {
    const out = new Value(Math.tanh(this.data), [this]);
    out._backward = () => {
      // tanh's slope, read off its own output.
      this.grad += (1 - out.data ** 2) * out.grad;
    };
    return out;
  }
}

// The backward pass over every value that `out` was computed from.
function backward(out: Value): void {
  // TODO: seed out.grad, put the values in topological order, then call _backward from out back
}

// What the tests call: build expression `expr` on the numbers in `vals`, run backward(), and copy
// each input's gradient into `grad` (same order as `vals`).
export function gradsOf(expr: string, vals: number[], grad: number[]): number[] {
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
function neuron(x1: Value, w1: Value, x2: Value, w2: Value, b: Value): Value {
  return x1.mul(w1).add(x2.mul(w2)).add(b).tanh();
}

function reuse(a: Value, b: Value): Value {
  return a.mul(b).add(a.mul(a)); // a is read three times
}

function chain(x: Value, w: Value): Value {
  let y = x;
  for (let i = 0; i < 10; i++) y = y.mul(w).tanh();
  return y;
}

function shared(x: Value, w: Value): Value {
  const h = x.mul(w).tanh();
  return h.add(h.mul(h)); // the inner value h is read by two later operations
}

const EXPRESSIONS = new Map<string, (...inputs: Value[]) => Value>([
  ["neuron", neuron],
  ["reuse", reuse],
  ["chain", chain],
  ["shared", shared],
]);
