// chainrule exercise: forward-any-order
// Compute every value of a graph whose steps are listed in no useful order.
//
// Same format as forwardValues, except that a and b may point at any value, even a later node.
// Position leaves.length + i holds node i. Return the values in those positions.

function apply(op, x, y) {
  if (op === "add") return x + y;
  if (op === "mul") return x * y;
  return Math.tanh(x);
}

function forwardAnyOrder(nodes, leaves) {
  const firstNode = leaves.length;
  const values = [...leaves, ...nodes.map(() => 0)];
  // TODO: this uses the listed order, where an input may not be computed yet (it still reads 0).
  // Compute the steps in a topological order instead.
  nodes.forEach(([op, a, b], i) => {
    values[firstNode + i] = apply(op, values[a], b === null ? null : values[b]);
  });
  return values;
}
