"""Case kinds on an engine the learner builds: their own Value, their own network, their own training loop.

The learner's file defines classes, not one function: a driver (runtime/engine_driver.py and .js) runs beside
it and builds each case with the learner's own classes, and the numbers are compared with the engine's.

    engine-graph  {"name", "mode": "local" | "backward", "leaves": [names], "values": [numbers],
                   "nodes": [[label, op, input, second input or pow's exponent], ...], "output": label};
                  the ops are add, mul, sub, div, pow, neg, exp, tanh, relu. The driver builds the graph with
                  the learner's Value; mode "local" runs each node's own `_backward` in reverse topological
                  order (found through `_prev`, the output's grad set to 1 first), mode "backward" calls the
                  learner's `backward()`. Expect [data, grad] of every leaf and node, from chainrule.engine.
    engine-mlp    {"name", "sizes": [nin, ..., nout], "seed", "points": [[x1, x2], ...]}; the learner's
                  MLP(nin, nouts) with its parameters set to numbers drawn from the seed (tanh on the hidden
                  layers, the last layer linear); expect every output at every point, then the grad of every
                  parameter after backward from the sum of the outputs (chainrule.nn's MLP).
                  A case with "drawn": true (sizes [2, 2, 1], one point) also walks the learner's graph of the
                  output (through `_prev` and `_op`); when chainrule.engine, rebuilding it, agrees with every
                  data and grad, a passing test carries it as "graph" for the page to draw.
    engine-train  {"name", "sizes", "seed", "n", "noise", "steps", "lr"}; two moons of n points and the starting
                  parameters drawn from the seed; the learner's train(model, points, labels, steps, lr) does
                  full-batch gradient descent on the mean squared error of the output against the label (-1 or
                  +1) and returns the loss of every step; expect those losses and the accuracy reached, as
                  the engine's own network trains with the same data, seed and sizes.

The mistakes are replayed: on a float copy of the graph (`= instead of +=`, a recursive backward without a
topological order, a local gradient not times out.grad, ...), and on the engine's own network (an activation
on the last layer, gradients never zeroed, a sum instead of a mean, a step up the slope).
"""

from __future__ import annotations

import math
import random
from typing import Callable

from chainrule.datasets import moons
from chainrule.engine import Value
from chainrule.grading.json_objects import Case, JsonObject
from chainrule.grading.kinds.base import (
    Attempt,
    CaseError,
    CaseKind,
    Fills,
    Mistake,
    not_a_number,
    not_finite,
    number_field,
    numbers_field,
)
from chainrule.grading.kinds.slopes import wrong_length
from chainrule.grading.rounding import graded, graded_text
from chainrule.nn import MLP

__all__ = ["ENGINE_BUILD_KINDS", "ENTRY", "MOST_DRAWN", "simulate_graph", "train_variant"]

DRIVER = "engine_driver"
ENTRY = "chainrule_engine_check"
UNARY = ("neg", "exp", "tanh", "relu")
BINARY = ("add", "mul", "sub", "div")
OPS = (*BINARY, "pow", *UNARY)
MAX_NODES = 60
MAX_POINTS = 40
MAX_STEPS = 60
NEAR_KINK = 1e-6
WALK_OPS = ("", "+", "*", "tanh")  # the ops a drawn network's graph holds (a leaf's op is "")
MOST_DRAWN = 40  # nodes at most in a drawn graph: a 2-2-1 network at one point has about 30
NOT_FINITE = "A number is NaN or infinite: check for a division by zero or an exponential of a large number."

# --------------------------------------------------------------------------------- graphs


def _names(case: Case) -> list[str]:
    leaves = case.get("leaves")
    if not isinstance(leaves, list) or not leaves or not all(isinstance(n, str) and n for n in leaves):
        raise CaseError(f"'leaves' must be a non-empty list of names, not {leaves!r}")
    return leaves


def _graph(case: Case) -> tuple[list[str], list[float], list[list[object]], str, str]:
    """(leaf names, leaf values, nodes, output, mode), checked."""
    names = _names(case)
    values = numbers_field(case, "values")
    if len(values) != len(names):
        raise CaseError("'values' must hold one number per leaf")
    nodes = case.get("nodes")
    if not isinstance(nodes, list) or not nodes or len(nodes) > MAX_NODES:
        raise CaseError(f"'nodes' must list 1 to {MAX_NODES} nodes [label, op, input, ...]")
    known = set(names)
    for node in nodes:
        if not isinstance(node, list) or len(node) < 3 or not isinstance(node[0], str) or node[1] not in OPS:
            raise CaseError(f"every node is [label, op, input, ...] with op one of {', '.join(OPS)}, not {node!r}")
        label, op, inputs = node[0], node[1], node[2:]
        wanted = 2 if op in BINARY or op == "pow" else 1
        if len(inputs) != wanted or inputs[0] not in known or (op in BINARY and inputs[1] not in known):
            raise CaseError(f"node {label!r}: {op} takes {wanted} input(s), named before it")
        if op == "pow" and (isinstance(inputs[1], bool) or not isinstance(inputs[1], (int, float))):
            raise CaseError(f"node {label!r}: pow's exponent must be a number")
        if label in known:
            raise CaseError(f"two leaves or nodes are named {label!r}")
        known.add(label)
    output, mode = case.get("output"), case.get("mode")
    if output not in known:
        raise CaseError(f"'output' must name a leaf or node, not {output!r}")
    if mode not in ("local", "backward"):
        raise CaseError(f"'mode' must be 'local' (each node's _backward) or 'backward', not {mode!r}")
    return names, values, nodes, str(output), str(mode)


def _graph_args(case: Case) -> list[object]:
    names, values, nodes, output, mode = _graph(case)
    return ["graph", {"mode": mode, "leaves": names, "values": values, "nodes": nodes, "output": output}]


def _engine_graph(case: Case) -> list[float]:
    names, values, nodes, output, _ = _graph(case)
    env = {name: Value(x) for name, x in zip(names, values)}
    for label, op, *inputs in nodes:
        a = env[str(inputs[0])]
        if op == "pow":
            env[str(label)] = a ** float(inputs[1])  # type: ignore[arg-type]
        elif op in BINARY:
            b = env[str(inputs[1])]
            env[str(label)] = {"add": a + b, "mul": a * b, "sub": a - b, "div": a / b}[str(op)]
        else:
            env[str(label)] = -a if op == "neg" else getattr(a, str(op))()
    env[output].backward()
    return [x for name in [*names, *(str(n[0]) for n in nodes)] for x in (env[name].data, env[name].grad)]


def _graph_labels(case: Case) -> list[str]:
    return [f"{name}.{field}" for name in [*case["leaves"], *(n[0] for n in case["nodes"])] for field in ("data", "grad")]


def _forward(op: str, a: float, b: float) -> float:
    if op == "add":
        return a + b
    if op == "mul":
        return a * b
    if op == "sub":
        return a - b
    if op == "div":
        return a / b
    if op == "pow":
        return float(a ** b)
    if op == "neg":
        return -a
    if op == "exp":
        return math.exp(a)
    if op == "tanh":
        return math.tanh(a)
    return max(a, 0.0)


def _local(op: str, a: float, b: float, out: float, variant: str) -> list[float]:
    """d out / d input, per input (a binary op's two, a unary op's or pow's one), as the variant has it."""
    if op in ("add", "sub"):
        return [1.0, 1.0 if op == "add" else -1.0]
    if op == "mul":
        return [a, b] if variant == "mul-swapped" else [b, a]
    if op == "div":
        return [1 / b, -a / b ** 2]
    if op == "pow":
        return [b * a ** b if variant == "pow-not-lowered" else b * a ** (b - 1)]
    if op == "neg":
        return [-1.0]
    if op == "exp":
        return [out]
    if op == "tanh":
        return [1 - a ** 2 if variant == "tanh-of-input" else 1 - out ** 2]
    return [1.0 if out > 0 else 0.0]


def simulate_graph(case: Case, variant: str = "right", reverse_children: bool = False) -> list[float]:
    """The numbers an engine with a classic mistake gives, on floats: variant "right" (none), "assigned"
    (= instead of += for gradients), "recursive" (a backward that calls itself on each input, no topological
    order), "no-chain" (a local gradient not multiplied by out.grad), "mul-swapped", "pow-not-lowered",
    "tanh-of-input". reverse_children visits each node's inputs in the other order."""
    names, values, nodes, output, _ = _graph(case)
    data = dict(zip(names, values))
    inputs: dict[str, list[str]] = {name: [] for name in names}
    ops: dict[str, tuple[str, float]] = {}
    for label, op, *ins in nodes:
        first = str(ins[0])
        second = float(ins[1]) if op == "pow" else (data[str(ins[1])] if op in BINARY else 0.0)  # type: ignore[arg-type]
        data[str(label)] = _forward(str(op), data[first], second)
        inputs[str(label)] = [first, str(ins[1])] if op in BINARY else [first]
        ops[str(label)] = (str(op), second)
    grad = dict.fromkeys(data, 0.0)

    def children(label: str) -> list[str]:
        return inputs[label][::-1] if reverse_children else inputs[label]

    def step(label: str) -> None:
        if label not in ops:
            return
        op, second = ops[label]
        first = inputs[label][0]
        locals_ = _local(op, data[first], second, data[label], variant)
        for child, local in zip(inputs[label], locals_):
            share = local if variant == "no-chain" else local * grad[label]
            grad[child] = share if variant == "assigned" else grad[child] + share

    grad[output] = 1.0
    if variant == "recursive":
        def recurse(label: str) -> None:
            step(label)
            for child in children(label):
                recurse(child)
        recurse(output)
    else:
        order: list[str] = []
        seen: set[str] = set()

        def visit(label: str) -> None:
            if label in seen:
                return
            seen.add(label)
            for child in children(label):
                visit(child)
            order.append(label)
        visit(output)
        for label in reversed(order):
            step(label)
    return [x for name in [*names, *(str(n[0]) for n in nodes)] for x in (data[name], grad[name])]


def _graph_replayed(variant: str, modes: tuple[str, ...] = ("local", "backward")) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        if attempt.inputs.get("mode") not in modes or attempt.matches(attempt.want):
            return None
        for reverse in (False, True):
            numbers = simulate_graph(attempt.inputs, variant, reverse)
            if not attempt.close_to(attempt.want) and attempt.close_to(numbers):
                return {}
        return None

    return recognise


def _node_of(case: Case, index: int) -> tuple[str, str]:
    """The leaf or node the number at `index` belongs to, and its op ('a leaf' for a leaf)."""
    position = index // 2
    leaves = case["leaves"]
    if position < len(leaves):
        return leaves[position], "leaf"
    node = case["nodes"][position - len(leaves)]
    return str(node[0]), str(node[1])


def _first_wrong(field: int) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    """The first wrong number is a data (field 0) or a grad (field 1): name its node and op."""
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        wrong = next((i for i in range(min(len(attempt.got), len(attempt.want))) if not attempt.same(i)), None)
        if wrong is None or wrong % 2 != field:
            return None
        if field == 1 and any(not attempt.same(i) for i in range(0, len(attempt.want), 2)):
            return None
        node, op = _node_of(attempt.inputs, wrong)
        return {"node": node, "op": op}

    return recognise


def _output_not_seeded(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    data_right = all(attempt.same(i) for i in range(0, len(attempt.want), 2))
    grads = attempt.got[1::2]
    return {} if attempt.inputs.get("mode") == "backward" and data_right and grads and all(g == 0 for g in grads) else None


def _nothing_sent(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    """Mode local: the data is right and no grad but the output's own (which the grader set) moved."""
    data_right = all(attempt.same(i) for i in range(0, len(attempt.want), 2))
    output_at = 2 * ([*attempt.inputs["leaves"], *(n[0] for n in attempt.inputs["nodes"])].index(attempt.inputs["output"]))
    others = [g for i, g in enumerate(attempt.got[1::2]) if 2 * i != output_at]
    return {} if attempt.inputs.get("mode") == "local" and data_right and others and all(g == 0 for g in others) else None


def _missing(error: JsonObject, case: Case) -> Fills | None:
    message = str(error.get("message", ""))
    for op in ("tanh", "exp", "relu", "pow", "neg", "sub", "div", "backward", "_backward", "_prev"):
        if op in message and error.get("type") in ("AttributeError", "TypeError"):
            if "has no attribute" in message or "is not a function" in message or "no method" in message \
                    or "unsupported operand" in message:
                return {"op": op}
    return None


def _number_on_left(error: JsonObject, case: Case) -> Fills | None:
    message = str(error.get("message", ""))
    if error.get("type") == "TypeError" and "unsupported operand" in message and "'Value'" in message:
        return {}
    if error.get("type") == "AttributeError" and "'float' object has no attribute" in message \
            or "'int' object has no attribute" in message:
        return {}
    return None


MISSING = ("Your Value has no {op} yet (or it is not where the grader looks): each operation is a method that "
           "returns a new Value and gives it a _backward that sends out.grad to its inputs.")
NUMBER_ON_LEFT = ("Your Value meets a plain number it cannot handle, as in 2 * v or w * x with x a float: wrap "
                  "a number that is no Value in a Value inside each operation, and give Python __radd__ and "
                  "__rmul__ for a number on the left.")

# Recognised from the exception only (Python's TypeError or AttributeError), in graphs and networks alike.
NUMBER_ON_LEFT_MISTAKE = Mistake("number-on-the-left", NUMBER_ON_LEFT, lambda attempt, run: None, raised=_number_on_left,
                                 about="a plain number met a Value and the operation failed")

ENGINE_GRAPH = CaseKind(
    "engine-graph",
    _graph_args,
    _engine_graph,
    _graph_labels,
    (
        wrong_length(lambda attempt: len(attempt.want), "The grader reads data and grad of every leaf and node: "
                     "keep both on every Value you make."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("missing-op", MISSING, lambda attempt, run: None, fields=("op",), raised=_missing,
                about="an operation or method the graph needs is missing"),
        NUMBER_ON_LEFT_MISTAKE,
        Mistake("data-wrong", "The value of {node} is wrong, so the forward part of {op} is: check what it "
                "computes from its inputs' data.", _first_wrong(0), fields=("node", "op"),
                about="a node's data is wrong"),
        Mistake("output-not-seeded", "Every grad is 0: backward() must first set the output's own grad to 1 "
                "(d out / d out = 1), and only then run each node's _backward.", _output_not_seeded,
                about="backward() never set the output's grad to 1"),
        Mistake("nothing-sent", "The values are right but no gradient moved: the grader set the output's grad "
                "to 1 and called every _backward, and no input's grad changed. Each _backward must add its local "
                "gradient times out.grad to its inputs' grads.", _nothing_sent, about="no _backward sends anything"),
        Mistake("assigned-not-added", "A value used twice gets only one of its shares: a _backward sets an "
                "input's grad with = where it must add with +=. Every use of a value adds its own share of the "
                "gradient.", _graph_replayed("assigned"), about="= instead of += for gradients"),
        Mistake("recursive-not-topological", "Your backward() visits the graph recursively, calling each input's "
                "backward as soon as it has run its own step: a node used twice then sends its gradient on before "
                "all of it has arrived (and sends it again later). Build a topological order first, and run "
                "each node's _backward in reverse of it, once.", _graph_replayed("recursive", ("backward",)),
                about="a recursive backward without a topological order"),
        Mistake("not-times-out-grad", "Your local gradients are not multiplied by out.grad: by the chain rule "
                "each input receives its local gradient times the gradient that reached the result.",
                _graph_replayed("no-chain"), about="a local gradient not multiplied by out.grad"),
        Mistake("mul-swapped", "In multiplication each input's local gradient is the other input's data: "
                "d(a*b)/da = b, d(a*b)/db = a. Yours has them the wrong way round.", _graph_replayed("mul-swapped"),
                about="a product's local gradients swapped"),
        Mistake("pow-not-lowered", "The local gradient of x^k is k x^(k-1): the power goes down by one. Yours "
                "keeps it at k.", _graph_replayed("pow-not-lowered"), about="k x^k as the gradient of x^k"),
        Mistake("tanh-of-input", "The local gradient of tanh is 1 - t^2 where t is tanh's output, not its input. "
                "Use the result's own data.", _graph_replayed("tanh-of-input"), about="1 - x^2 for tanh's gradient"),
        Mistake("grad-wrong", "The values are right, but the grad of {node} ({op}) is wrong: check the local "
                "gradient its operation sends to it, and that every use of it adds its share.", _first_wrong(1),
                fields=("node", "op"), about="the first wrong number is a gradient"),
    ),
    kink=lambda case: _graph_kink(case),
    driver=DRIVER,
    entry=ENTRY,
)


def _graph_kink(case: Case) -> str | None:
    """A relu's input at 0, a division by nearly 0 or a negative power of nearly 0: the two sides disagree."""
    try:
        names, values, nodes, _, _ = _graph(case)
    except CaseError:
        return None
    data = dict(zip(names, values))
    for label, op, *ins in nodes:
        a = data[str(ins[0])]
        b = float(ins[1]) if op == "pow" else (data[str(ins[1])] if op in BINARY else 0.0)  # type: ignore[arg-type]
        if op == "relu" and abs(a) < NEAR_KINK:
            return "a relu's input is at its corner, 0"
        if (op == "div" and abs(b) < 0.1) or (op == "pow" and (b < 0 or b != int(b)) and abs(a) < 0.1):
            return "a division by a number near 0"
        data[str(label)] = _forward(str(op), a, b)
    return None


# --------------------------------------------------------------------------------- networks


def _sizes(case: Case) -> list[int]:
    sizes = case.get("sizes")
    if (not isinstance(sizes, list) or len(sizes) < 2 or len(sizes) > 5
            or not all(isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 16 for n in sizes)):
        raise CaseError(f"'sizes' must be 2 to 5 layer widths from 1 to 16, inputs first, not {sizes!r}")
    return sizes


def _parameter_count(sizes: list[int]) -> int:
    return sum((nin + 1) * nout for nin, nout in zip(sizes, sizes[1:]))


def _seeded(case: Case) -> random.Random:
    return random.Random(f"chainrule-engine:{number_field(case, 'seed')}")


def _parameters(case: Case) -> list[float]:
    rng = _seeded(case)
    return [round(rng.uniform(-1.0, 1.0), 6) for _ in range(_parameter_count(_sizes(case)))]


def _engine_mlp(sizes: list[int], parameters: list[float], last: str = "linear", hidden: str = "tanh",
                bias_first: bool = False) -> MLP:
    model = MLP(sizes[0], sizes[1:], activation=hidden, output_activation=last)
    targets = model.parameters()
    if bias_first:  # each neuron's bias taken from the first of its numbers, its weights from the rest
        targets = [p for layer in model.layers for n in layer.neurons for p in [n.b, *n.w]]
    for parameter, x in zip(targets, parameters):
        parameter.data = x
    return model


def _points(case: Case) -> list[list[float]]:
    points = case.get("points")
    if not isinstance(points, list) or not 1 <= len(points) <= MAX_POINTS:
        raise CaseError(f"'points' must list 1 to {MAX_POINTS} points")
    rows = [numbers_field({"point": p}, "point") for p in points]
    if any(len(row) != _sizes(case)[0] for row in rows):
        raise CaseError("every point needs one coordinate per input of the network")
    return rows


def _drawn(case: Case) -> bool:
    """A case marked "drawn": its graph is walked too (a 2-2-1 network at one point), for the page to draw."""
    if case.get("drawn") is None:
        return False
    if case.get("drawn") is not True or _sizes(case) != [2, 2, 1] or len(_points(case)) != 1:
        raise CaseError("'drawn' (true) is for a network of sizes [2, 2, 1] at one point")
    return True


def _mlp_args(case: Case) -> list[object]:
    task: JsonObject = {"sizes": _sizes(case), "params": _parameters(case), "points": _points(case)}
    if _drawn(case):
        task |= {"walk": True, "ops": list(WALK_OPS), "most": MOST_DRAWN}
    return ["mlp", task]


def _walked(tail: list[object]) -> list[tuple[str, float, float, list[int]]] | None:
    """The driver's walked graph read back: (op, data, grad, inputs) per node in topological order, or None
    when it is malformed, over MOST_DRAWN, or holds an op other than WALK_OPS'."""
    if not tail or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in tail):
        return None
    numbers = [float(x) for x in tail]  # type: ignore[arg-type]
    count, at, nodes = int(numbers[0]), 1, []
    if not 0 < count <= MOST_DRAWN:
        return None
    for index in range(count):
        if at + 4 > len(numbers):
            return None
        op, data, grad, k = numbers[at:at + 4]
        inputs = [int(i) for i in numbers[at + 4:at + 4 + int(k)]]
        at += 4 + int(k)
        if op != int(op) or not 0 <= op < len(WALK_OPS) or len(inputs) != int(k) or not all(0 <= i < index for i in inputs):
            return None
        nodes.append((WALK_OPS[int(op)], data, grad, inputs))
    return nodes if at == len(numbers) else None


def _engine_checked(nodes: list[tuple[str, float, float, list[int]]]) -> bool:
    """The walked graph rebuilt in chainrule.engine from its leaves' data and its ops: every data and grad agrees."""
    built: list[Value] = []
    for op, data, _, inputs in nodes:
        if not inputs:
            built.append(Value(data))
            continue
        if (op == "tanh") != (len(inputs) == 1) or op == "":
            return False
        node = built[inputs[0]].tanh() if op == "tanh" else built[inputs[0]]
        for i in inputs[1:] if op != "tanh" else []:
            node = node + built[i] if op == "+" else node * built[i]
        built.append(node)
    built[-1].backward()
    return all(math.isclose(v.data, data, rel_tol=1e-9, abs_tol=1e-12) and math.isclose(v.grad, grad, rel_tol=1e-9, abs_tol=1e-12)
               for v, (_, data, grad, _) in zip(built, nodes))


def _mlp_drawing(case: Case, raw: list[object]) -> tuple[list[object], JsonObject | None]:
    """A drawn case's numbers without the walked graph, and the graph as the page draws it when the engine
    agrees with every number in it (else None)."""
    if case.get("drawn") is not True:
        return raw, None
    sizes = _sizes(case)
    count = len(_points(case)) * sizes[-1] + _parameter_count(sizes)
    nodes = _walked(raw[count:])
    if nodes is None or not _engine_checked(nodes):
        return raw[:count], None
    return raw[:count], {"nodes": [{"id": i, "op": op, "data": graded(data), "grad": graded(grad), "inputs": inputs,
                                    "data_text": graded_text(data), "grad_text": graded_text(grad)}
                                   for i, (op, data, grad, inputs) in enumerate(nodes)]}


def mlp_variant(case: Case, variant: str = "right") -> list[float]:
    """What the network step gives with a classic mistake: "right", "tanh-on-output" (an activation on the last
    layer too), "no-activation" (every layer linear), "bias-first" (each neuron's bias before its weights)."""
    sizes, parameters = _sizes(case), _parameters(case)
    model = _engine_mlp(sizes, parameters, last="tanh" if variant == "tanh-on-output" else "linear",
                        hidden="linear" if variant == "no-activation" else "tanh", bias_first=variant == "bias-first")
    outputs = [y for point in _points(case) for y in model(point)]
    total = outputs[0]
    for y in outputs[1:]:
        total = total + y
    total.backward()
    grads = [p.grad for p in model.parameters()]
    if variant == "bias-first":
        grads = [p.grad for layer in model.layers for n in layer.neurons for p in [n.b, *n.w]]
    return [y.data for y in outputs] + grads


def _mlp_labels(case: Case) -> list[str]:
    sizes = case["sizes"]
    outputs = [f"output {k} at point {i + 1}" for i in range(len(case["points"])) for k in range(sizes[-1])]
    names = [f"d/d layer {layer + 1} neuron {j + 1} {'bias' if k == nin else f'weight {k + 1}'}"
             for layer, (nin, nout) in enumerate(zip(sizes, sizes[1:])) for j in range(nout) for k in range(nin + 1)]
    return outputs + names


def _replayed(variant: str, wrong: Callable[[Case, str], list[float]]) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    def recognise(attempt: Attempt, run: list[Attempt]) -> Fills | None:
        numbers = wrong(attempt.inputs, variant)
        return {} if attempt.close_to(numbers) and not attempt.matches(attempt.want) else None

    return recognise


ENGINE_MLP = CaseKind(
    "engine-mlp",
    _mlp_args,
    lambda case: mlp_variant(case),
    _mlp_labels,
    (
        wrong_length(lambda attempt: len(attempt.want), "The grader reads every output at every point, then the "
                     "grad of every parameter: check that forward returns one Value per output neuron."),
        not_a_number(), not_finite(NOT_FINITE),
        NUMBER_ON_LEFT_MISTAKE,
        Mistake("tanh-on-output", "Your last layer squashes its output with tanh too. The hidden layers use "
                "tanh; the last layer stays linear, so the network's score can be any number.",
                _replayed("tanh-on-output", mlp_variant), about="an activation on the last layer"),
        Mistake("no-activation", "Your neurons add up w . x + b but never apply tanh: without it, layers on "
                "layers are one straight line. Apply tanh in every layer but the last.",
                _replayed("no-activation", mlp_variant), about="no activation in the hidden layers"),
        Mistake("bias-first", "Your parameters() lists each neuron's bias before its weights. List each "
                "neuron's weights first, then its bias, layer by layer.", _replayed("bias-first", mlp_variant),
                about="each neuron's bias listed before its weights"),
    ),
    driver=DRIVER,
    entry=ENTRY,
    drawing=_mlp_drawing,
)

# --------------------------------------------------------------------------------- training


def _moons(case: Case) -> tuple[list[list[float]], list[int]]:
    n = case.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or not 4 <= n <= MAX_POINTS:
        raise CaseError(f"'n' must be a whole number of points from 4 to {MAX_POINTS}, not {n!r}")
    noise = number_field(case, "noise")
    if not 0 <= noise <= 0.5:
        raise CaseError(f"'noise' must be from 0 to 0.5, not {noise!r}")
    points, labels = moons(n, noise, _seeded(case).randrange(2**31))
    return [[round(x, 6), round(y, 6)] for x, y in points], labels


def _schedule(case: Case) -> tuple[int, float]:
    steps = case.get("steps")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise CaseError(f"'steps' must be a whole number from 1 to {MAX_STEPS}, not {steps!r}")
    lr = number_field(case, "lr")
    if not 0 < lr <= 2:
        raise CaseError(f"'lr' must be a learning rate above 0 and at most 2, not {lr!r}")
    return steps, lr


def _train_args(case: Case) -> list[object]:
    points, labels = _moons(case)
    steps, lr = _schedule(case)
    sizes = _sizes(case)
    if sizes[0] != 2 or sizes[-1] != 1:
        raise CaseError("a network for the two moons takes 2 inputs and gives 1 output")
    return ["train", {"sizes": sizes, "params": _parameters(case), "points": points, "labels": labels,
                      "steps": steps, "lr": lr}]


def train_variant(case: Case, variant: str = "right") -> list[float]:
    """The losses of every step and the accuracy reached, by the engine's own network: "right", or with a
    classic mistake: "not-zeroed" (gradients never reset), "summed" (the loss a sum, not a mean), "ascent"
    (a step up the slope), "zeroed-after-backward" (grads reset between backward and the update)."""
    _, payload = _train_args(case)
    task: JsonObject = payload  # type: ignore[assignment]
    model = _engine_mlp(task["sizes"], task["params"])
    points, labels, steps, lr = task["points"], task["labels"], task["steps"], task["lr"]
    losses = []
    for _ in range(steps):
        if variant != "not-zeroed":
            model.zero_grad()
        total = Value(0.0)
        for point, label in zip(points, labels):
            total = total + (model(point)[0] - label) ** 2
        loss = total if variant == "summed" else total / len(points)
        loss.backward()
        if variant == "zeroed-after-backward":
            model.zero_grad()
        for parameter in model.parameters():
            parameter.data += (lr if variant == "ascent" else -lr) * parameter.grad
        losses.append(loss.data)
    right = sum((1 if model(point)[0].data > 0 else -1) == label for point, label in zip(points, labels))
    return losses + [right / len(points)]


def _train_labels(case: Case) -> list[str]:
    return [f"the loss at step {k + 1}" for k in range(case["steps"])] + ["the accuracy after training"]


def _train_replayed(variant: str) -> Callable[[Attempt, list[Attempt]], Fills | None]:
    return _replayed(variant, train_variant)


def _not_moved(attempt: Attempt, run: list[Attempt]) -> Fills | None:
    losses = attempt.got[:-1]
    return {} if len(losses) > 1 and all(math.isclose(x, losses[0]) for x in losses) and attempt.same(0) else None


ENGINE_TRAIN = CaseKind(
    "engine-train",
    _train_args,
    lambda case: train_variant(case),
    _train_labels,
    (
        wrong_length(lambda attempt: len(attempt.want), "train returns one loss per step (the loss before that "
                     "step's update), no more and no fewer."),
        not_a_number(), not_finite(NOT_FINITE),
        Mistake("not-zeroed", "Your first step is right and the later ones drift: the gradients are never set "
                "back to 0, so each backward() adds this step's gradient to all the earlier ones. Set every "
                "parameter's grad to 0 before each backward().", _train_replayed("not-zeroed"),
                about="gradients never zeroed between steps"),
        Mistake("not-moved", "The loss never changes: the parameters do not move. Check the order: zero the "
                "gradients, forward, backward, then p.data -= lr * p.grad (zeroing after backward wipes the "
                "gradient before the update can use it).", _not_moved,
                about="the loss never changes"),
        Mistake("summed", "Your losses are the sum of the squared errors, not their mean: divide by the number "
                "of points.", _train_replayed("summed"), about="the loss a sum, not a mean"),
        Mistake("ascent", "The loss grows: your update steps up the slope. Gradient descent subtracts, "
                "p.data -= lr * p.grad.", _train_replayed("ascent"), about="a step with += instead of -="),
    ),
    driver=DRIVER,
    entry=ENTRY,
)

ENGINE_BUILD_KINDS = (ENGINE_GRAPH, ENGINE_MLP, ENGINE_TRAIN)
