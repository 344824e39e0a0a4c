// chainrule exercise: sum-over-paths
// The multivariable chain rule: t reaches z through u and through v. Return
// [z, the share of the path through u, the share of the path through v, dz/dt].
//
//     product:  u = t^2,      v = 3t + 1,  z = u v
//     wave:     u = tanh(t),  v = t^2,     z = u v + u

export function pathSum(graph: string, t: number): number[] {
  let z: number, throughU: number, throughV: number;
  if (graph === "product") {
    const u = t * t, v = 3 * t + 1;
    z = u * v;
    const duDt = 2 * t, dvDt = 3;   // the slopes of the steps out of t
    const dzDu = v, dzDv = u;       // the partials of z = u v, the other value held still
    throughU = dzDu * duDt;
    throughV = 0;                   // TODO: the same along the path through v
  } else {
    const u = Math.tanh(t), v = t * t;
    z = 0;                          // TODO: z = u v + u
    throughU = 0;                   // TODO: tanh's slope is 1 - tanh(t)^2; z = u v + u has the partial v + 1 in u
    throughV = 0;                   // TODO
  }
  const dzDt = 0;                   // TODO: how do the two paths combine?
  return [z, throughU, throughV, dzDt];
}
