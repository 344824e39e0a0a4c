// chainrule exercise: forward-any-order

function apply(op, x, y) {
  if (op === "add") return x + y;
  if (op === "mul") return x * y;
  return Math.tanh(x);
}

function forwardAnyOrder(nodes, leaves) {
  const firstNode = leaves.length;
  const values = [...leaves, ...nodes.map(() => null)];
  const compute = (position) => {
    const stack = [position];
    while (stack.length) {
      const here = stack[stack.length - 1];
      const [op, a, b] = nodes[here - firstNode];
      const waiting = [a, b].filter((i) => i !== null && values[i] === null);
      if (waiting.length) { stack.push(...waiting); continue; }
      stack.pop();
      if (values[here] === null) values[here] = apply(op, values[a], b === null ? null : values[b]);
    }
  };
  for (let position = firstNode; position < values.length; position += 1) compute(position);
  return values;
}
