# chainrule exercise: slopes-by-rule
"""The slopes of 3x^2 + 2x - 5, x^5 - 4x^3 + x, (x^2 + 1)(3x - 2) and 2 / x at x, by the rules."""


def rule_slopes(x):
    slope1 = 6 * x + 2
    slope2 = 5 * x ** 4 - 12 * x ** 2 + 1
    slope3 = 2 * x * (3 * x - 2) + (x * x + 1) * 3
    slope4 = -2 / (x * x)
    return [slope1, slope2, slope3, slope4]
