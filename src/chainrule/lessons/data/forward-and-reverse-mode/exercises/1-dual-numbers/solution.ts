// chainrule exercise: dual-numbers
// Forward mode with dual numbers: a value and its tangent, carried through add, mul and tanh.

class Dual {
  constructor(public value: number, public tangent: number = 0) {}

  add(other: Dual): Dual {
    return new Dual(this.value + other.value, this.tangent + other.tangent);
  }

  mul(other: Dual): Dual {
    return new Dual(this.value * other.value, this.tangent * other.value + this.value * other.tangent);
  }

  tanh(): Dual {
    const y = Math.tanh(this.value);
    return new Dual(y, (1 - y * y) * this.tangent);
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
