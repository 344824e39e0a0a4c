// chainrule exercise: dual-numbers
// Forward mode with dual numbers: finish the rules for mul and tanh.
//
// A Dual carries a value and its tangent: how fast the value moves when the seeded input moves at speed 1.
// Each operation makes a new Dual from its inputs' values and tangents. Addition is worked out below;
// the product and tanh are yours (look for TODO). tangentOf() is what the tests call: leave it as it is.

class Dual {
  constructor(value, tangent = 0) {
    this.value = value;      // the number itself
    this.tangent = tangent;  // how fast it moves when the seeded input moves at speed 1
  }

  add(other) {
    // Worked example: a sum moves as fast as its two parts together, (a + b)' = a' + b'.
    return new Dual(this.value + other.value, this.tangent + other.tangent);
  }

  mul(other) {
    // TODO: the tangent of a product, (a * b)' = a' * b + a * b'
    return new Dual(this.value * other.value, 0);
  }

  tanh() {
    // TODO: the tangent of tanh, (1 - y * y) * a' with y = tanh(a)
    return new Dual(Math.tanh(this.value), 0);
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
