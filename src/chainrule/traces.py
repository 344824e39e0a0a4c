"""Step traces of a graph: the forward and backward passes as data a page can animate.

`trace(output)` walks the graph that made `output` and returns a JSON-ready dict (schema
"chainrule.trace/1", see docs/trace.md): every node with its value and gradient, one forward step per
node, and one backward step per interior node. A backward step records, for each input, the chain rule
in numbers::

    contribution = local derivative x upstream gradient       (d out/d input x d output/d out)
    input's gradient += contribution                          (uses of one value add up)

Captions are plain English built from the op table (`Op.formula`, `Op.local_text`, `Op.local`), so the
words and the numbers always come from the same rule as the engine's backward pass.

The backward steps are recorded by the engine's own backward sweep (`engine.reverse_sweep`, with an
`inspect` hook), so the numbers a page shows are the ones `backward()` computes. The schema is the JSON file
`trace_schema.json` next to this module; `chainrule.explain` (explanations.py) says one gradient in words.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from chainrule.engine import Value, reverse_sweep, topological_order
from chainrule.number_text import (
    TIMES,
    format_number,
    formula_text,
    json_number,
    number_fields,
    operand_text,
    place_numbers,
)
from chainrule.ops import Op

__all__ = ["trace", "trace_to_json", "format_number", "graph_nodes", "node_labels", "fill_template",
           "local_derivatives", "subject", "node_formulas", "first_non_finite", "TRACE_SCHEMA", "SCHEMA_ID",
           "TIMES"]

SCHEMA_ID = "chainrule.trace/1"


# --- names ---------------------------------------------------------------------------------------------


def graph_nodes(output: Value) -> list[Value]:
    """Every node of the graph, leaves first, then interior nodes in topological order, output last.

    Both parts keep the order of the engine's graph walk (`topological_order`, a left-first depth-first
    walk), so for e = a*b, d = e+c, L = d*f the order is a, b, c, f, e, d, L.
    """
    if not isinstance(output, Value):
        raise TypeError(f"expected a chainrule Value, not {type(output).__name__}")
    order = topological_order(output)
    return [v for v in order if v._op is None] + [v for v in order if v._op is not None]


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


def fill_template(template: str, names: list[str], out: str) -> str:
    """Put names into an op template: {a}, {b} are the inputs, {out} the result."""
    a = names[0] if names else ""
    b = names[1] if len(names) > 1 else ""
    return template.format(a=a, b=b, out=out)


def _op_of(node: Value) -> Op:
    """An interior node's op (only a leaf has none)."""
    if node._op is None:
        raise ValueError("a leaf has no op")
    return node._op


def _right_side(op: Op) -> str:
    """The part of `op.formula` after "{out} = "."""
    formula = op.formula
    prefix = "{out} = "
    return formula[len(prefix):] if formula.startswith(prefix) else formula


def _same_text(a: str, b: str) -> bool:
    """Two sides that say the same, spaces and the way multiplication is written aside."""
    def squeeze(side: str) -> str:
        return "".join(side.split()).replace(TIMES, "*")
    return squeeze(a) == squeeze(b)


def equation_text(*sides: str) -> str:
    """The sides of a caption's equation joined by " = ", each said once: "e = a × b = 2 × (-3) = -6".

    A node labelled by its own expression ("x1*w1 + x2*w2"), or an expression of constants whose
    numbers are its names, would otherwise read "x = x = ..."; a side equal to the one before it,
    spaces aside, is left out.
    """
    kept: list[str] = []
    for side in sides:
        if not kept or not _same_text(side, kept[-1]):
            kept.append(side)
    return " = ".join(kept)


def _grouped(text: str) -> str:
    """Parenthesise a compound expression so that 'x (gradient ...)' reads right."""
    return f"({text})" if " " in text.strip() else text


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")


def subject(label: str, constant: bool) -> str:
    """How a sentence names a node: by its label ("a receives ...", "x1*w1 receives ..."), and a constant
    as "the constant 1" (never "1 receives ...")."""
    return f"the constant {label}" if constant else label


def _sentence(text: str) -> str:
    """A sentence that starts with "the constant ..." starts with a capital; a label never changes case
    (e and E are different names)."""
    return "The" + text[3:] if text.startswith("the ") else text


def local_derivatives(node: Value) -> tuple[float | None, ...]:
    """The op table's local derivatives at this node; None marks a masked slope (see ops.chain)."""
    prev = node._prev
    return tuple(None if d is None else float(d) for d in _op_of(node).local(*[p.data for p in prev], node.data))


# --- the trace -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Graph:
    """What every step of a trace reads of the graph: its nodes in order and, for each, its id, label, text
    and the names side of its formula."""

    nodes: list[Value]
    labels: list[str]
    index: dict[int, int]  # id(node) -> its position
    ids: list[str]
    is_constant: list[bool]
    names_sides: list[str]
    texts: list[str]  # each value's text, written once

    @staticmethod
    def of(output: Value, constants: Iterable[Value]) -> "_Graph":
        nodes = graph_nodes(output)
        labels = node_labels(nodes)
        fixed = {id(v) for v in constants}
        index = {id(v): i for i, v in enumerate(nodes)}
        return _Graph(nodes, labels, index, [f"n{i}" for i in range(len(nodes))],
                      [not v._prev and (not v.label or id(v) in fixed) for v in nodes],
                      [_names_side(v, labels, index) if v._prev else "" for v in nodes],
                      [format_number(v.data) for v in nodes])


def trace(output: Value, *, gradients: dict[Value, float] | None = None,
          constants: Iterable[Value] = ()) -> dict[str, Any]:
    """The forward and backward passes of the graph behind `output`, step by step (schema
    "chainrule.trace/1", docs/trace.md). Does not change any `.grad`: it keeps its own accumulators.

    Backward step 0 seeds d output/d output = 1; each later step is one interior node, in reverse
    topological order, passing contribution = local derivative x its gradient to each input.
    Every number comes with its text ("<key>_text", `chainrule.number_text`).

    gradients: a dict to fill with every node's gradient (Value -> float), from the same one sweep.
    constants: leaves to show as constants of the formula (a lesson's 1/n) although they have a label.
    """
    graph = _Graph.of(output, constants)
    node_entries, forward = _forward_steps(graph)
    # Backward: the engine's sweep into our own dict, so the graph's .grad stays untouched; each node's
    # step is recorded from what the sweep's pullback passed.
    sweep = _BackwardSteps(graph, output)
    reverse_sweep([v for v in graph.nodes if v._op is not None], sweep.grads, inspect=sweep.record_step)
    grad_of = [sweep.grads.get(v, 0.0) for v in graph.nodes]
    for i, entry in enumerate(node_entries):
        entry.update(number_fields("grad", grad_of[i]))
    if gradients is not None:
        gradients.update(zip(graph.nodes, grad_of))
    origin = _forward_origin(graph.nodes, graph.labels, graph.index, graph.ids) or (
        sweep.first_bad[0] if sweep.first_bad else None)
    return {"schema": SCHEMA_ID, "output": graph.ids[-1], "nodes": node_entries,
            "forward": forward, "backward": sweep.backward, "non_finite": origin}


def _forward_steps(graph: _Graph) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each node's entry (its gradient still None) and each forward step with its caption."""
    labels, index, ids, texts = graph.labels, graph.index, graph.ids, graph.texts
    node_entries: list[dict[str, Any]] = []
    forward: list[dict[str, Any]] = []
    for i, v in enumerate(graph.nodes):
        data = json_number(v.data)
        entry: dict[str, Any] = {
            "id": ids[i], "label": labels[i], "op": v.op, "symbol": v._op.symbol if v._op else "",
            "inputs": [ids[index[id(p)]] for p in v._prev], "data": data, "data_text": texts[i],
            "grad": None, "grad_text": "", "leaf": not v._prev, "constant": graph.is_constant[i],
        }
        if v._prev:
            entry["formula"] = equation_text(labels[i], graph.names_sides[i])
            numbers_side = place_numbers(_right_side(_op_of(v)), {
                "a": texts[index[id(v._prev[0])]], "b": texts[index[id(v._prev[-1])]], "out": texts[i]})
            caption = equation_text(labels[i], graph.names_sides[i], numbers_side, texts[i])
        elif not graph.is_constant[i]:
            caption = f"{labels[i]} = {texts[i]} is an input."
        elif v.label:
            caption = f"{labels[i]} = {texts[i]} is a constant of the formula."
        else:
            caption = f"{labels[i]} is a constant input."
        node_entries.append(entry)
        forward.append({"step": i, "node": ids[i], "value": data, "value_text": texts[i], "caption": caption})
    return node_entries, forward


class _BackwardSteps:
    """The backward steps, recorded from the engine's sweep (record_step is its `inspect`): the seed, then one
    step per interior node with what each input received."""

    def __init__(self, graph: _Graph, output: Value) -> None:
        self.graph = graph
        self.grads: dict[Value, float] = {output: 1.0}
        self.received: list[list[float]] = [[] for _ in graph.nodes]  # each contribution each node received
        out_label = graph.labels[-1]
        self.backward: list[dict[str, Any]] = [{
            "step": 0, "node": graph.ids[-1], **number_fields("grad", 1.0),
            "caption": _sentence(f"{subject(out_label, False)} is the output, so its gradient is 1."),
            "contributions": [],
        }]
        self.first_bad: list[dict[str, Any]] = []  # the first contribution that is not finite, from finite numbers

    def record_step(self, v: Value, upstream: float, passed: tuple[Any, ...]) -> None:
        graph, fmt = self.graph, format_number
        labels, index, is_constant = graph.labels, graph.index, graph.is_constant
        i = index[id(v)]
        input_labels = [labels[index[id(p)]] for p in v._prev]
        holds: dict[int, float] = {}  # an input's gradient after each contribution (x * x gets two)
        contributions = []
        parts = []
        upstream_json, upstream_text = json_number(upstream), fmt(upstream)
        upstream_operand = operand_text(upstream_text, TIMES)
        # A node labelled by its own expression is named once, at the start ("Back through x2*w2: ..."),
        # and its gradient is "its gradient" after that: "x2*w2, so x2 receives ..." read as a fragment.
        own_expression = _same_text(labels[i], graph.names_sides[i])
        at = "its gradient" if own_expression else f"gradient at {labels[i]}"
        for k, (p, slope, given) in enumerate(zip(v._prev, local_derivatives(v), passed)):
            j = index[id(p)]
            local = 0.0 if slope is None else slope
            contribution = 0.0 if given is None else float(given)  # masked: passes nothing
            holds[j] = holds.get(j, self.grads.get(p, 0.0)) + contribution
            self.received[j].append(contribution)
            local_text = fill_template(_written(_op_of(v).local_text[k]), input_labels, labels[i])
            local_value_text, contribution_text = fmt(local), fmt(contribution)
            contributions.append({
                "input": graph.ids[j], "local": json_number(local), "local_text": local_text,
                "local_value_text": local_value_text, "upstream": upstream_json, "upstream_text": upstream_text,
                "contribution": json_number(contribution), "contribution_text": contribution_text,
                **number_fields("grad_after", holds[j]),
            })
            # A constant's share is computed as any other, but it is no input: nothing uses it to change it.
            said = (f"{subject(labels[j], is_constant[j])} {'gets' if is_constant[j] else 'receives'} "
                    f"{_grouped(local_text)} {TIMES} ({at}) = {local_value_text} {TIMES} {upstream_operand} = "
                    f"{contribution_text}")
            if len(self.received[j]) > 1:
                said += f" ({labels[j]} now holds {_sum_text(self.received[j])} = {fmt(holds[j])})"
            if is_constant[j]:
                said += ", which changes nothing: a constant is not an input"
            parts.append(said)
            if not self.first_bad and not math.isfinite(contribution) and math.isfinite(upstream):
                self.first_bad.append({"phase": "backward", "node": graph.ids[i], "input": graph.ids[j],
                                       "text": _backward_origin(said, labels[i], labels[j], p.data, local_text, local)})
        if own_expression:
            caption = f"Back through {labels[i]}: " + ", and ".join(parts)
        else:
            caption = f"{equation_text(labels[i], graph.names_sides[i])}, so " + ", and ".join(parts)
        self.backward.append({
            "step": len(self.backward), "node": graph.ids[i], "grad": upstream_json, "grad_text": upstream_text,
            "caption": caption, "contributions": contributions,
        })


@lru_cache(maxsize=1024)
def _written(template: str) -> str:
    """An op template as a formula is written (× for *, literal negatives in parentheses), once per template."""
    return formula_text(template)


# A label that is a sum or a difference ("1 - o*o") is put in parentheses where a product, a quotient
# or a power takes it, so that the formula reads as the graph computes it.
_BINDS_TIGHTER = ("*", "/", "**")
_LOOSE_LABEL = re.compile(r"\s[+\-]\s")


def _names_side(v: Value, labels: list[str], index: dict[int, int]) -> str:
    """The right side of a node's formula over its inputs' labels: "a × b", "t1 + (-4)"."""
    names = [labels[index[id(p)]] for p in v._prev]
    if v._op is not None and v._op.symbol in _BINDS_TIGHTER:  # "(1 - o*o) × x'", never "1 - o*o × x'"
        names = [f"({name})" if _LOOSE_LABEL.search(name) else name for name in names]
    return place_numbers(_right_side(_op_of(v)), {"a": names[0], "b": names[-1], "out": labels[index[id(v)]]})


def _numbers_side(v: Value) -> str:
    """The right side of a node's formula over its inputs' numbers: "2 × (-3)"."""
    return place_numbers(_right_side(_op_of(v)), {"a": v._prev[0].data, "b": v._prev[-1].data, "out": v.data})


def _inputs_said(v: Value, labels: list[str], index: dict[int, int]) -> str:
    """"x = 0 and y = 2": the inputs with their numbers (a constant by its number alone)."""
    said: list[str] = []
    for p in v._prev:
        label, number = labels[index[id(p)]], format_number(p.data)
        if f"{label} = {number}" not in said and number not in said:
            said.append(number if label == number else f"{label} = {number}")
    return " and ".join(said)


def _forward_origin(nodes: list[Value], labels: list[str], index: dict[int, int], ids: list[str]) -> dict[str, Any] | None:
    """The first value that is not finite although every input it was made from is: where it came from."""
    for i, v in enumerate(nodes):
        if math.isfinite(v.data) or any(not math.isfinite(p.data) for p in v._prev):
            continue
        if not v._prev:
            text = f"The input {labels[i]} is {format_number(v.data)}, so the values computed from it can be inf or nan too."
            return {"phase": "forward", "node": ids[i], "text": text}
        names_side = _names_side(v, labels, index)
        equation = equation_text(labels[i], names_side, _numbers_side(v), format_number(v.data))
        if v.data != v.data:
            what, why = "not a number (nan)", f"{names_side} has no real result for {_inputs_said(v, labels, index)}"
        elif any(p.data == 0 for p in v._prev):
            what = "infinite"
            zeros = " and ".join(dict.fromkeys(labels[index[id(p)]] for p in v._prev if p.data == 0))
            why = f"{names_side} grows without bound as {zeros} nears 0"
        else:
            what = "infinite"
            why = (f"{names_side} is too large for a float (beyond about 1.8e308) at "
                   f"{_inputs_said(v, labels, index)}")
        text = (f"{equation} is the first value that is {what}: {why}. Every value computed from {labels[i]}, "
                f"and every gradient that flows back through it, can be inf or nan too.")
        return {"phase": "forward", "node": ids[i], "text": text}
    return None


def _backward_origin(said: str, node: str, receiver: str, receiver_value: float, local_text: str, local: float) -> str:
    """Why the first gradient that is not finite is not: its slope, or a product too large for a float."""
    at = f"{receiver} = {format_number(receiver_value)}"
    if local != local:
        why = f"the slope of {node} with respect to {receiver}, {local_text}, has no value at {at}"
    elif math.isinf(local):
        why = f"the slope of {node} with respect to {receiver}, {local_text}, is {format_number(local)} at {at}: the curve is vertical there"
    else:
        why = "the product is too large for a float (beyond about 1.8e308)"
    return (f"Every value is finite, but a gradient is not: {said}. That is because {why}. Every gradient this "
            f"one flows into can be inf or nan too.")


def node_formulas(nodes: list[Value]) -> list[str]:
    """Each node of `graph_nodes(...)` as a caption names it: "t1 = relu(x)" for an interior node, its
    label for a leaf."""
    labels = node_labels(nodes)
    index = {id(v): i for i, v in enumerate(nodes)}
    return [equation_text(labels[i], _names_side(v, labels, index)) if v._prev else labels[i]
            for i, v in enumerate(nodes)]


def first_non_finite(output: Value) -> str | None:
    """Where the first value of the graph that is inf or nan came from (the sentence of a trace's
    "non_finite"), without a backward pass; None when every value is finite."""
    nodes = graph_nodes(output)
    labels = node_labels(nodes)
    origin = _forward_origin(nodes, labels, {id(v): i for i, v in enumerate(nodes)}, [f"n{i}" for i in range(len(nodes))])
    return origin["text"] if origin else None


def _sum_text(terms: list[float]) -> str:
    """'2 + 2' or '3 + (-2)', or for many uses '... + 2' after the first three terms."""
    shown = [format_number(terms[0])] + [operand_text(t, "+ ") for t in terms[1:]]
    if len(shown) > 6:
        shown = shown[:3] + ["..."] + shown[-2:]
    return " + ".join(shown)


def trace_to_json(trace_dict: dict[str, Any], indent: int | None = None) -> str:
    """The trace as JSON text (strict JSON: no NaN or Infinity tokens, those are already null)."""
    return json.dumps(trace_dict, indent=indent, allow_nan=False)


# --- the JSON schema: one file, shipped in the package; docs/trace.md shows it, a test checks the two agree


def _load_schema() -> dict[str, Any]:
    path = Path(__file__).with_name("trace_schema.json")
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


TRACE_SCHEMA: dict[str, Any] = _load_schema()
