"""Step traces of a graph: the forward and backward passes as data a page can animate.

`trace(output)` walks the graph that made `output` and returns a JSON-ready dict (schema
"chainrule.trace/1", see docs/trace.md): every node with its value and gradient, one forward step per
node, and one backward step per interior node. A backward step records, for each input, the chain rule
in numbers::

    contribution = local derivative x upstream gradient       (d out/d input x d output/d out)
    input's gradient += contribution                          (uses of one value add up)

Captions are plain English built from the op table (`Op.formula`, `Op.local_text`, `Op.local`), so the
words and the numbers always come from the same rule as the engine's backward pass.

`explain(output, value)` writes d output/d value as a sum over paths of products of local derivatives.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator

from chainrule.engine import Value, grad
from chainrule.ops import Op

__all__ = ["trace", "trace_to_json", "explain", "format_number", "graph_nodes", "node_labels",
           "TRACE_SCHEMA", "SCHEMA_ID", "MAX_EXPLAINED_PATHS"]

SCHEMA_ID = "chainrule.trace/1"
MAX_EXPLAINED_PATHS = 20  # explain() lists at most this many paths and says when there are more


# --- numbers and names -----------------------------------------------------------------------------


# Multiplication in prose: a sign that no variable is named (a "x" beside an input named x reads wrong);
# "*" stays for code and formulas.
TIMES = "\u00d7"


def format_number(x: float, digits: int = 4) -> str:
    """A float as short readable text; the one rule for every number a learner reads.

    nan, inf and -inf as words; 0 (and -0) as "0"; whole numbers below a million without a decimal point
    (-3, 6); numbers from 1e-4 up to a million with at most `digits` decimals, trailing zeros dropped
    (6.8814, 0.5, 0.7071); anything smaller or larger with `digits` significant digits in exponent form
    (1e-5, 1.235e6). The lesson page's JavaScript applies the same rule (with digits = 4).
    """
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    if 1e-4 <= abs(x) < 1e6:
        text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    mantissa, exponent = f"{x:.{max(digits - 1, 0)}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"  # 1e-05 -> 1e-5, 1.235e+06 -> 1.235e6


def _json_number(x: float) -> float | None:
    """JSON has no nan or infinity: those become null (the caption still says nan/inf)."""
    return float(x) if math.isfinite(x) else None


def graph_nodes(output: Value) -> list[Value]:
    """Every node of the graph, leaves first, then interior nodes in topological order, output last.

    Leaves and interior nodes each keep the order of a left-first depth-first walk, so for
    e = a*b, d = e+c, L = d*f the order is a, b, c, f, e, d, L. Iterative: any depth is fine.
    """
    if not isinstance(output, Value):
        raise TypeError(f"expected a chainrule Value, not {type(output).__name__}")
    seen: set[int] = {id(output)}
    post_order: list[Value] = []
    stack: list[tuple[Value, int]] = [(output, 0)]
    while stack:
        node, next_input = stack[-1]
        prev = node._prev
        if next_input < len(prev):
            stack[-1] = (node, next_input + 1)
            child = prev[next_input]
            if id(child) not in seen:
                seen.add(id(child))
                stack.append((child, 0))
        else:
            stack.pop()
            post_order.append(node)
    leaves = [v for v in post_order if not v._prev]
    interior = [v for v in post_order if v._prev]
    return leaves + interior


def node_labels(nodes: list[Value]) -> list[str]:
    """A readable name per node: its label; else its value for a leaf (a constant such as 2);
    else "out" for the output and t1, t2, ... for the other interior nodes (skipping taken names)."""
    taken = {v.label for v in nodes if v.label}
    labels: list[str] = []
    counter = 0
    output = nodes[-1]
    for v in nodes:
        if v.label:
            labels.append(v.label)
        elif not v._prev:
            labels.append(format_number(v.data))
        elif v is output and "out" not in taken:
            labels.append("out")
        else:
            while True:
                counter += 1
                name = f"t{counter}"
                if name not in taken:
                    break
            labels.append(name)
    return labels


def _fill(template: str, op: Op, names: list[str], out: str) -> str:
    """Put names into an op template: {a}, {b} are the inputs, {out} the result."""
    a = names[0] if names else ""
    b = names[1] if len(names) > 1 else ""
    return template.format(a=a, b=b, out=out)


def _right_side(op: Op) -> str:
    """The part of `op.formula` after "{out} = "."""
    formula = op.formula
    prefix = "{out} = "
    return formula[len(prefix):] if formula.startswith(prefix) else formula


def equation_text(*sides: str) -> str:
    """The sides of a caption's equation joined by " = ", each said once: "e = a * b = 2 * -3 = -6".

    A node labelled by its own expression ("x1*w1 + x2*w2"), or an expression of constants whose
    numbers are its names, would otherwise read "x = x = ..."; a side equal to the one before it,
    spaces aside, is left out.
    """
    kept: list[str] = []
    for side in sides:
        if not kept or "".join(side.split()) != "".join(kept[-1].split()):
            kept.append(side)
    return " = ".join(kept)


def _grouped(text: str) -> str:
    """Parenthesise a compound expression so that 'x (gradient ...)' reads right."""
    return f"({text})" if " " in text.strip() else text


def _local_derivatives(node: Value) -> tuple[float | None, ...]:
    """The op table's local derivatives at this node; None marks a masked slope (see ops.chain)."""
    prev = node._prev
    return tuple(None if d is None else float(d) for d in node._op.local(*[p.data for p in prev], node.data))


def _contributions(node: Value, upstream: float) -> tuple[float, ...]:
    """What each input receives, formed by the op table's pullback exactly as the backward pass forms it
    (a denominator divides the gradient), so the trace's gradients are the engine's; masked gives 0."""
    received = node._op.pullback(upstream, *[p.data for p in node._prev], node.data)
    return tuple(0.0 if r is None else float(r) for r in received)


# --- the trace -----------------------------------------------------------------------------------


def trace(output: Value) -> dict[str, Any]:
    """The forward and backward passes of the graph behind `output`, step by step (schema
    "chainrule.trace/1", docs/trace.md). Does not change any `.grad`: it keeps its own accumulators.

    Backward step 0 seeds d output/d output = 1; each later step is one interior node, in reverse
    topological order, passing contribution = local derivative x its gradient to each input.
    """
    nodes = graph_nodes(output)
    labels = node_labels(nodes)
    index = {id(v): i for i, v in enumerate(nodes)}
    ids = [f"n{i}" for i in range(len(nodes))]
    fmt = format_number

    node_entries: list[dict[str, Any]] = []
    forward: list[dict[str, Any]] = []
    for i, v in enumerate(nodes):
        entry: dict[str, Any] = {
            "id": ids[i], "label": labels[i], "op": v.op, "symbol": v._op.symbol if v._op else "",
            "inputs": [ids[index[id(p)]] for p in v._prev], "data": _json_number(v.data),
            "grad": None, "leaf": not v._prev, "constant": not v._prev and not v.label,
        }
        if v._prev:
            input_labels = [labels[index[id(p)]] for p in v._prev]
            right = _right_side(v._op)
            entry["formula"] = equation_text(labels[i], _fill(right, v._op, input_labels, labels[i]))
            with_values = _fill(right, v._op, [fmt(p.data) for p in v._prev], fmt(v.data))
            caption = equation_text(labels[i], _fill(right, v._op, input_labels, labels[i]), with_values, fmt(v.data))
        elif v.label:
            caption = f"{labels[i]} = {fmt(v.data)} is an input."
        else:
            caption = f"{labels[i]} is a constant input."
        node_entries.append(entry)
        forward.append({"step": i, "node": ids[i], "value": _json_number(v.data), "caption": caption})

    # Backward: our own accumulators, so the graph's .grad stays untouched.
    grads = [0.0] * len(nodes)
    received: list[list[float]] = [[] for _ in nodes]  # each contribution each node received
    out_index = len(nodes) - 1
    grads[out_index] = 1.0
    out_label = labels[out_index]
    backward: list[dict[str, Any]] = [{
        "step": 0, "node": ids[out_index], "grad": 1.0,
        "caption": f"{out_label} is the output, so its gradient is 1.", "contributions": [],
    }]
    for i in range(len(nodes) - 1, -1, -1):
        v = nodes[i]
        if not v._prev:
            continue
        upstream = grads[i]
        input_labels = [labels[index[id(p)]] for p in v._prev]
        locals_ = _local_derivatives(v)
        contributions = []
        parts = []
        for k, (p, slope, contribution) in enumerate(zip(v._prev, locals_, _contributions(v, upstream))):
            j = index[id(p)]
            local = 0.0 if slope is None else slope
            grads[j] += contribution
            received[j].append(contribution)
            local_text = _fill(v._op.local_text[k], v._op, input_labels, labels[i])
            contributions.append({
                "input": ids[j], "local": _json_number(local), "local_text": local_text,
                "upstream": _json_number(upstream), "contribution": _json_number(contribution),
                "grad_after": _json_number(grads[j]),
            })
            part = (f"{labels[j]} receives {_grouped(local_text)} {TIMES} (gradient at {labels[i]}) = "
                    f"{fmt(local)} {TIMES} {fmt(upstream)} = {fmt(contribution)}")
            if len(received[j]) > 1:
                part += f" ({labels[j]} now holds {_sum_text(received[j])} = {fmt(grads[j])})"
            parts.append(part)
        names_side = _fill(_right_side(v._op), v._op, input_labels, labels[i])
        caption = f"{equation_text(labels[i], names_side)}, so " + ", and ".join(parts)
        backward.append({
            "step": len(backward), "node": ids[i], "grad": _json_number(upstream),
            "caption": caption, "contributions": contributions,
        })

    for i, entry in enumerate(node_entries):
        entry["grad"] = _json_number(grads[i])
        # JSON has no nan/inf: say which one a null stands for.
        if entry["data"] is None:
            entry["data_text"] = fmt(nodes[i].data)
        if entry["grad"] is None:
            entry["grad_text"] = fmt(grads[i])
    return {"schema": SCHEMA_ID, "output": ids[out_index], "nodes": node_entries,
            "forward": forward, "backward": backward}


def _sum_text(terms: list[float]) -> str:
    """'2 + 2', or for many uses '... + 2' after the first three terms."""
    shown = [format_number(t) for t in terms]
    if len(shown) > 6:
        shown = shown[:3] + ["..."] + shown[-2:]
    return " + ".join(shown)


def trace_to_json(trace_dict: dict[str, Any], indent: int | None = None) -> str:
    """The trace as JSON text (strict JSON: no NaN or Infinity tokens, those are already null)."""
    return json.dumps(trace_dict, indent=indent, allow_nan=False)


# --- the JSON schema (documented in docs/trace.md; tests check the two agree) --------------------

_NUMBER = {"type": ["number", "null"]}
_NODE_ID = {"type": "string", "pattern": "^n[0-9]+$"}

TRACE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://chainrule.invalid/schemas/trace-1.json",
    "title": "chainrule step trace, version 1",
    "$defs": {
        "geometry": {
            "type": "object",
            "required": ["shape", "width", "height", "box", "boxes", "ops", "edges"],
            "properties": {
                "shape": {"enum": ["wide", "narrow"]},
                "width": {"type": "number"},
                "height": {"type": "number"},
                "box": {"type": "object", "required": ["w", "h"],
                        "properties": {"w": {"type": "number"}, "h": {"type": "number"}}},
                "boxes": {"type": "object", "additionalProperties": {
                    "type": "object", "required": ["x", "y"],
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
                "ops": {"type": "object", "additionalProperties": {
                    "type": "object", "required": ["cx", "cy", "rx", "ry", "link"],
                    "properties": {"cx": {"type": "number"}, "cy": {"type": "number"}, "rx": {"type": "number"},
                                   "ry": {"type": "number"}, "link": {"type": "string"}}}},
                "edges": {"type": "array", "items": {
                    "type": "object", "required": ["from", "to", "input", "d", "label"],
                    "properties": {
                        "from": _NODE_ID, "to": _NODE_ID, "input": {"type": "integer", "minimum": 0},
                        "d": {"type": "string"},
                        "label": {"type": "object", "required": ["x", "y", "anchor"],
                                  "properties": {"x": {"type": "number"}, "y": {"type": "number"},
                                                 "anchor": {"enum": ["start", "end"]}}},
                    }}},
            },
        },
    },
    "type": "object",
    "required": ["schema", "output", "nodes", "forward", "backward"],
    "properties": {
        "schema": {"const": SCHEMA_ID},
        "output": _NODE_ID,
        "nodes": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "label", "op", "symbol", "inputs", "data", "grad", "leaf"],
                "properties": {
                    "id": _NODE_ID,
                    "label": {"type": "string"},
                    "op": {"type": "string"},
                    "symbol": {"type": "string"},
                    "inputs": {"type": "array", "items": _NODE_ID, "maxItems": 2},
                    "data": _NUMBER,
                    "grad": _NUMBER,
                    "leaf": {"type": "boolean"},
                    "constant": {"type": "boolean"},
                    "formula": {"type": "string"},
                    "data_text": {"enum": ["nan", "inf", "-inf"]},
                    "grad_text": {"enum": ["nan", "inf", "-inf"]},
                },
            },
        },
        "forward": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["step", "node", "value", "caption"],
                "properties": {
                    "step": {"type": "integer", "minimum": 0},
                    "node": _NODE_ID,
                    "value": _NUMBER,
                    "caption": {"type": "string"},
                },
            },
        },
        "layout": {
            "description": "Optional: where a page draws each shape (chainrule.draw.page_layout).",
            "type": "object",
            "required": ["wide", "narrow"],
            "properties": {"wide": {"$ref": "#/$defs/geometry"}, "narrow": {"$ref": "#/$defs/geometry"}},
        },
        "backward": {
            "type": "array", "minItems": 1,
            "items": {
                "type": "object",
                "required": ["step", "node", "grad", "caption", "contributions"],
                "properties": {
                    "step": {"type": "integer", "minimum": 0},
                    "node": _NODE_ID,
                    "grad": _NUMBER,
                    "caption": {"type": "string"},
                    "contributions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["input", "local", "local_text", "upstream", "contribution",
                                         "grad_after"],
                            "properties": {
                                "input": _NODE_ID,
                                "local": _NUMBER,
                                "local_text": {"type": "string"},
                                "upstream": _NUMBER,
                                "contribution": _NUMBER,
                                "grad_after": _NUMBER,
                            },
                        },
                    },
                },
            },
        },
    },
}


# --- explain: the gradient as a sum over paths ----------------------------------------------------


def explain(output: Value, value: Value, max_paths: int = MAX_EXPLAINED_PATHS) -> str:
    """d output/d value in words: the sum, over every path from `value` to `output`, of the product
    of the local derivatives along the path (the chain rule, path by path). At most `max_paths`
    paths are listed; the text says how many there are in all when it lists fewer."""
    if not isinstance(value, Value):
        raise TypeError(f"explain() takes a chainrule Value to explain, not {type(value).__name__}")
    nodes = graph_nodes(output)
    labels = node_labels(nodes)
    index = {id(v): i for i, v in enumerate(nodes)}
    out_i = len(nodes) - 1
    fmt = format_number
    if id(value) not in index:
        name = value.label or format_number(value.data)
        return (f"{name} is not part of the graph of {labels[out_i]}: no path leads from it to "
                f"{labels[out_i]}, so {_d(labels[out_i], name)} = 0.")
    start = index[id(value)]
    name, out = labels[start], labels[out_i]
    if start == out_i:
        return f"{out} is the output itself: {_d(out, out)} = 1 by definition."

    # users[j]: the edges (user node, input position) leaving node j towards the output.
    users: list[list[tuple[int, int]]] = [[] for _ in nodes]
    for i, v in enumerate(nodes):
        for k, p in enumerate(v._prev):
            users[index[id(p)]].append((i, k))
    locals_cache: dict[int, tuple[float | None, ...]] = {}

    def local(i: int, k: int) -> float:  # a masked slope reads as 0 along a path
        if i not in locals_cache:
            locals_cache[i] = _local_derivatives(nodes[i])
        slope = locals_cache[i][k]
        return 0.0 if slope is None else slope

    # Count the paths exactly (they can be exponentially many) by walking nodes from the output back.
    path_count = [0] * len(nodes)
    path_count[out_i] = 1
    for j in range(len(nodes) - 1, -1, -1):
        if j != out_i:
            path_count[j] = sum(path_count[i] for i, _ in users[j])
    total_paths = path_count[start]

    grad = trace_grads(nodes, index)[start]
    lines = []
    paths = list(_paths(start, out_i, users, max_paths))
    if total_paths == 1:
        (i, k), = paths[0][:1]
        v = nodes[i]
        formula = _fill(v._op.formula, v._op, [labels[index[id(p)]] for p in v._prev], labels[i])
        local_text = _fill(v._op.local_text[k], v._op, [labels[index[id(p)]] for p in v._prev],
                           labels[i])
        lines.append(f"{name} reaches {out} along one path only, first through {formula}, whose "
                     f"derivative with respect to {name} is {local_text} = {fmt(local(i, k))}.")
    else:
        lines.append(f"{name} reaches {out} along {total_paths} paths. {_d(out, name)} is the sum, over "
                     "the paths, of the product of the local derivatives along each path.")
    zero_paths = 0
    total = 0.0
    for number, path in enumerate(paths, start=1):
        steps = [name]
        factors: list[float] = []
        detail = []
        previous = start
        for i, k in path:
            v = nodes[i]
            input_labels = [labels[index[id(p)]] for p in v._prev]
            formula = _fill(v._op.formula, v._op, input_labels, labels[i])
            local_text = _fill(v._op.local_text[k], v._op, input_labels, labels[i])
            d = local(i, k)
            factors.append(d)
            steps.append(labels[i])
            value_text = "" if local_text == fmt(d) else f" = {fmt(d)}"
            which = ""
            if len(v._prev) == 2 and v._prev[0] is v._prev[1]:
                which = " (as its first input)" if k == 0 else " (as its second input)"
            detail.append(f"    {formula}: {_d(labels[i], labels[previous])} = {local_text}{value_text}"
                          f"{which}")
            previous = i
        product = math.prod(factors)
        total += product
        if product == 0:
            zero_paths += 1
        if len(detail) > 12:  # a long chain: show its ends
            detail = detail[:5] + [f"    ... {len(detail) - 10} more steps ..."] + detail[-5:]
            factor_text = f" {TIMES} ".join(fmt(f) for f in factors[:5]) + f" {TIMES} ... {TIMES} " + \
                f" {TIMES} ".join(fmt(f) for f in factors[-5:])
            route = " -> ".join(steps[:6]) + " -> ... -> " + " -> ".join(steps[-5:])
        else:
            factor_text = f" {TIMES} ".join(fmt(f) for f in factors)
            route = " -> ".join(steps)
        lines.append(f"  Path {number}: {route}")
        lines.extend(detail)
        lines.append(f"    product: {factor_text} = {fmt(product)}")
    if len(paths) < total_paths:
        lines.append(f"Showing {len(paths)} of {total_paths} paths (the list is truncated at "
                     f"{max_paths}); the paths shown add up to {fmt(total)}.")
        lines.append(f"Over all {total_paths} paths the sum is {_d(out, name)} = {fmt(grad)} "
                     "(backpropagation adds them all up in one sweep).")
    else:
        terms = " + ".join(fmt(p) for p in _path_products(paths, local)) if len(paths) > 1 else None
        if terms:
            lines.append(f"Sum over the {len(paths)} paths: {terms} = {fmt(grad)} = {_d(out, name)}.")
        else:
            lines.append(f"So {_d(out, name)} = {fmt(grad)}.")
    if zero_paths and zero_paths == len(paths) and len(paths) == total_paths:
        lines.append(f"Every path has a zero factor, so nudging {name} changes {out} by nothing "
                     "right now (to first order).")
    elif zero_paths:
        lines.append(f"{zero_paths} of the paths shown have a zero factor and contribute nothing.")
    return "\n".join(lines)


def _d(top: str, bottom: str) -> str:
    """The derivative symbol d top/d bottom, with parentheses around names longer than a letter."""
    def wrap(name: str) -> str:
        return name if len(name) == 1 else f"({name})"
    return f"d{wrap(top)}/d{wrap(bottom)}"


def _path_products(paths: list[list[tuple[int, int]]], local: Any) -> list[float]:
    return [math.prod(local(i, k) for i, k in path) for path in paths]


def _paths(start: int, out_i: int, users: list[list[tuple[int, int]]],
           limit: int) -> Iterator[list[tuple[int, int]]]:
    """Up to `limit` paths from node `start` to the output, as lists of (user node, input position).
    Iterative depth-first search; every node reaches the output, so no branch is a dead end."""
    found = 0
    path: list[tuple[int, int]] = []
    stack: list[tuple[int, int]] = [(start, 0)]  # (node, index of the next user edge to try)
    while stack and found < limit:
        node, edge = stack[-1]
        if node == out_i:
            yield list(path)
            found += 1
            stack.pop()
            if path:
                path.pop()
            continue
        if edge < len(users[node]):
            stack[-1] = (node, edge + 1)
            user, position = users[node][edge]
            path.append((user, position))
            stack.append((user, 0))
        else:
            stack.pop()
            if path:
                path.pop()


def trace_grads(nodes: list[Value], index: dict[int, int]) -> list[float]:
    """d output/d node for every node (output = nodes[-1]), without touching `.grad`."""
    return [g.data for g in grad(nodes[-1], nodes)]
