"""Checking a learner's answers: quiz questions (section 06) and predictions (section 04).

Quiz keys live in quiz.json (a test recomputes them with the engine); prediction keys are the
engine's own numbers for the lesson's graph, computed when the lesson loads.
"""

from __future__ import annotations

import math
import re
from typing import Any

from chainrule.lessons.fresh import draw_numbers, engine_key, has_fresh_numbers
from chainrule.lessons.loader import (
    UnknownItemError,
    check_lesson_id,
    lesson_resolver,
    loaded_lesson,
    loaded_numbers,
)
from chainrule.lessons.mistakes import choice_hint, prediction_values, wrong_answer_hint
from chainrule.lessons.text import Resolve, fill
from chainrule.traces import format_number

__all__ = [
    "NUMBER_HELP", "TOLERANCE_SLACK", "parse_number", "too_large", "too_large_text", "quiz_question", "question_ids", "check_quiz_answer",
    "prediction_keys", "check_prediction", "key_idea_ids",
]

# Floating-point slack on top of the lesson's tolerance, so that 0.51 vs 0.5 with tolerance 0.01 counts.
TOLERANCE_SLACK = 1e-9
# What a typed number may look like; the page's parseNumber (static/js/api.js) accepts exactly the same.
# ASCII digits only ([0-9], not \d: Python's \d also matches other scripts' digits).
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_SPACES = " \t\r\n\f\v\u00a0\u2009\u202f"
# The page shows the same words (NUMBER_HELP in api.js); a test checks that they agree.
NUMBER_HELP = (
    "Type a number in digits: a minus sign, a decimal point or comma, and an exponent written with e are fine."
)


def _cleaned(text: str) -> str:
    cleaned = text.strip(_SPACES).replace("\u2212", "-")  # a typographic minus counts as a minus
    if "." not in cleaned and cleaned.count(",") == 1:
        cleaned = cleaned.replace(",", ".")  # a decimal comma
    return cleaned


def too_large_text(shown: str) -> str:
    """What is wrong with a number typed in digits that no float holds: its size, not how it is typed."""
    return f"{shown} is too large to hold as a number (the largest is about 1.8e308): type a smaller one."


def too_large(text: str) -> bool:
    """Whether `text` is written as a number but is too large for any float ("1e400"): a problem of
    size, not of how it is typed."""
    cleaned = _cleaned(text)
    return bool(_NUMBER.fullmatch(cleaned)) and math.isinf(float(cleaned))


def parse_number(text: str) -> float | None:
    """A typed number as a float, or None if it is not one.

    Accepted: spaces around it, a leading + or - (or the typographic minus \u2212), digits with a decimal
    point, or a decimal comma when there is no point ("0,51" -> 0.51), and an exponent ("1e+2",
    "2.5E-3"). The result must be finite ("1e999" is refused). Anything else (words, "1,000.5", "1 000",
    "nan", "inf", "0x10", "1_000") gives None.
    """
    cleaned = _cleaned(text)
    if not _NUMBER.fullmatch(cleaned):
        return None
    value = float(cleaned)
    return value if math.isfinite(value) else None


def _questions(lesson_id: str) -> dict[str, dict[str, Any]]:
    check_lesson_id(lesson_id)
    return {question["id"]: question for question in loaded_lesson(lesson_id)["quiz"]}


def question_ids(lesson_id: str) -> list[str]:
    return list(_questions(lesson_id))


def _question(lesson_id: str, question_id: str) -> dict[str, Any]:
    questions = _questions(lesson_id)
    if question_id not in questions:
        raise UnknownItemError(
            f"lesson {lesson_id!r} has no question {question_id!r}: its questions are {', '.join(questions)}"
        )
    return questions[question_id]


def _numbers_and_key(question: dict[str, Any], variant: str | None) -> tuple[dict[str, Any], Any]:
    """The numbers a question shows and its key: the lesson's own, or for a review variant of a
    question with a `fresh` recipe, newly drawn ones and the engine's answer for them."""
    if variant is not None and has_fresh_numbers(question):
        numbers = draw_numbers(question, variant)
        return dict(question.get("given", {})) | numbers, engine_key(question, numbers)
    return dict(question.get("given", {})), question.get("answer")


def fresh_numbers(lesson_id: str, question_id: str, variant: str | None) -> dict[str, float] | None:
    """The numbers a review ``variant`` of a question asks it with, when it draws fresh ones (None: the lesson's
    own numbers); kept with the review's answer for the teacher's item analysis."""
    question = _question(lesson_id, question_id)
    return draw_numbers(question, variant) if variant is not None and has_fresh_numbers(question) else None


def _question_resolver(question: dict[str, Any], variant: str | None = None) -> Resolve:
    values, key = _numbers_and_key(question, variant)
    return _resolver_of(question, values, key)


def _resolver_of(question: dict[str, Any], values: dict[str, Any], key: Any) -> Resolve:
    values = dict(values)
    if question["kind"] == "number":
        values["answer"] = key

    def resolve(parts: list[str]) -> float | str:
        if len(parts) == 1 and parts[0] in values:
            return values[parts[0]]
        raise KeyError(".".join(parts))

    return resolve


def quiz_question(lesson_id: str, question_id: str, variant: str | None = None) -> dict[str, Any]:
    """{"id","prompt","kind": "number"|"choice","options": [str]} (no answer). Raises UnknownLessonError/UnknownItemError.

    `variant` (a review's, see fresh.variant_for) asks a numeric question with fresh numbers; None
    asks it with the lesson's own.
    """
    question = _question(lesson_id, question_id)
    where = f"question {question_id}"
    return {
        "id": question["id"],
        "prompt": fill(question["prompt"], _question_resolver(question, variant), where),
        "kind": question["kind"],
        "options": list(question.get("options", [])),
    }


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_quiz_answer(lesson_id: str, question_id: str, answer: str, variant: str | None = None) -> dict[str, Any]:
    """Check one answer: {"correct": bool, "expected": str, "reason": str, "invalid": bool}, and for a
    wrong one "hint", "mistake" and "aimed" (lessons/mistakes.py: the named mistake it matches, or None).

    Numbers: any typed number within the lesson's tolerance of the key ("6", "6.0" and " 6 " all match 6).
    Choices: the option's text (case and spacing do not matter), its number 1..n, or its letter a..z.
    An answer that is not a number / not an option gives invalid=True, correct=False, expected "" and a
    reason that says what is allowed; callers should ask again rather than record it.
    `variant` checks the answer to the review variant that quiz_question(..., variant) showed.
    """
    question = _question(lesson_id, question_id)
    given, key_number = _numbers_and_key(question, variant)
    resolve = _resolver_of(question, given, key_number)
    where = f"question {question_id}"
    reason = fill(question["reason"], resolve, where)

    def fill_text(text: str) -> str:
        return fill(text, resolve, where)

    text = answer if isinstance(answer, str) else str(answer)
    if question["kind"] == "number":
        value = parse_number(text)
        if value is None:
            shown = text.strip()[:40]
            return {
                "correct": False, "expected": "", "invalid": True,
                "reason": too_large_text(shown) if too_large(text) else f"{shown!r} is not a number. {NUMBER_HELP}",
            }
        tolerance = loaded_lesson(lesson_id)["tolerance"]
        key = float(resolve(["answer"]))
        correct = abs(value - key) <= tolerance + TOLERANCE_SLACK
        checked = {"correct": correct, "expected": format_number(key), "reason": reason, "invalid": False}
        if correct:
            return checked
        numbers = {name: float(number) for name, number in given.items()}
        return checked | wrong_answer_hint(question, value, key, tolerance, TOLERANCE_SLACK, lambda _: numbers, fill_text)

    options: list[str] = question["options"]
    chosen = _choice_index(text, options)
    if chosen is None:
        letters = "abcdefghijklmnopqrstuvwxyz"[: len(options)]
        return {
            "correct": False, "expected": "", "invalid": True,
            "reason": (
                f"{text.strip()[:40]!r} is not one of the options: answer with an option's text, "
                f"its number 1 to {len(options)} or its letter {letters[0]} to {letters[-1]}."
            ),
        }
    expected = options[question["answer_index"]]
    checked = {"correct": chosen == question["answer_index"], "expected": expected, "reason": reason, "invalid": False}
    return checked if checked["correct"] else checked | choice_hint(question, chosen, fill_text)


def _choice_index(text: str, options: list[str]) -> int | None:
    wanted = _normalise(text)
    for index, option in enumerate(options):
        if _normalise(option) == wanted:
            return index
    if wanted.isdigit() and 1 <= int(wanted) <= len(options):
        return int(wanted) - 1
    if len(wanted) == 1 and "a" <= wanted <= "z" and ord(wanted) - ord("a") < len(options):
        return ord(wanted) - ord("a")
    return None


def _prediction(lesson_id: str, key: str) -> dict[str, Any]:
    check_lesson_id(lesson_id)
    steps = {step["key"]: step for step in loaded_lesson(lesson_id)["predict"]["steps"]}
    if key not in steps:
        raise UnknownItemError(
            f"lesson {lesson_id!r} has no prediction {key!r}: its predictions are {', '.join(steps)}"
        )
    return steps[key]


def prediction_keys(lesson_id: str) -> list[str]:
    check_lesson_id(lesson_id)
    return [step["key"] for step in loaded_lesson(lesson_id)["predict"]["steps"]]


def check_prediction(lesson_id: str, key: str, value: float) -> dict[str, Any]:
    """Compare a predicted number with the engine's: {"key","value","correct","expected","expected_text","reason"},
    and for a wrong one "hint", "mistake" and "aimed" (lessons/mistakes.py).

    Right means within the lesson's tolerance (0.01). `expected` is the engine's number rounded to 9
    decimal places; `expected_text` the same rounded to 4 for display.
    """
    step = _prediction(lesson_id, key)
    data = loaded_lesson(lesson_id)
    graph = data["predict"]["graph"]
    expected = loaded_numbers(lesson_id)[graph][step["node_label"]][step["field"]]
    if not math.isfinite(value):
        raise ValueError(f"a prediction must be a finite number, not {value!r}")
    correct = abs(value - expected) <= data["tolerance"] + TOLERANCE_SLACK
    resolve = lesson_resolver(lesson_id)
    checked = {
        "key": key,
        "value": value,
        "correct": correct,
        "expected": round(expected, 9),
        "expected_text": format_number(expected),
        "reason": fill(step["reason"], resolve, f"prediction {key}"),
    }
    if correct:
        return checked
    numbers = loaded_numbers(lesson_id)[graph]
    return checked | wrong_answer_hint(
        step, value, expected, data["tolerance"], TOLERANCE_SLACK, lambda mistake: prediction_values(mistake, numbers),
        lambda text: fill(text, resolve, f"prediction {key}"))


def key_idea_ids(lesson_id: str) -> list[str]:
    check_lesson_id(lesson_id)
    return [idea["id"] for idea in loaded_lesson(lesson_id)["explain"]["key_ideas"]]
