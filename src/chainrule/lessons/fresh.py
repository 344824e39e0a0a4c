"""Fresh numbers for review: a numeric question comes back with new numbers, its key from the engine.

A numeric question in quiz.json may carry a `fresh` recipe (an optional field; questions without one
come back unchanged):

    "fresh": {
      "draw":  {"a": {"from": -5, "to": 5, "step": 1, "skip": [0]}, ...},
      "graph": {"leaves": [["a", "a"], ["n", {"atanh": "t"}], ["k", 1]], "nodes": [...], "output": "out"},
      "answer": {"node": "a", "field": "grad"}
    }

Each review draws every `draw` name from its grid with a generator seeded by the review's variant
(a string: the same variant always gives the same numbers, so the page can check the answer it
showed). The drawn numbers fill the prompt's `{{name}}` placeholders, and the key is the engine's
value or gradient of `answer.node` in `graph`, whose leaves are a number, a drawn name, or
`{"atanh": name}` (for a question that states a tanh output). The lesson itself always asks the
question with its own `given` numbers.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

from chainrule.lessons.graphs import graph_values
from chainrule.lessons.text import LessonDataError

__all__ = ["variant_for", "draw_numbers", "engine_key", "has_fresh_numbers"]

# Functions a leaf may apply to a drawn number (the inverse of an op, to state an op's output).
_LEAF_FUNCTIONS = {"atanh": math.atanh}
# How many draws may be thrown away for repeating the lesson's own numbers.
_REDRAWS = 50


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
    the very question the learner answered in the lesson.
    """
    rules = question["fresh"]["draw"]
    grids = {name: _grid(name, rule) for name, rule in rules.items()}
    rng = random.Random(f"{question['id']}/{variant}")
    given = {name: float(value) for name, value in question.get("given", {}).items()}
    numbers: dict[str, float] = {}
    for _ in range(_REDRAWS):
        numbers = {name: rng.choice(grid) for name, grid in grids.items()}
        if any(given.get(name) != value for name, value in numbers.items()):
            break
    return {name: int(value) if value.is_integer() else value for name, value in numbers.items()}


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


def engine_key(question: dict[str, Any], numbers: dict[str, float]) -> float:
    """The answer for these numbers: the engine's value or gradient of the recipe's answer node."""
    recipe = question["fresh"]
    where = f"question {question['id']}"
    spec = {
        "leaves": [[label, _leaf_value(value, numbers, where)] for label, value in recipe["graph"]["leaves"]],
        "nodes": recipe["graph"]["nodes"],
        "output": recipe["graph"]["output"],
    }
    values = graph_values(spec, where)
    target = recipe["answer"]
    try:
        return values[target["node"]][target["field"]]
    except KeyError:
        raise LessonDataError(f"{where}: the fresh recipe's answer {target} names no node/field of its graph") from None
