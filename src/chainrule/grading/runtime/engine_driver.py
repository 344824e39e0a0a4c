"""The driver of the engine-building kinds (grading/kinds/engine_build.py), run after the learner's Python file.

harness.py executes this file in the learner's own namespace, so `Value`, `MLP` and `train` below are the
learner's. Each case calls chainrule_engine_check(task, payload):

    "graph"  build the graph with the learner's Value (leaves, then nodes in order), then either run each
             node's own `_backward` in reverse topological order (mode "local": found through `_prev`, the
             output's grad set to 1 first) or call the output's `backward()` (mode "backward"); return
             [data, grad] of every leaf and node, in order.
    "mlp"    MLP(nin, nouts) with its parameters() set to the given numbers; the sum of its outputs over the
             points, backward; return every output's data, then every parameter's grad. With "walk": a fresh
             model's first output at the first point, backward, its graph walked through `_prev` and `_op`
             and appended as numbers: the count of nodes (0 when over "most"), then per node in topological
             order: the index of its op in "ops" (-1 for another op), data, grad, the count of its inputs and
             their indices (grading/kinds/engine_build.py reads them back).
    "train"  the same MLP, then the learner's train(model, points, labels, steps, lr); return the losses it
             returned, then the share of points whose output has the sign of their label.
"""

from __future__ import annotations

TYPE_CHECKING = False  # run with -I -S beside the learner's code: no `typing` at run time
if TYPE_CHECKING:
    from typing import Any


def _chainrule_class(name: str) -> Any:
    found = globals().get(name)
    if not callable(found):
        raise NameError(f"no class named {name} was found in your file")
    return found


def _chainrule_number(x: Any, what: str) -> float:
    x = getattr(x, "data", x)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{what} must be a number (or a Value holding one), not {type(x).__name__}")
    return float(x)


def _chainrule_topological(root: Any) -> list[Any]:
    order: list[Any] = []
    seen: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        children = getattr(node, "_prev", None)
        if children is None:
            raise AttributeError("your Value has no _prev: keep the inputs of every result in self._prev")
        for child in reversed(list(children)):
            if id(child) not in seen:
                stack.append((child, False))
    return order


def _chainrule_graph(task: dict[str, Any]) -> list[float]:
    value = _chainrule_class("Value")
    env: dict[str, Any] = {}
    for name, x in zip(task["leaves"], task["values"]):
        env[name] = value(x)
    for label, op, *ins in task["nodes"]:
        a = env[ins[0]]
        if op == "add":
            result = a + env[ins[1]]
        elif op == "mul":
            result = a * env[ins[1]]
        elif op == "sub":
            result = a - env[ins[1]]
        elif op == "div":
            result = a / env[ins[1]]
        elif op == "pow":
            result = a ** ins[1]
        elif op == "neg":
            result = -a
        else:
            method = getattr(a, op, None)
            if not callable(method):
                raise AttributeError(f"your Value has no method {op}()")
            result = method()
        env[label] = result
    out = env[task["output"]]
    if task["mode"] == "local":
        out.grad = 1.0
        for node in reversed(_chainrule_topological(out)):
            step = getattr(node, "_backward", None)
            if not callable(step):
                raise AttributeError("your Value has no _backward: give every Value one (a function that does "
                                     "nothing, for a leaf)")
            step()
    else:
        out.backward()
    names = list(task["leaves"]) + [node[0] for node in task["nodes"]]
    return [x for name in names for x in (env[name].data, env[name].grad)]


def _chainrule_model(task: dict[str, Any]) -> tuple[Any, list[Any]]:
    sizes = task["sizes"]
    model = _chainrule_class("MLP")(sizes[0], sizes[1:])
    parameters = list(model.parameters())
    if len(parameters) != len(task["params"]):
        raise ValueError(f"MLP({sizes[0]}, {sizes[1:]}).parameters() gave {len(parameters)} parameters; a network "
                         f"of these sizes has {len(task['params'])} (every neuron's weights, then its bias)")
    for parameter, x in zip(parameters, task["params"]):
        parameter.data = x
    return model, parameters


def _chainrule_outputs(model: Any, point: list[float]) -> list[Any]:
    out = model(point)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _chainrule_mlp(task: dict[str, Any]) -> list[float]:
    model, parameters = _chainrule_model(task)
    outputs = [y for point in task["points"] for y in _chainrule_outputs(model, point)]
    total = outputs[0]
    for y in outputs[1:]:
        total = total + y
    total.backward()
    numbers = [y.data for y in outputs] + [p.grad for p in parameters]
    return numbers + _chainrule_walk(task) if task.get("walk") else numbers


def _chainrule_walk(task: dict[str, Any]) -> list[float]:
    model, _ = _chainrule_model(task)
    out = _chainrule_outputs(model, task["points"][0])[0]
    out.backward()
    order = _chainrule_topological(out)
    if len(order) > task["most"]:
        return [0.0]
    at = {id(node): i for i, node in enumerate(order)}
    ops = task["ops"]
    walked: list[float] = [float(len(order))]
    for node in order:
        op = getattr(node, "_op", "")
        inputs = [at[id(child)] for child in node._prev]
        walked += [float(ops.index(op) if op in ops else -1), _chainrule_number(node, "every node's data"),
                   _chainrule_number(node.grad, "every node's grad"), float(len(inputs)), *map(float, inputs)]
    return walked


def _chainrule_train(task: dict[str, Any]) -> list[float]:
    model, _ = _chainrule_model(task)
    train_function = _chainrule_class("train")
    losses = train_function(model, task["points"], task["labels"], task["steps"], task["lr"])
    if not isinstance(losses, (list, tuple)):
        raise TypeError(f"train must return a list of the losses, one per step, not {type(losses).__name__}")
    numbers = [_chainrule_number(loss, "every loss train returns") for loss in losses]
    right = 0
    for point, label in zip(task["points"], task["labels"]):
        score = _chainrule_number(_chainrule_outputs(model, point)[0], "the network's output")
        right += (1 if score > 0 else -1) == label
    return numbers + [right / len(task["points"])]


def chainrule_engine_check(kind: str, task: dict[str, Any]) -> list[float]:
    checks = {"graph": _chainrule_graph, "mlp": _chainrule_mlp, "train": _chainrule_train}
    return checks[kind](task)
