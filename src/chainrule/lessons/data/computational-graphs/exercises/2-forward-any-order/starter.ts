// chainrule exercise: forward-any-order
// Compute every value of a graph whose steps are listed in no useful order.
//
// Same format as forwardValues, except that a and b may point at any value, even a later node.
// Position leaves.length + i holds node i. Return the values in those positions.

type Step = [op: "add" | "mul" | "tanh", a: number, b: number | null];

function apply(op: Step[0], x: number, y: number | null): number {
  if (op === "add") return x + (y as number);
  if (op === "mul") return x * (y as number);
  return Math.tanh(x);
}

export function forwardAnyOrder(nodes: Step[], leaves: number[]): number[] {
  const firstNode = leaves.length;
  const values: number[] = [...leaves, ...nodes.map(() => 0)];
  // TODO: this uses the listed order, where an input may not be computed yet (it still reads 0).
  // Compute the steps in a topological order instead.
  nodes.forEach(([op, a, b], i) => {
    values[firstNode + i] = apply(op, values[a], b === null ? null : values[b]);
  });
  return values;
}
