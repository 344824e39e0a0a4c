// chainrule exercise: dual-numbers
// Forward mode with dual numbers: finish the rules for mul and tanh.
//
// A Dual carries a value and its tangent: how fast the value moves when the seeded input moves at speed 1.
// Each operation makes a new Dual from its inputs' values and tangents. Addition is worked out below;
// the product and tanh are yours (look for TODO). tangentOf() is what the tests call: leave it as it is.

class Dual {
  constructor(public value: number, public tangent: number = 0) {}

  add(other: Dual): Dual {
    // Worked example: a sum moves as fast as its two parts together, (a + b)' = a' + b'.
    return new Dual(this.value + other.value, this.tangent + other.tangent);
  }

  mul(other: Dual): Dual {
    // TODO: the tangent of a product, (a * b)' = a' * b + a * b'
    return new Dual(this.value * other.value, 0);
  }

  tanh(): Dual {
    // TODO: the tangent of tanh, (1 - y * y) * a' with y = tanh(a)
    return new Dual(Math.tanh(this.value), 0);
  }
}

function chain(x: Dual, w: Dual): Dual {
  let out = x;
  for (let i = 0; i < 10; i += 1) out = out.mul(w).tanh();
  return out;
}

function shared(x: Dual, w: Dual): Dual {
  const h = x.mul(w).tanh();
  return h.add(h.mul(h));
}

const EXPRESSIONS: Record<string, (...inputs: Dual[]) => Dual> = {
  neuron: (x1, w1, x2, w2, b) => x1.mul(w1).add(x2.mul(w2)).add(b).tanh(),
  reuse: (a, b) => a.mul(b).add(a.mul(a)),
  chain,
  shared,
};

// What the tests call: build the expression on Duals and return [out.value, out.tangent].
export function tangentOf(expression: string, values: number[], tangents: number[]): number[] {
  const inputs = values.map((value, i) => new Dual(value, tangents[i]));
  const out = EXPRESSIONS[expression](...inputs);
  return [out.value, out.tangent];
}
