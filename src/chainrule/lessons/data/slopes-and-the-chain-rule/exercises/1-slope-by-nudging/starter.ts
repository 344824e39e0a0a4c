// chainrule exercise: slope-by-nudging
// Estimate a slope by nudging: for each h in hs, how far f moves when x moves by h, per unit of h.
//
// FUNCTIONS holds the functions the tests use, by name. Return [(f(x + h) - f(x)) / h for each h in hs].

const FUNCTIONS: Record<string, (x: number) => number> = {
  square: (x) => x * x,
  cube: (x) => x * x * x,
  poly: (x) => 3 * x * x - 2 * x + 1,
  wave: (x) => Math.tanh(2 * x),
};

// One estimate, worked out: the slope of the square at x = 3, nudged by h = 0.001.
export function workedExample(): number {
  const f = FUNCTIONS.square, x = 3, h = 0.001;
  const moved = f(x + h) - f(x);  // how far the output moved: about 0.006
  return moved / h;               // per unit of the nudge: about 6.001, near the slope 2x = 6
}

export function nudgeSlopes(name: string, x: number, hs: number[]): number[] {
  const f = FUNCTIONS[name];
  const estimates: number[] = [];
  for (const h of hs) {
    // TODO: the estimate for this h, computed as workedExample computes one
    estimates.push(0);
  }
  return estimates;
}
