// chainrule exercise: sum-over-paths
// The multivariable chain rule: t reaches z through u and through v, and the two paths' shares add.

export function pathSum(graph: string, t: number): number[] {
  let z: number, throughU: number, throughV: number;
  if (graph === "product") {
    const u = t * t, v = 3 * t + 1;
    z = u * v;
    throughU = v * (2 * t);             // dz/du = v, du/dt = 2t
    throughV = u * 3;                   // dz/dv = u, dv/dt = 3
  } else {
    const u = Math.tanh(t), v = t * t;
    z = u * v + u;
    throughU = (v + 1) * (1 - u * u);   // dz/du = v + 1, du/dt = 1 - tanh(t)^2
    throughV = u * (2 * t);             // dz/dv = u, dv/dt = 2t
  }
  return [z, throughU, throughV, throughU + throughV];
}
