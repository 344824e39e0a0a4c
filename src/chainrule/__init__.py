"""chainrule: learn, see and use backpropagation.

The engine (`Value`, `grad`, `no_grad`, `gradcheck`, `detect_anomaly`) imports nothing else of the
project; the pictures and traces build on it and load lazily.
"""

from chainrule.engine import (
    AnomalyError,
    GradcheckError,
    Value,
    detect_anomaly,
    enable_grad,
    grad,
    gradcheck,
    is_grad_enabled,
    no_grad,
    topological_order,
    zero_grad,
)

__version__ = "0.1.0"

__all__ = [
    "AnomalyError", "GradcheckError", "Value", "detect_anomaly", "enable_grad", "grad", "gradcheck",
    "is_grad_enabled", "no_grad", "topological_order", "zero_grad", "trace", "draw", "explain",
    "__version__",
]


def __getattr__(name: str):
    # trace, draw and explain live in their own modules, built on the engine; load them on first use.
    if name == "trace":
        from chainrule.trace import trace

        return trace
    if name == "explain":
        from chainrule.trace import explain

        return explain
    if name == "draw":
        from chainrule.draw import draw

        return draw
    raise AttributeError(f"module 'chainrule' has no attribute {name!r}")
