// chainrule exercise: gradient-by-rule
// The gradients of three functions of x and y, by the rules: x^2 y + 3y, x y^3 - 2x and (x + 2y)^2.

function ruleGradient(x, y) {
  const df1dx = 2 * x * y;
  const df1dy = x * x + 3;
  const df2dx = y * y * y - 2;
  const df2dy = 3 * x * y * y;
  const inner = x + 2 * y;
  const df3dx = 2 * inner * 1;
  const df3dy = 2 * inner * 2;
  return [df1dx, df1dy, df2dx, df2dy, df3dx, df3dy];
}
