"""chainrule: learn, see and use backpropagation.

The engine (`Value`, `grad`, `jvp`, `no_grad`, `gradcheck`, `detect_anomaly`) imports nothing else of the
project; the transforms of `chainrule.func` (`vjp`, `jacrev`, `jacfwd`, `hessian`, `hvp`, also here) compose
with it; traces (`trace`, `explain`), pictures (`draw`) and compiled replay (`compile`, NumPy only
when called) build on it.

The functions `trace`, `explain`, `draw` and `compile` live in modules of other names (`traces`, `explanations`,
`drawing`, `compiled`), so `chainrule.trace(...)` is always the function and `import chainrule.traces` never
changes what the package's names mean.

Every name here is loaded when it is first used (`chainrule.Value`, `from chainrule import draw`), so that
`import chainrule` (which every `chainrule` command does) costs nothing for a command that needs none of them.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__version__ = "0.1.0"

# Each public name and the module that defines it.
_WHERE = {
    **dict.fromkeys(("AnomalyError", "GradcheckError", "Value", "detect_anomaly", "enable_grad", "grad", "gradcheck",
                     "is_grad_enabled", "no_grad", "topological_order", "zero_grad", "where", "stop_gradient"),
                    "chainrule.engine"),
    "jvp": "chainrule.forward",
    **dict.fromkeys(("hessian", "hvp", "jacfwd", "jacrev", "vjp"), "chainrule.func"),
    "trace": "chainrule.traces",
    "explain": "chainrule.explanations",
    "draw": "chainrule.drawing",
    **dict.fromkeys(("CompiledFunction", "TracingError", "compile"), "chainrule.compiled"),
}
__all__ = [
    "AnomalyError", "GradcheckError", "Value", "detect_anomaly", "enable_grad", "grad", "gradcheck",
    "is_grad_enabled", "no_grad", "topological_order", "zero_grad", "trace", "draw", "explain",
    "compile", "CompiledFunction", "TracingError", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "hvp", "func",
    "where", "stop_gradient", "__version__",
]


def __getattr__(name: str) -> Any:
    if name == "func":  # torch.func's names: func.grad, func.vjp, ...
        return importlib.import_module("chainrule.func")
    if name not in _WHERE:
        raise AttributeError(f"module 'chainrule' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    setattr(sys.modules[__name__], name, value)  # found here directly from now on
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
