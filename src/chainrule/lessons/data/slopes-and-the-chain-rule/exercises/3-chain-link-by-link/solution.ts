// chainrule exercise: chain-link-by-link
// x goes through a chain of links, one after the other. Return [y, dy/dx].

type Link = [op: "add" | "mul", c: number] | [op: "square" | "tanh" | "exp" | "recip"];

export function chainSlope(links: Link[], x: number): number[] {
  let value = x, slope = 1;
  for (const link of links) {
    let local: number, after: number;
    if (link[0] === "add") { local = 1; after = value + link[1]; }
    else if (link[0] === "mul") { local = link[1]; after = link[1] * value; }
    else if (link[0] === "square") { local = 2 * value; after = value * value; }
    else if (link[0] === "tanh") { after = Math.tanh(value); local = 1 - after * after; }
    else if (link[0] === "exp") { after = Math.exp(value); local = after; }
    else { local = -1 / (value * value); after = 1 / value; }
    slope = slope * local;
    value = after;
  }
  return [value, slope];
}
