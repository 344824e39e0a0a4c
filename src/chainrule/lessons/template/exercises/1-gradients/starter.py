# chainrule exercise: __ID__-gradients
def gradients(nodes, leaves):
    # TODO: a forward pass, then a backward pass from the last value
    return [0.0] * (len(leaves) + len(nodes))
