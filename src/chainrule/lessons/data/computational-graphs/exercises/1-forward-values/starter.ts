// chainrule exercise: forward-values
// Compute every value of a computation graph, inputs first.
//
// leaves: the input numbers.  nodes: steps [op, a, b] with op "add", "mul" or "tanh"; a and b are
// positions in the list of values so far (leaves first, then the nodes in order); b is null for tanh.
// Return every value: the leaves, then one value per node.

type Step = [op: "add" | "mul" | "tanh", a: number, b: number | null];

export function forwardValues(nodes: Step[], leaves: number[]): number[] {
  const values: number[] = [...leaves];
  for (const [op, a, b] of nodes) {
    // TODO: compute this step from values[a] (and values[b]) instead of 0
    values.push(0);
  }
  return values;
}
