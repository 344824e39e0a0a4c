# chainrule exercise: stable-softmax
"""softmax(logits): one probability per score, p_k = exp(z_k) / sum_j exp(z_j).

Right for small scores; for scores in the thousands exp overflows. Make it stable.
"""
import math


def softmax(logits):
    exps = [math.exp(z) for z in logits]   # TODO: this overflows for large scores
    total = sum(exps)
    return [e / total for e in exps]
