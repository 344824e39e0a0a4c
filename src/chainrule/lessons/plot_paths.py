"""The path-sum view: a gradient as the sum over every path from an input to the output, and what reverse
mode shares between those paths.

    {"kind": "paths", "functions": [
       {"name": "plain", "label": "y = x·tanh(w·x)", "inputs": {"x": 0.5, "w": 2},
        "let": [["u", "w * x"], ["o", "tanh(u)"]], "output": "x * o"}, ...]}

A function is one output built on its inputs (the syntax of `chainrule graph`; "let" names inner values,
as in the sweeps plot). Every edge of the graph (an input of a node to the node) carries the node's local
derivative, from the engine's op table (`traces.local_derivatives`). A path from an input to the output
multiplies the local derivatives of its edges; the sum of the products over every path from an input is
that input's gradient, and equals the engine's backward pass (checked here, with the gradient of every
node from one `backward()`).

What reverse mode shares: the gradient of the output with respect to an inner node is the sum over the
paths from that node to the output, computed once by reverse mode. A path's shared part runs from the
output back to the inner node nearest its input that two or more paths pass through; every path through
that node reuses its gradient. Multiplications, counted the same way for both (one per local derivative
multiplied in, starting from the seed 1): the path-sum way multiplies along every path on its own (its
edge count each), reverse mode once per edge the paths use.

A sweeps plot may carry a paths spec (without "kind") under "paths", shown beneath its Jacobian.
Placeholders: {{plot.<function>.<field>}} with field paths, edges, path_multiplications or
reverse_multiplications.
"""

from __future__ import annotations

import math
from typing import Any

from chainrule.engine import Value
from chainrule.expr import Expression
from chainrule.lessons.plot_sweeps import named_functions, parse_function
from chainrule.lessons.text import LessonDataError
from chainrule.number_text import formula_text
from chainrule.traces import graph_nodes, local_derivatives, node_formulas, node_labels

__all__ = ["MAX_PATHS", "PATH_FIELDS", "path_number", "path_plot", "paths_of"]

PATH_FIELDS = ("paths", "edges", "path_multiplications", "reverse_multiplications")
MAX_PATHS = 24  # every path one step of the page's stepper and one row of its table


def paths_of(output: Value, inputs: list[Value]) -> dict[str, Any]:
    """Every path from each input to `output`, each edge's local derivative, and what reverse mode shares;
    the nodes must carry labels (the inputs' names). LessonDataError when a graph has more than MAX_PATHS
    paths or a local derivative is masked (a kink)."""
    nodes = graph_nodes(output)
    names = dict(zip(map(id, nodes), node_labels(nodes)))
    formulas = dict(zip(map(id, nodes), node_formulas(nodes)))
    output.backward()  # every node's gradient, from the engine's own backward pass
    # node -> the edges leaving it: (the node it feeds, the local derivative, which operand of it); x*x has two
    heads: dict[int, list[tuple[Value, float, int]]] = {}
    for node in nodes:
        for operand, (parent, local) in enumerate(zip(node._prev, local_derivatives(node) if node._prev else ())):
            if local is None:
                raise LessonDataError(f"plot: {names[id(node)]} sits on a kink, where its local derivative is "
                                      "not defined; choose inputs away from it")
            heads.setdefault(id(parent), []).append((node, local, operand))
    paths: list[list[tuple[Value, Value, float, int]]] = []

    def walk(node: Value, edges: list[tuple[Value, Value, float, int]]) -> None:
        if node is output:
            paths.append(edges)
            if len(paths) > MAX_PATHS:
                raise LessonDataError(f"plot: the graph has more than {MAX_PATHS} paths from its inputs to "
                                      "its output, too many to walk one by one; choose a smaller graph")
            return
        for head, local, operand in heads.get(id(node), []):
            walk(head, [*edges, (node, head, local, operand)])

    for leaf in inputs:
        walk(leaf, [])
    through: dict[int, int] = {}
    for edges in paths:
        for _, head, _, _ in edges[:-1]:  # the inner nodes of the path
            through[id(head)] = through.get(id(head), 0) + 1
    edge_set = {(id(tail), id(head), operand) for edges in paths for tail, head, _, operand in edges}
    listed: list[dict[str, Any]] = []
    for edges in paths:
        inner = [head for _, head, _, _ in edges[:-1]]
        shared = next((i for i, node in enumerate(inner) if through[id(node)] >= 2), None)
        product = math.prod(local for _, _, local, _ in edges)
        listed.append({
            "input": names[id(edges[0][0])],
            "nodes": [names[id(edges[0][0])]] + [names[id(head)] for _, head, _, _ in edges],
            "steps": [{"from": names[id(tail)], "to": names[id(head)], "local": local}
                      for tail, head, local, _ in edges],
            "product": product, "multiplications": len(edges),
            # the edges from this one on are reverse mode's shared part (None: the path shares nothing)
            "shared_from": None if shared is None else shared + 1,
            "shared_node": None if shared is None else names[id(inner[shared])],
            "shared_gradient": None if shared is None else float(inner[shared].grad),
        })
    so_far = 0
    for path in listed:  # the page's tally: multiplications path by path, up to and with this path
        so_far += path["multiplications"]
        path["multiplications_so_far"] = so_far
    totals = []
    for leaf in inputs:
        own = [path for path in listed if path["input"] == names[id(leaf)]]
        totals.append({"name": names[id(leaf)], "value": float(leaf.data), "paths": len(own),
                       "path_sum": math.fsum(path["product"] for path in own), "gradient": float(leaf.grad)})
    return {
        "nodes": [{"name": names[id(node)], "formula": formula_text(formulas[id(node)]), "value": float(node.data),
                   "gradient": float(node.grad)} for node in nodes if node._prev],
        "inputs": totals, "paths": listed, "edges": len(edge_set),
        "path_multiplications": sum(path["multiplications"] for path in listed),
        "reverse_multiplications": len(edge_set),
    }


def path_plot(spec: dict[str, Any]) -> dict[str, Any]:
    """{"kind", "functions": [{"name", "label", "formulas", "output" (the output's name, "y"), and
    paths_of's fields}]}."""
    out: list[dict[str, Any]] = []
    for name, function in named_functions(spec, "a paths plot", "inputs, let, output"):
        where = f"function {name!r}: "
        if not isinstance(function.get("output"), str):
            raise LessonDataError(f"plot: {where}output must be one expression (text), the function's output y")
        names, values, shared, expressions = parse_function(function | {"outputs": [function["output"]]}, where)
        leaves = [Value(value, label=input_name) for input_name, value in zip(names, values)]
        if "y" in names or any(let_name == "y" for let_name, _ in shared):
            raise LessonDataError(f"plot: {where}the output is called y, so no input or let value may be")
        output = _named(names, leaves, shared, expressions[0], where)
        if not math.isfinite(output.data):
            raise LessonDataError(f"plot: function {name!r} is not finite at its inputs")
        found = paths_of(output, leaves)
        numbers = [p["product"] for p in found["paths"]] + [n["gradient"] for n in found["nodes"]]
        if not all(math.isfinite(x) for x in numbers):
            raise LessonDataError(f"plot: function {name!r} has a gradient that is not finite at its inputs")
        formulas = [f"{let_name} = {text}" for let_name, text in function.get("let", [])]
        formulas.append(f"y = {function['output']}")
        out.append({"name": name, "label": function["label"], "formulas": [formula_text(t) for t in formulas],
                    "output": "y"} | found)
    return {"kind": "paths", "functions": out}


def _named(names: list[str], leaves: list[Value], shared: list[tuple[str, Expression]], expression: Expression,
           where: str) -> Value:
    """The output built on the leaves, each let value labelled with its name and the output "y"."""
    by_name: dict[str, Value] = dict(zip(names, leaves))
    for let_name, let_expression in shared:
        built = let_expression.build_on({n: by_name[n] for n in let_expression.names})
        if not built._prev or any(built is known for known in by_name.values()):
            raise LessonDataError(f"plot: {where}let {let_name} must compute something, not rename a value")
        built.label = let_name
        by_name[let_name] = built
    output: Value = expression.build_on({n: by_name[n] for n in expression.names})
    if not output._prev or any(output is known for known in by_name.values()):
        raise LessonDataError(f"plot: {where}the output must compute something from the inputs, not be one of them")
    output.label = "y"
    return output


def path_number(plot: dict[str, Any], name: str, field: str) -> float:
    function = next((f for f in plot["functions"] if f["name"] == name), None)
    if function is None or field not in PATH_FIELDS:
        raise KeyError(f"plot.{name}.{field}")
    return len(function["paths"]) if field == "paths" else function[field]
