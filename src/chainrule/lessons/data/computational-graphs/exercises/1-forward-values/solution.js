// chainrule exercise: forward-values

function forwardValues(nodes, leaves) {
  const values = [...leaves];
  for (const [op, a, b] of nodes) {
    if (op === "add") values.push(values[a] + values[b]);
    else if (op === "mul") values.push(values[a] * values[b]);
    else if (op === "tanh") values.push(Math.tanh(values[a]));
    else throw new Error(`unknown op ${op}`);
  }
  return values;
}
