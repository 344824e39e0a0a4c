// chainrule exercise: gradient-by-rule
// The gradients of three functions of x and y, by the rules (no nudging). Return, in this order,
//
//     df1/dx, df1/dy    for f1(x, y) = x^2 y + 3y     (worked out below)
//     df2/dx, df2/dy    for f2(x, y) = x y^3 - 2x
//     df3/dx, df3/dy    for f3(x, y) = (x + 2y)^2

function ruleGradient(x, y) {
  // f1 in x: y is held still, so it is a constant factor of x^2 (slope 2x) and 3y a constant term (slope 0).
  const df1dx = 2 * x * y;
  // f1 in y: x^2 is held still, a constant factor of y (slope 1), and 3y has slope 3.
  const df1dy = x * x + 3;
  const df2dx = 0;  // TODO: y^3 is a constant factor of x; -2x has slope -2
  const df2dy = 0;  // TODO: x is a constant factor of y^3; -2x does not move when only y moves
  const df3dx = 0;  // TODO: the chain rule: the outer square's slope 2u at u = x + 2y, times the inner slope in x
  const df3dy = 0;  // TODO: the same, with the inner slope in y
  return [df1dx, df1dy, df2dx, df2dy, df3dx, df3dy];
}
