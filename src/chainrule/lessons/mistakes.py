"""Named mistakes: a wrong answer that a known slip gives gets a hint aimed at that slip (docs/authoring.md).

A prediction (lesson.json) or a numeric quiz question (quiz.json) may list the mistakes learners make:

    "mistakes": [{"name": "forgot the local gradient", "rule": "up", "values": {"up": "o.grad"},
                  "hint": "tanh has a slope of its own ..."}]

`rule` is an expression (chainrule.expr) that the engine computes: the number that slip gives. Its names
are, for a prediction, bound by `values` to the lesson graph's numbers ("label.data" or "label.grad"); for
a question, the question's numbers (its `given`, or a review's fresh ones). The author never types the
wrong number itself, so it cannot drift from the graph. An answer within the lesson's tolerance of a
mistake's number gets that mistake's hint; any other wrong answer gets the item's own `hint`, or
GENERAL_HINT. A choice question names, per option, why it is wrong: `why_wrong`, a list as long as
`options`, with null at the right answer's place.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from chainrule.lessons.text import LessonDataError

__all__ = ["GENERAL_HINT", "MISTAKE_FIELDS", "rule_value", "prediction_values", "wrong_answer_hint",
           "choice_hint", "mistake_problems", "why_wrong_problems"]

# What a wrong answer that matches no named mistake is told when the item gives no hint of its own.
GENERAL_HINT = "Go back over how this number is made, one step at a time, and try once more."
MISTAKE_FIELDS = {"name", "rule", "hint", "values"}


def rule_value(rule: str, values: Mapping[str, float]) -> float:
    """The number a mistake's rule gives, computed by the engine with `values` for its names."""
    from chainrule.expr import ExpressionError, parse

    try:
        expression = parse(rule)
        missing = [name for name in expression.names if name not in values]
        if missing:
            raise LessonDataError(f"the rule {rule!r} uses {', '.join(missing)}, which it has no number for "
                                  f"(it may use {', '.join(values) or 'no names'})")
        output, _ = expression.build({name: values[name] for name in expression.names})
    except (ExpressionError, ArithmeticError, ValueError) as error:
        if isinstance(error, LessonDataError):
            raise
        raise LessonDataError(f"the rule {rule!r} cannot be computed: {error}") from None
    return float(output.data)


def prediction_values(mistake: dict[str, Any], numbers: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """A prediction mistake's names bound to the graph's numbers: {"up": "o.grad"} -> {"up": 1.0}."""
    bound = {}
    for name, where in (mistake.get("values") or {}).items():
        label, _, field = str(where).rpartition(".")
        if label not in numbers or field not in ("data", "grad"):
            raise LessonDataError(f"values: {name!r} is bound to {where!r}, which is not \"label.data\" or "
                                  f"\"label.grad\" of a value of the graph ({', '.join(numbers)})")
        bound[name] = float(numbers[label][field])
    return bound


def _valued(mistakes: list[dict[str, Any]], values_of: Callable[[dict[str, Any]], Mapping[str, float]]
            ) -> list[tuple[dict[str, Any], float]]:
    return [(mistake, rule_value(mistake["rule"], values_of(mistake))) for mistake in mistakes]


def wrong_answer_hint(item: dict[str, Any], answer: float, key: float, tolerance: float, slack: float,
                      values_of: Callable[[dict[str, Any]], Mapping[str, float]],
                      fill_text: Callable[[str], str]) -> dict[str, Any]:
    """{"hint", "mistake", "aimed"} for a wrong numeric answer: the first named mistake whose number the
    answer matches (one whose number is the key itself is skipped: fresh numbers can make a slip harmless),
    else the item's general hint (mistake None). `aimed`: the hint speaks to this very answer."""
    for mistake, value in _valued(item.get("mistakes") or [], values_of):
        if abs(value - key) > tolerance + slack and abs(answer - value) <= tolerance + slack:
            return {"hint": fill_text(mistake["hint"]), "mistake": mistake["name"], "aimed": True}
    return {"hint": fill_text(item.get("hint") or GENERAL_HINT), "mistake": None, "aimed": False}


def choice_hint(question: dict[str, Any], chosen: int, fill_text: Callable[[str], str]) -> dict[str, Any]:
    """{"hint", "mistake", "aimed"} for a wrong choice: why that option is wrong, as the author wrote it
    (aimed), else the question's general hint."""
    why = question.get("why_wrong") or []
    aimed = chosen < len(why) and bool(why[chosen])
    text = why[chosen] if aimed else question.get("hint") or GENERAL_HINT
    return {"hint": fill_text(text), "mistake": None, "aimed": aimed}


def mistake_problems(item: dict[str, Any], key: float, tolerance: float,
                     values_of: Callable[[dict[str, Any]], Mapping[str, float]]) -> list[str]:
    """What `lessons check` refuses in an item's mistakes: a malformed entry, a rule the engine cannot
    compute, a rule that gives the right answer, two rules that give the same number."""
    mistakes = item.get("mistakes")
    if mistakes is None:
        return []
    shape = ('mistakes must be a list of {"name": text, "rule": expression, "hint": text} '
             '(a prediction\'s also "values": {name: "label.data" or "label.grad"})')
    if not isinstance(mistakes, list) or not all(
            isinstance(m, dict) and not set(m) - MISTAKE_FIELDS and all(
                isinstance(m.get(field), str) and m[field].strip() for field in ("name", "rule", "hint"))
            for m in mistakes):
        return [shape]
    problems = []
    names = [m["name"] for m in mistakes]
    problems += [f"two mistakes are named {name!r}: give each its own name"
                 for name in sorted({n for n in names if names.count(n) > 1})]
    valued = []
    for mistake in mistakes:
        try:
            value = rule_value(mistake["rule"], values_of(mistake))
        except LessonDataError as error:
            problems.append(f"mistake {mistake['name']!r}: {error}")
            continue
        if not math.isfinite(value):
            problems.append(f"mistake {mistake['name']!r}: its rule gives {value}, not a finite number")
        elif abs(value - key) <= tolerance:
            problems.append(f"mistake {mistake['name']!r}: its rule gives {value:g}, the right answer ({key:g}) "
                            "within the tolerance, so no wrong answer can match it: change the rule or drop it")
        else:
            valued.append((mistake["name"], value))
    for index, (name, value) in enumerate(valued):
        for other, other_value in valued[index + 1:]:
            if abs(value - other_value) <= tolerance:
                problems.append(f"mistakes {name!r} and {other!r} both give {value:g}: an answer of {value:g} "
                                "cannot tell which slip was made; keep one, or merge their hints")
    return problems


def why_wrong_problems(question: dict[str, Any]) -> list[str]:
    """What `lessons check` refuses in a choice question's why_wrong."""
    why = question.get("why_wrong")
    options = question.get("options") or []
    if why is None:
        return []
    right = question.get("answer_index")
    if not isinstance(why, list) or len(why) != len(options):
        return [f"why_wrong must be a list as long as options ({len(options)}): for each option, why it is "
                "wrong, and null for the right one"]
    problems = []
    for index, text in enumerate(why):
        if index == right and text is not None:
            problems.append(f"why_wrong[{index}] explains the right answer: put null there (the reason explains it)")
        elif index != right and not (isinstance(text, str) and text.strip()):
            problems.append(f"why_wrong[{index}]: say why option {index + 1} is wrong (a sentence)")
    return problems
