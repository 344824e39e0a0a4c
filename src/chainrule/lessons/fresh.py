"""Fresh numbers for review: a numeric question comes back with new numbers, its key from the engine.

A numeric question in quiz.json carries a `fresh` rule (questions without one come back unchanged;
every built-in numeric question has one). The short form draws new `given` numbers and recomputes the
question's own `compute` expression with them:

    "fresh": {"draw": {"a": {"from": -5, "to": 5, "step": 1, "skip": [0]}, ...}}

The long form names a graph whose node gives the key (for a question whose `compute` is not the whole
story, such as one that states a tanh output):

    "fresh": {
      "draw":  {...},
      "graph": {"leaves": [["a", "a"], ["n", {"atanh": "t"}], ["k", 1]], "nodes": [...], "output": "out"},
      "answer": {"node": "a", "field": "grad"}
    }

Each review draws every `draw` name from its grid with a generator seeded by the review's variant
(a string: the same variant always gives the same numbers, so the page can check the answer it
showed). The drawn numbers fill the prompt's `{{name}}` placeholders (a `given` name that is not drawn
keeps its number), and the key is the engine's: the `compute` expression's value (or gradient, with
its `wrt`) for the short form; the value or gradient of `answer.node` in `graph`, whose leaves are a
number, a drawn name, or `{"atanh": name}`, for the long form. The lesson itself always asks the
question with its own `given` numbers. `fresh_problems` says what `lessons check` finds wrong in a rule.

Fresh numbers never land on a kink: a draw that puts the input of an op with a corner (`KINKS`: relu and
abs at 0; `TIES`: maximum and minimum with equal inputs) exactly on that corner is drawn again, for every question, because there the engine's slope
(0, as PyTorch's) is not the formula the question teaches (a hinge's -y x), and the learner would be
marked wrong for knowing the rule. `lessons check` draws many variants and fails when one still does.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

from chainrule.engine import Value
from chainrule.lessons.graphs import build_graph
from chainrule.lessons.text import LessonDataError

__all__ = ["KINKS", "TIES", "variant_for", "draw_numbers", "engine_key", "kinks_hit", "has_fresh_numbers", "fresh_problems"]

# Functions a leaf may apply to a drawn number (the inverse of an op, to state an op's output).
_LEAF_FUNCTIONS = {"atanh": math.atanh}
# How many draws may be thrown away for repeating the lesson's own numbers or landing on a kink.
_REDRAWS = 50
# The ops of the engine whose slope jumps at one input (docs/engine.md): there the engine's answer is one
# side's slope (0 for both, as in PyTorch), not the formula either side follows. The one list of kinks.
KINKS = {"relu": 0.0, "abs": 0.0}
# The ops whose slope jumps where their two inputs are equal (a tie): there the engine gives each input half
# the gradient (as torch.maximum and torch.minimum do), which is neither side's rule.
TIES = ("maximum", "minimum")


def has_fresh_numbers(question: dict[str, Any]) -> bool:
    return question.get("kind") == "number" and isinstance(question.get("fresh"), dict)


def variant_for(lesson_id: str, question_id: str, due: str) -> str:
    """The variant of one review: a short hex digest of the card and its due time, which every
    rating moves, so each review of a card gets its own numbers and a reload keeps them."""
    digest = hashlib.sha256(f"{lesson_id}/{question_id}/{due}".encode("utf-8")).hexdigest()
    return digest[:16]


def _grid(name: str, rule: dict[str, Any]) -> list[float]:
    start, stop, step = float(rule["from"]), float(rule["to"]), float(rule["step"])
    if step <= 0 or stop < start:
        raise LessonDataError(f"fresh numbers: {name!r} needs from <= to and a positive step, got {rule}")
    skip = {float(s) for s in rule.get("skip", [])}
    count = int(round((stop - start) / step)) + 1
    # Rounded so that 0.1 steps give 0.3, not 0.30000000000000004.
    grid = [round(start + k * step, 10) for k in range(count)]
    grid = [x for x in grid if x not in skip]
    if not grid:
        raise LessonDataError(f"fresh numbers: {name!r} has nothing left to draw from ({rule})")
    return grid


def draw_numbers(question: dict[str, Any], variant: str) -> dict[str, float]:
    """The numbers one review shows: each `draw` name from its grid, seeded by `variant`.

    A draw that repeats the lesson's own `given` numbers is drawn again, so a review never asks
    the very question the learner answered in the lesson. A draw that puts an op on its kink (`KINKS`) is drawn again too.
    """
    rules = question["fresh"]["draw"]
    grids = {name: _grid(name, rule) for name, rule in rules.items()}
    rng = random.Random(f"{question['id']}/{variant}")
    given = {name: float(value) for name, value in question.get("given", {}).items()}
    numbers: dict[str, float] = {}
    for _ in range(_REDRAWS):
        numbers = {name: rng.choice(grid) for name, grid in grids.items()}
        if any(given.get(name) != value for name, value in numbers.items()) and not _on_kink(question, numbers):
            break
    return _tidy(numbers)


def _tidy(numbers: dict[str, float]) -> dict[str, float]:
    return {name: int(value) if value.is_integer() else value for name, value in numbers.items()}


def _on_kink(question: dict[str, Any], numbers: dict[str, float]) -> bool:
    try:
        return bool(kinks_hit(question, _tidy(numbers)))
    except (LessonDataError, KeyError, TypeError, ValueError, ArithmeticError):
        return False  # a rule the engine cannot run: fresh_problems says so


def kinks_hit(question: dict[str, Any], numbers: dict[str, float]) -> list[str]:
    """Each node of the question's graph (its `compute` expression, or its fresh graph) whose input sits
    on the op's kink with these numbers, as "relu(u) at u = 0" ("relu at its input 0" for an input with no
label, as an expression's); [] when none does."""
    output = _key_graph(question, numbers, f"question {question['id']}")[0]
    from chainrule.traces import graph_nodes

    found = []
    for node in graph_nodes(output):
        op = node._op.name if node._op is not None else None
        if op in KINKS and node._prev and node._prev[0].data == KINKS[op]:
            inside = node._prev[0].label
            found.append(f"{op}({inside}) at {inside} = {KINKS[op]:g}" if inside else f"{op} at its input {KINKS[op]:g}")
        elif op in TIES and len(node._prev) == 2 and node._prev[0].data == node._prev[1].data:
            first, second = (n.label or "its input" for n in node._prev)
            found.append(f"{op}({first}, {second}) at a tie, both {node._prev[0].data:g}")
    return found


def _leaf_value(value: Any, numbers: dict[str, float], where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value in numbers:
        return float(numbers[value])
    if isinstance(value, dict) and len(value) == 1:
        (function, name), = value.items()
        if function in _LEAF_FUNCTIONS and name in numbers:
            return _LEAF_FUNCTIONS[function](float(numbers[name]))
    raise LessonDataError(
        f"{where}: a leaf is a number, a drawn name ({', '.join(numbers)}) or "
        f"{{function: name}} with function in {sorted(_LEAF_FUNCTIONS)}; got {value!r}"
    )


def _key_graph(question: dict[str, Any], numbers: dict[str, float], where: str) -> tuple[Value, Value, str]:
    """(the graph's output, the node holding the key, "data" or "grad") for these numbers, built by the
    engine from the question's `compute` expression, or from its fresh graph; no backward pass yet."""
    from chainrule.expr import ExpressionError, parse

    recipe = question.get("fresh") or {}
    if "graph" in recipe:
        spec = {
            "leaves": [[label, _leaf_value(value, numbers, where)] for label, value in recipe["graph"]["leaves"]],
            "nodes": recipe["graph"]["nodes"],
            "output": recipe["graph"]["output"],
        }
        output, nodes = build_graph(spec, where)
        target = recipe["answer"]
        if not isinstance(target, dict) or target.get("node") not in nodes or target.get("field") not in ("data", "grad"):
            raise LessonDataError(f"{where}: the fresh recipe's answer {target} names no node/field of its graph")
        return output, nodes[target["node"]], target["field"]
    compute = question.get("compute") or {}
    values = {name: float(value) for name, value in (question.get("given") or {}).items()} | {
        name: float(value) for name, value in numbers.items()}
    try:
        expression = parse(compute["expression"])
        output, leaves = expression.build({name: values[name] for name in expression.names})
        wrt = compute.get("wrt")
        return (output, output, "data") if wrt is None else (output, leaves[wrt], "grad")
    except (KeyError, TypeError, ExpressionError, ArithmeticError, ValueError) as error:
        raise LessonDataError(f"{where}: the fresh numbers cannot be put into compute ({error})") from None


def engine_key(question: dict[str, Any], numbers: dict[str, float]) -> float:
    """The answer for these numbers: the engine's value of the question's `compute` with them, or the
    value or gradient of the rule's answer node in its graph."""
    output, node, field = _key_graph(question, numbers, f"question {question['id']}")
    if field == "grad":
        output.backward()
    return getattr(node, field)


# How many variants `lessons check` tries on each rule (each must give a finite key, none a kink).
CHECKED_VARIANTS = 200
_RULE_FIELDS = {"from", "to", "step", "skip"}


def fresh_problems(question: dict[str, Any]) -> list[str]:
    """What is wrong with a question's fresh rule (as "fresh...: message"), [] when it is usable: every
    drawn name is a placeholder of the prompt, every grid has numbers, and the engine computes a finite
    key for a sample of variants."""
    fresh = question.get("fresh")
    if question.get("kind") != "number":
        return ["fresh: only a numeric question (kind \"number\") can come back with fresh numbers"]
    if not isinstance(fresh, dict) or not isinstance(fresh.get("draw"), dict) or not fresh["draw"]:
        return ['fresh must be {"draw": {name: {"from", "to", "step", "skip"?}, ...}} (and optionally "graph" '
                'and "answer")']
    unknown = set(fresh) - {"draw", "graph", "answer"}
    if unknown:
        return [f"fresh: unknown field(s) {', '.join(sorted(map(repr, unknown)))}; a rule holds draw, and "
                "optionally graph with answer"]
    if ("graph" in fresh) != ("answer" in fresh):
        return ["fresh: graph and answer go together (the answer names a node of the graph)"]
    problems = _draw_problems(fresh["draw"], str(question.get("prompt", "")))
    if problems:
        return problems
    if "graph" not in fresh and not isinstance(question.get("compute"), dict):
        return ['fresh: without a graph, the key is recomputed from "compute", which this question lacks']
    return _variant_problems(question)


def _draw_problems(draw: dict[str, Any], prompt: str) -> list[str]:
    """What is wrong with each drawn name's rule: its fields, its grid, its place in the prompt."""
    problems = []
    for name, rule in draw.items():
        where = f"fresh.draw.{name}"
        if not isinstance(rule, dict) or not {"from", "to", "step"} <= set(rule) or set(rule) - _RULE_FIELDS or not all(
                isinstance(rule[k], (int, float)) and not isinstance(rule[k], bool) for k in ("from", "to", "step")):
            problems.append(f"{where}: a rule is {{\"from\": number, \"to\": number, \"step\": number, "
                            f"\"skip\": [numbers]}}, not {rule!r}")
            continue
        if "{{" + name + "}}" not in prompt:
            problems.append(f"{where}: the prompt shows no {{{{{name}}}}}, so a review would ask the same question")
        try:
            _grid(name, rule)
        except (LessonDataError, TypeError, ValueError) as error:
            problems.append(f"{where}: {error}")
    return problems


def _variant_problems(question: dict[str, Any]) -> list[str]:
    """Whether the lesson's own numbers and a sample of drawn ones give the engine a finite key off any kink."""
    try:
        own = kinks_hit(question, question.get("given") or {})
    except (LessonDataError, KeyError, TypeError, ValueError, ArithmeticError):
        own = []  # the draws below say what the engine cannot compute
    if own:
        return [f"the lesson's own numbers land on a kink ({'; '.join(own)}): choose given numbers off it"]
    for index in range(CHECKED_VARIANTS):
        try:
            numbers = draw_numbers(question, f"check-{index}")
            key = engine_key(question, numbers)
            kinks = kinks_hit(question, numbers)
        except (LessonDataError, KeyError, TypeError, ValueError, ArithmeticError) as error:
            return [f"fresh: the engine cannot compute a key for drawn numbers ({error})"]
        if not math.isfinite(key):
            return ["fresh: some drawn numbers give a key that is not finite; narrow the grids"]
        if kinks:
            shown = ", ".join(f"{name} = {value}" for name, value in numbers.items())
            return [f"fresh: the drawn numbers {shown} land on a kink ({'; '.join(kinks)}), where the engine's "
                    f"slope is not the rule the question teaches; no redraw of {_REDRAWS} got off it: move the "
                    "grids away from the kink"]
    return []
