// chainrule exercise: __ID__-gradients
type Step = [op: "add" | "mul" | "tanh", a: number, b: number | null];

export function gradients(nodes: Step[], leaves: number[]): number[] {
  // TODO: a forward pass, then a backward pass from the last value
  return new Array(leaves.length + nodes.length).fill(0);
}
