// chainrule exercise: slope-by-nudging
// Estimate a slope by nudging: for each h in hs, how far f moves when x moves by h, per unit of h.

const FUNCTIONS = {
  square: (x) => x * x,
  cube: (x) => x * x * x,
  poly: (x) => 3 * x * x - 2 * x + 1,
  wave: (x) => Math.tanh(2 * x),
};

function nudgeSlopes(name, x, hs) {
  const f = FUNCTIONS[name];
  return hs.map((h) => (f(x + h) - f(x)) / h);
}
