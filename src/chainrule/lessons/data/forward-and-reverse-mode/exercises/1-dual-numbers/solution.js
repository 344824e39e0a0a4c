// chainrule exercise: dual-numbers
// Forward mode with dual numbers: a value and its tangent, carried through add, mul and tanh.

class Dual {
  constructor(value, tangent = 0) {
    this.value = value;      // the number itself
    this.tangent = tangent;  // how fast it moves when the seeded input moves at speed 1
  }

  add(other) {
    return new Dual(this.value + other.value, this.tangent + other.tangent);
  }

  mul(other) {
    return new Dual(this.value * other.value, this.tangent * other.value + this.value * other.tangent);
  }

  tanh() {
    const y = Math.tanh(this.value);
    return new Dual(y, (1 - y * y) * this.tangent);
  }
}

function chain(x, w) {
  let out = x;
  for (let i = 0; i < 10; i += 1) out = out.mul(w).tanh();
  return out;
}

function shared(x, w) {
  const h = x.mul(w).tanh();
  return h.add(h.mul(h));
}

const EXPRESSIONS = {
  neuron: (x1, w1, x2, w2, b) => x1.mul(w1).add(x2.mul(w2)).add(b).tanh(),
  reuse: (a, b) => a.mul(b).add(a.mul(a)),
  chain,
  shared,
};

// What the tests call: build the expression on Duals and return [out.value, out.tangent].
function tangentOf(expression, values, tangents) {
  const inputs = values.map((value, i) => new Dual(value, tangents[i]));
  const out = EXPRESSIONS[expression](...inputs);
  return [out.value, out.tangent];
}
