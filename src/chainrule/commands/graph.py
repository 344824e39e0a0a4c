"""`chainrule graph EXPRESSION NAME=VALUE...`: an expression's graph, values, gradients and trace.

    chainrule graph "tanh(x1*w1 + x2*w2 + b)" x1=2 x2=0 w1=-3 w2=1 b=6.8813735870195432
    chainrule graph "a*b + a*a" a=3 b=-2 --steps      # the backward pass, step by step
    chainrule graph "x*y" x=2 y=3 --why x             # d out/d x as a sum over paths
    chainrule graph "x*y" x=2 y=3 --check-torch       # every gradient against PyTorch float64

Exit codes: 0 done; 1 a check failed or could not run (a gradient disagrees with PyTorch, PyTorch is
missing, a file could not be written); 2 bad input (expression, names or values).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from typing import TYPE_CHECKING, Any, Callable

from chainrule.ops import functions

if TYPE_CHECKING:
    from chainrule.expr import Expression

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
TORCH_RTOL = 1e-9
TORCH_ATOL = 1e-12


class _InputError(Exception):
    """Bad input on the command line (exit code 2)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "graph",
        help="show an expression's graph: values, gradients, the backward pass step by step",
        description=(
            "Build the computation graph of EXPRESSION with the given values, run backpropagation,\n"
            "and print every node's value and every input's gradient. Expressions use numbers,\n"
            "names, + - * / **, unary minus, parentheses and " + " ".join(functions(1)) + "."
        ),
        epilog=(
            'example: chainrule graph "tanh(x1*w1 + x2*w2 + b)" x1=2 x2=0 w1=-3 w2=1 b=6.8813735870195432\n'
            'An expression that starts with "-" goes after "--": chainrule graph -- "-x*x" x=2'
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("expression", help='the expression, quoted, e.g. "tanh(x*w + b)"')
    parser.add_argument("assignments", nargs="*", metavar="NAME=VALUE",
                        help="a value for every name in the expression, e.g. x=2 w=-3")
    parser.add_argument("--steps", action="store_true",
                        help="print the forward and backward passes step by step, with captions")
    parser.add_argument("--json", action="store_true",
                        help="print the trace as JSON (schema chainrule.trace/1, see docs/trace.md)")
    parser.add_argument("--svg", metavar="FILE", help="write an SVG picture of the graph to FILE")
    parser.add_argument("--dot", action="store_true", help="print the graph as Graphviz DOT text")
    parser.add_argument("--why", metavar="NAME", action="append", default=[],
                        help="explain the gradient of NAME as a sum over paths (repeatable)")
    parser.add_argument("--check-torch", action="store_true",
                        help="compare every gradient with PyTorch in float64 (needs torch)")
    parser.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"chainrule graph: error: {message}", file=sys.stderr)
    return 2


def parse_assignments(items: list[str]) -> dict[str, float]:
    """NAME=VALUE strings as a dict; _InputError naming the first malformed, repeated or bad item."""
    values: dict[str, float] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not _NAME.match(name) or not text:
            raise _InputError(f"{item!r} is not NAME=VALUE (for example x=2 or w1=-0.5)")
        if name in values:
            raise _InputError(f"{name} is given twice; give each name one value")
        try:
            value = float(text)
        except ValueError:
            raise _InputError(f"the value of {name}, {text!r}, is not a number") from None
        if not math.isfinite(value):
            raise _InputError(f"the value of {name} must be a finite number, not {text}")
        values[name] = value
    return values


def run(args: argparse.Namespace) -> int:
    from chainrule.expr import ExpressionError, parse

    if args.json and args.dot:
        return _error("choose one of --json and --dot (both print to standard output)")
    try:
        expression = parse(args.expression)
        values = parse_assignments(args.assignments)
        expression.check_values(values)
        for name in args.why:
            if name not in expression.names:
                raise _InputError(f"--why {name}: {name} is not in the expression; its names are "
                                  f"{', '.join(expression.names) or '(none)'}")
        output, leaves = expression.build(values)
    except (ExpressionError, _InputError) as error:
        return _error(str(error))

    from chainrule.drawing import to_dot, to_svg
    from chainrule.explanations import explain
    from chainrule.traces import trace, trace_to_json

    t = trace(output)
    status = _write_svg(to_svg(t), args.svg) if args.svg else 0
    if args.json:
        print(trace_to_json(t, indent=2))
        return status
    if args.dot:
        print(to_dot(t), end="")
        return status
    _print_report(expression, t, args, lambda name: explain(output, leaves[name]))
    if args.check_torch:
        print()
        status = max(status, _print_torch_check(expression, values))
    return status


def _write_svg(svg: str, path: str) -> int:
    """Write the picture to `path`: 0, or 1 after saying why it could not be written."""
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(svg)
    except OSError as error:
        print(f"chainrule graph: cannot write {path}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {path}", file=sys.stderr)
    return 0


def _print_report(expression: Expression, t: dict[str, Any], args: argparse.Namespace,
                  why: Callable[[str], str]) -> None:
    """The graph as text, the output's gradients, the steps (--steps) and the paths of each --why name."""
    from chainrule.drawing import to_text

    by_id = {n["id"]: n for n in t["nodes"]}
    out_node = by_id[t["output"]]
    print(f"{expression.text}")
    print()
    print(to_text(t), end="")
    print()
    print(f"Gradients of the output ({out_node['label']} = {_precise(out_node, 'data')}):")
    label_to_node = {n["label"]: n for n in t["nodes"] if n["leaf"] and not n.get("constant")}
    prefixes = {name: f"  d{_wrap(out_node['label'])}/d{_wrap(name)}" for name in expression.names}
    width = max((len(p) for p in prefixes.values()), default=0)
    for name in expression.names:
        print(f"{prefixes[name].ljust(width)} = {_precise(label_to_node[name], 'grad')}")
    if not expression.names:
        print("  (the expression has no names, so there are no input gradients)")
    if args.steps:
        print()
        print("Forward pass:")
        for step in t["forward"]:
            print(f"  {step['step']:>3}. {step['caption']}")
        print("Backward pass:")
        for step in t["backward"]:
            print(f"  {step['step']:>3}. {step['caption']}")
    for name in args.why:
        print()
        print(f"Why d{_wrap(out_node['label'])}/d{_wrap(name)} = {_precise(label_to_node[name], 'grad')}:")
        print(why(name))


def _wrap(name: str) -> str:
    return name if len(name) == 1 else f"({name})"


def _precise(node: dict[str, Any], key: str) -> str:
    """A node's data or grad with up to 10 significant digits (short when the number is short)."""
    from chainrule.traces import format_number

    x = node[key]
    return node.get(f"{key}_text", "nan") if x is None else format_number(x, 10)


# --- PyTorch comparison ---------------------------------------------------------------------------


def torch_gradients(expression: Any, values: dict[str, float]) -> tuple[float, dict[str, float]]:
    """(output, {name: gradient}) computed by PyTorch in float64 from the same parsed expression.
    Raises ImportError when torch is not installed."""
    import torch

    def leaf(name: str, value: float) -> Any:
        return torch.tensor(value, dtype=torch.float64, requires_grad=True)

    lib = {
        "leaf": leaf,
        "number": lambda value: torch.tensor(value, dtype=torch.float64),
        "neg": lambda a: -a,
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "/": lambda a, b: a / b,
        "**": lambda a, b: torch.pow(a, b),
        "**const": lambda a, k: torch.pow(a, k),
    }
    for name, op in functions(1).items():  # every function of the op table, by its PyTorch name
        lib["call:" + name] = torch_function(torch, op)
    output, leaves = expression.evaluate(values, lib)
    if output.requires_grad:
        output.backward()
    grads = {name: (t.grad.item() if t.grad is not None else 0.0) for name, t in leaves.items()}
    return output.item(), grads


def torch_function(torch: Any, op: Any) -> Any:
    """PyTorch's function for an op of the table (`Op.torch`, a name under `torch`)."""
    if op.torch is None:
        raise ImportError(f"the op {op.name} names no PyTorch function to compare with")
    found = torch
    for part in op.torch.split("."):
        found = getattr(found, part)
    return found


def _agree(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=TORCH_RTOL, abs_tol=TORCH_ATOL)


def compare_with_torch(expression: Any, values: dict[str, float]) -> list[dict[str, Any]]:
    """One row per name (and one for the output value): chainrule's number, torch's, and whether
    they agree within rel 1e-9 / abs 1e-12. Raises ImportError when torch is not installed."""
    from chainrule.traces import trace

    torch_output, torch_grads = torch_gradients(expression, values)
    output, leaves = expression.build(values)
    t = trace(output)
    ids = {id(v): n for v, n in zip(_graph_nodes(output), t["nodes"])}
    rows = [{"name": "output value", "chainrule": output.data, "torch": torch_output,
             "agree": _agree(output.data, torch_output)}]
    for name in expression.names:
        g = ids[id(leaves[name])]["grad"]
        mine = math.nan if g is None else g
        if g is None:  # JSON null: recover the float (nan or an infinity) from the engine
            mine = _engine_gradient(output, leaves[name])
        rows.append({"name": name, "chainrule": mine, "torch": torch_grads[name],
                     "agree": _agree(mine, torch_grads[name])})
    return rows


def _graph_nodes(output: Any) -> list[Any]:
    from chainrule.traces import graph_nodes

    return graph_nodes(output)


def _engine_gradient(output: Any, leaf: Any) -> float:
    from chainrule.engine import grad

    return grad(output, [leaf])[0].data


def _print_torch_check(expression: Any, values: dict[str, float]) -> int:
    try:
        rows = compare_with_torch(expression, values)
    except ImportError:
        print("--check-torch: PyTorch is not installed, so nothing was compared. "
              "Install it (pip install torch) and run again.")
        return 1
    print("Check against PyTorch (float64):")
    width = max(len(r["name"]) for r in rows)
    print(f"  {'':<{width}}  {'chainrule':>22}  {'torch float64':>22}  agree")
    for row in rows:
        print(f"  {row['name']:<{width}}  {row['chainrule']!r:>22}  {row['torch']!r:>22}  "
              f"{'yes' if row['agree'] else 'NO'}")
    bad = [r["name"] for r in rows if not r["agree"]]
    if bad:
        print(f"Disagreement with PyTorch for: {', '.join(bad)}.")
        return 1
    print(f"All {len(rows) - 1} gradients and the output agree with PyTorch float64 "
          f"(relative tolerance {TORCH_RTOL:g}).")
    return 0
