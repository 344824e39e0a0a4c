# chainrule exercise: gradient-by-rule
"""The gradients of three functions of x and y, by the rules: x^2 y + 3y, x y^3 - 2x and (x + 2y)^2."""


def rule_gradient(x, y):
    df1_dx = 2 * x * y
    df1_dy = x * x + 3
    df2_dx = y * y * y - 2
    df2_dy = 3 * x * y * y
    inner = x + 2 * y
    df3_dx = 2 * inner * 1
    df3_dy = 2 * inner * 2
    return [df1_dx, df1_dy, df2_dx, df2_dy, df3_dx, df3_dy]
