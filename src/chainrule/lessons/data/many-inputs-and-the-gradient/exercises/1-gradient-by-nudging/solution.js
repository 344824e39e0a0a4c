// chainrule exercise: gradient-by-nudging
// Estimate a gradient by nudging: move x alone, then y alone, and see how far f moves per unit of h.

const FUNCTIONS = {
  bowl: (x, y) => x * x + 3 * y * y,
  saddle: (x, y) => x * x - y * y,
  ridge: (x, y) => Math.tanh(x * y) + x,
};

function nudgeGradient(name, point, h) {
  const f = FUNCTIONS[name];
  const [x, y] = point;
  const alongX = (f(x + h, y) - f(x, y)) / h;  // y held still
  const alongY = (f(x, y + h) - f(x, y)) / h;  // x held still
  return [alongX, alongY];
}
