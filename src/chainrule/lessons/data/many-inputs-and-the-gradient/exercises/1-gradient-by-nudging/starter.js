// chainrule exercise: gradient-by-nudging
// Estimate a gradient by nudging: move x alone, then y alone, and see how far f moves per unit of h.
//
// FUNCTIONS holds the functions the tests use, by name. Return [df/dx estimate, df/dy estimate].

const FUNCTIONS = {
  bowl: (x, y) => x * x + 3 * y * y,
  saddle: (x, y) => x * x - y * y,
  ridge: (x, y) => Math.tanh(x * y) + x,
};

// The estimate for x, worked out: the bowl at (1, 1), x nudged by h = 0.001 while y stays put.
function workedExample() {
  const f = FUNCTIONS.bowl, x = 1, y = 1, h = 0.001;
  const moved = f(x + h, y) - f(x, y);  // how far f moved when only x moved: about 0.002
  return moved / h;                     // per unit of the nudge: about 2.001, near df/dx = 2x = 2
}

function nudgeGradient(name, point, h) {
  const f = FUNCTIONS[name];
  const [x, y] = point;
  // TODO: the estimate for x (as workedExample does), then the one for y, with x held still
  return [0, 0];
}
