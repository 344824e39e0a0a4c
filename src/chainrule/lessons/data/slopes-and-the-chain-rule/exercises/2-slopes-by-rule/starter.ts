// chainrule exercise: slopes-by-rule
// The slopes of four functions at x, by the rules (no nudging). Return them in this order:
//
//     f1(x) = 3x^2 + 2x - 5        (worked out below)
//     f2(x) = x^5 - 4x^3 + x
//     f3(x) = (x^2 + 1)(3x - 2)
//     f4(x) = 2 / x                 (the tests never use x = 0)

export function ruleSlopes(x: number): number[] {
  // f1, term by term: 3x^2 has slope 3 * 2x = 6x (power rule, constant factor kept),
  // 2x has slope 2, and the constant -5 does not move at all (slope 0). A sum adds the slopes.
  const slope1 = 6 * x + 2;
  const slope2 = 0;  // TODO: the power rule for each term of f2, added up
  const slope3 = 0;  // TODO: the product rule: (slope of x^2 + 1) * (3x - 2) + (x^2 + 1) * (slope of 3x - 2)
  const slope4 = 0;  // TODO: 2 / x is 2 * x^(-1), and the power rule works for a negative power too
  return [slope1, slope2, slope3, slope4];
}
