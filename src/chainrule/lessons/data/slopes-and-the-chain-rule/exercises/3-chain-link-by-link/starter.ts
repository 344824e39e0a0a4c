// chainrule exercise: chain-link-by-link
// x goes through a chain of links, one after the other. Return [y, dy/dx].
//
// A link is ["add", c] (u + c), ["mul", c] (c * u), ["square"] (u * u), ["tanh"], ["exp"] or ["recip"] (1 / u).
// By the chain rule, dy/dx is the product of every link's own slope, each at the value going into it.

type Link = [op: "add" | "mul", c: number] | [op: "square" | "tanh" | "exp" | "recip"];

export function chainSlope(links: Link[], x: number): number[] {
  let value = x, slope = 1;
  for (const link of links) {
    const op = link[0];
    // TODO: multiply slope by this link's own slope at value, then move value through the link
  }
  return [value, slope];
}
