# chainrule exercise: sum-over-paths
"""The multivariable chain rule: t reaches z through u and through v. Return
[z, the share of the path through u, the share of the path through v, dz/dt].

    product:  u = t^2,      v = 3t + 1,  z = u v
    wave:     u = tanh(t),  v = t^2,     z = u v + u
"""
import math


def path_sum(graph, t):
    if graph == "product":
        u, v = t * t, 3 * t + 1
        z = u * v
        du_dt, dv_dt = 2 * t, 3.0      # the slopes of the steps out of t
        dz_du, dz_dv = v, u            # the partials of z = u v, the other value held still
        through_u = dz_du * du_dt
        through_v = 0.0                # TODO: the same along the path through v
    else:
        u, v = math.tanh(t), t * t
        z = 0.0                        # TODO: z = u v + u
        through_u = 0.0                # TODO: tanh's slope is 1 - tanh(t)^2; z = u v + u has the partial v + 1 in u
        through_v = 0.0                # TODO
    dz_dt = 0.0                        # TODO: how do the two paths combine?
    return [z, through_u, through_v, dz_dt]
