// chainrule exercise: jacobian-by-sweeps
// The Jacobian of a function by forward mode: one sweep per input, each seeded at that input.

class Dual {
  constructor(value, tangent = 0) { this.value = value; this.tangent = tangent; }
  add(other) { return new Dual(this.value + other.value, this.tangent + other.tangent); }
  mul(other) { return new Dual(this.value * other.value, this.tangent * other.value + this.value * other.tangent); }
  tanh() { const y = Math.tanh(this.value); return new Dual(y, (1 - y * y) * this.tangent); }
}

const FUNCTIONS = {
  spread: (x) => [x[0].mul(x[0]), x[0].tanh(), x[0].mul(x[0].tanh())],
  gather: (x) => [x[0].mul(x[1]).add(x[2].mul(x[3]).tanh())],
  layer: (x) => [x[0].mul(x[1]).add(x[2]).tanh(), x[0].mul(x[1]).mul(x[2])],
  swap: (x) => [x[0].mul(x[1]), x[0].add(x[1].mul(x[1]))],
};

function jacobian(name, values) {
  const f = FUNCTIONS[name];
  const columns = values.map((_, j) => f(values.map((v, k) => new Dual(v, k === j ? 1 : 0))).map((out) => out.tangent));
  const rows = [];
  for (let i = 0; i < columns[0].length; i += 1) {
    for (let j = 0; j < values.length; j += 1) rows.push(columns[j][i]);
  }
  return rows;
}
