"""chainrule: learn, see and use backpropagation.

The engine (`Value`, `grad`, `jvp`, `no_grad`, `gradcheck`, `detect_anomaly`) imports nothing else of the
project; the transforms of `chainrule.func` (`vjp`, `jacrev`, `jacfwd`, `hessian`, `hvp`, also here) compose
with it; traces (`trace`, `explain`), pictures (`draw`) and compiled replay (`compile`, NumPy only
when called) build on it.
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
from chainrule.forward import jvp
from chainrule import func  # noqa: E402  torch.func's names: func.grad, func.vjp, ...
from chainrule.func import hessian, hvp, jacfwd, jacrev, vjp  # noqa: E402

# Imported here, after the engine, so that the package attributes `trace` and `draw` are the functions
# (importing a submodule would otherwise bind its module object to the same name).
from chainrule.trace import trace  # noqa: E402
from chainrule.explain import explain  # noqa: E402
from chainrule.draw import draw  # noqa: E402
from chainrule.compile import CompiledFunction, TracingError, compile  # noqa: E402  (NumPy only when called)

__version__ = "0.1.0"

__all__ = [
    "AnomalyError", "GradcheckError", "Value", "detect_anomaly", "enable_grad", "grad", "gradcheck",
    "is_grad_enabled", "no_grad", "topological_order", "zero_grad", "trace", "draw", "explain",
    "compile", "CompiledFunction", "TracingError", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "hvp", "func",
    "__version__",
]

