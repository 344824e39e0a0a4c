// chainrule exercise: jacobian-by-sweeps
// The Jacobian of a function by forward mode: one sweep per input, each seeded at that input.
//
// Return the slopes d y_i / d x_j row by row: [d y1/d x1, d y1/d x2, ..., d y2/d x1, ...].

class Dual {
  constructor(public value: number, public tangent: number = 0) {}
  add(other: Dual): Dual { return new Dual(this.value + other.value, this.tangent + other.tangent); }
  mul(other: Dual): Dual { return new Dual(this.value * other.value, this.tangent * other.value + this.value * other.tangent); }
  tanh(): Dual { const y = Math.tanh(this.value); return new Dual(y, (1 - y * y) * this.tangent); }
}

// Each function takes a list of Dual inputs and returns a list of Dual outputs.
const FUNCTIONS: Record<string, (x: Dual[]) => Dual[]> = {
  spread: (x) => [x[0].mul(x[0]), x[0].tanh(), x[0].mul(x[0].tanh())],
  gather: (x) => [x[0].mul(x[1]).add(x[2].mul(x[3]).tanh())],
  layer: (x) => [x[0].mul(x[1]).add(x[2]).tanh(), x[0].mul(x[1]).mul(x[2])],
  swap: (x) => [x[0].mul(x[1]), x[0].add(x[1].mul(x[1]))],
};

export function jacobian(name: string, values: number[]): number[] {
  const f = FUNCTIONS[name];
  // One sweep, seeded at input j: const inputs = values.map((v, k) => new Dual(v, k === j ? 1 : 0)),
  // then the tangents of f(inputs) are column j of the Jacobian.
  // TODO: one sweep per input, then the entries row by row
  return [];
}
