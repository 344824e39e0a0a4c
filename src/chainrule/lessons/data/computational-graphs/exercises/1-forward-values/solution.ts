// chainrule exercise: forward-values

type Step = [op: "add" | "mul" | "tanh", a: number, b: number | null];

export function forwardValues(nodes: Step[], leaves: number[]): number[] {
  const values: number[] = [...leaves];
  for (const [op, a, b] of nodes) {
    if (op === "add") values.push(values[a] + values[b as number]);
    else if (op === "mul") values.push(values[a] * values[b as number]);
    else if (op === "tanh") values.push(Math.tanh(values[a]));
    else throw new Error(`unknown op ${op}`);
  }
  return values;
}
