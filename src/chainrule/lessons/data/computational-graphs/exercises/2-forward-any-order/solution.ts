// chainrule exercise: forward-any-order

type Step = [op: "add" | "mul" | "tanh", a: number, b: number | null];

function apply(op: Step[0], x: number, y: number | null): number {
  if (op === "add") return x + (y as number);
  if (op === "mul") return x * (y as number);
  return Math.tanh(x);
}

export function forwardAnyOrder(nodes: Step[], leaves: number[]): number[] {
  const firstNode = leaves.length;
  const values: (number | null)[] = [...leaves, ...nodes.map(() => null)];
  const compute = (position: number): void => {
    const stack = [position];
    while (stack.length) {
      const here = stack[stack.length - 1];
      const [op, a, b] = nodes[here - firstNode];
      const waiting = [a, b].filter((i): i is number => i !== null && values[i] === null);
      if (waiting.length) { stack.push(...waiting); continue; }
      stack.pop();
      if (values[here] === null) values[here] = apply(op, values[a] as number, b === null ? null : values[b]);
    }
  };
  for (let position = firstNode; position < values.length; position += 1) compute(position);
  return values as number[];
}
