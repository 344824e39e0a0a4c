// chainrule exercise: chain-link-by-link
// x goes through a chain of links, one after the other. Return [y, dy/dx].

function chainSlope(links, x) {
  let value = x, slope = 1;
  for (const link of links) {
    const op = link[0];
    let local, after;
    if (op === "add") { local = 1; after = value + link[1]; }
    else if (op === "mul") { local = link[1]; after = link[1] * value; }
    else if (op === "square") { local = 2 * value; after = value * value; }
    else if (op === "tanh") { after = Math.tanh(value); local = 1 - after * after; }
    else if (op === "exp") { after = Math.exp(value); local = after; }
    else if (op === "recip") { local = -1 / (value * value); after = 1 / value; }
    else throw new Error(`unknown link ${op}`);
    slope = slope * local;
    value = after;
  }
  return [value, slope];
}
