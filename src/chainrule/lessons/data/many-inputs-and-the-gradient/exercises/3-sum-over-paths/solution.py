# chainrule exercise: sum-over-paths
"""The multivariable chain rule: t reaches z through u and through v, and the two paths' shares add."""
import math


def path_sum(graph, t):
    if graph == "product":
        u, v = t * t, 3 * t + 1
        z = u * v
        through_u = v * (2 * t)           # dz/du = v, du/dt = 2t
        through_v = u * 3                 # dz/dv = u, dv/dt = 3
    else:
        u, v = math.tanh(t), t * t
        z = u * v + u
        through_u = (v + 1) * (1 - u * u)   # dz/du = v + 1, du/dt = 1 - tanh(t)^2
        through_v = u * (2 * t)             # dz/dv = u, dv/dt = 2t
    return [z, through_u, through_v, through_u + through_v]
