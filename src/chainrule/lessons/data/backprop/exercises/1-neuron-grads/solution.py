# chainrule exercise: neuron-grads
"""Reference solution: the chain rule through tanh and then through the weighted sum."""


def neuron_grads(x, w, b, out, grad):
    dn = 1 - out**2          # d out / d n, where n = w[0]*x[0] + w[1]*x[1] + b
    grad[0] = dn * x[0]      # d n / d w1 = x1
    grad[1] = dn * x[1]      # d n / d w2 = x2
    grad[2] = dn             # d n / d b = 1
    return grad
