// chainrule exercise: loss-gradient
// The mean squared error of the line y = w*x + b on the points (xs[i], ys[i]), and its gradient.
//
// Return [loss, dw, db] with r_i = w*x_i + b - y_i:
//     loss = (1/n) * sum(r_i**2),  dw = (2/n) * sum(r_i * x_i),  db = (2/n) * sum(r_i)

function lossAndGradient(xs, ys, w, b) {
  const n = xs.length;
  let loss = 0, dw = 0, db = 0;
  // TODO: add up each point's share, then scale
  return [loss, dw, db];
}
