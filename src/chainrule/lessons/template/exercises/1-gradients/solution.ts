// chainrule exercise: __ID__-gradients
type Step = [op: "add" | "mul" | "tanh", a: number, b: number | null];

export function gradients(nodes: Step[], leaves: number[]): number[] {
  const values = [...leaves];
  for (const [op, a, b] of nodes) {
    values.push(op === "add" ? values[a] + values[b!] : op === "mul" ? values[a] * values[b!] : Math.tanh(values[a]));
  }
  const grads: number[] = new Array(values.length).fill(0);
  grads[grads.length - 1] = 1;
  for (let position = nodes.length - 1; position >= 0; position -= 1) {
    const [op, a, b] = nodes[position];
    const here = leaves.length + position;
    if (op === "add") { grads[a] += grads[here]; grads[b!] += grads[here]; }
    else if (op === "mul") { grads[a] += values[b!] * grads[here]; grads[b!] += values[a] * grads[here]; }
    else grads[a] += (1 - values[here] ** 2) * grads[here];
  }
  return grads;
}
