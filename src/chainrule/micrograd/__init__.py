"""A drop-in for micrograd: change `from micrograd.engine import Value` to
`from chainrule.micrograd.engine import Value` (and `micrograd.nn` to `chainrule.micrograd.nn`) and
micrograd code runs unchanged, with micrograd's numbers.

It keeps micrograd's surface, so code that reaches inside works too: `Value(data, _children=(), _op='')`,
`_prev` (a set), `_op` (a string) and a `_backward` closure per node, which is how an op added the
micrograd way (a method that makes `Value(..., (self,), 'exp')` and sets its `_backward`) plugs in.
Forward values and local derivatives come from chainrule's op table, and `backward()` is chainrule's:
an iterative walk (no recursion limit, deep graphs are fine), a fixed order (children in the order they
were given, so the same program gives the same bits every run) and a correct repeated call (interior
gradients are recomputed, leaf gradients accumulate). docs/engine.md, "Coming from micrograd", lists
what differs.
"""

from chainrule.micrograd import engine, nn

__all__ = ["engine", "nn"]
