"""The text of a number, written once for everything a learner reads: captions, pages, prompts, reasons
and the terminal.

* `format_number(x)`: one number ("-3", "0.7071", "1.235e6", "nan", "inf", "-inf").
* `number_fields(key, x)`: a number for strict JSON (null for nan and the infinities) with its text
  beside it, `{key: x, key + "_text": "..."}`, so that nothing downstream has to guess which of nan,
  inf and -inf a null stood for; `with_number_texts(document)` does this to every number of a document.
* `format_percent(share)`: a share as a whole percentage ("67 %").
* `count_text(n, "learner")`: a count with its noun, singular for exactly one ("1 learner", "3 learners",
  "0 learners"); every count phrase in text goes through it (tests/test_plurals.py looks for hand-made ones).
* `place_numbers(template, values)`: numbers (and names) put into a formula or a sentence, negatives in
  parentheses where an operator touches them ("2 × (-3)", "16 + (-6)", "(-4)^2"), and `formula_text`
  writes a formula's multiplication as × ("a * b" reads "a × b"; the power ** stays).

Nothing here imports the rest of chainrule: the engine's neighbours, the lessons, grading, the web and
the commands all use it.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Mapping

__all__ = ["TIMES", "count_text", "format_number", "format_percent", "json_number", "number_fields", "with_number_texts",
           "formula_text", "place_numbers", "operand_text"]

# Multiplication in prose and captions: a sign that no variable is named ("x" beside an input named x reads
# wrong). Code keeps "*".
TIMES = "\u00d7"


def format_number(x: float, digits: int = 4) -> str:
    """A float as short readable text; the one rule for every number a learner reads.

    nan, inf and -inf as words; 0 (and -0) as "0"; whole numbers below a million without a decimal point
    (-3, 6); numbers from 1e-4 up to a million with at most `digits` decimals, trailing zeros dropped
    (6.8814, 0.5, 0.7071); anything smaller or larger with `digits` significant digits in exponent form
    (1e-5, 1.235e6).
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


def format_percent(share: float | None, missing: str = "\u2013") -> str:
    """A share (0.675) as a whole percentage ("68 %"); `missing` (an en dash) when there is none."""
    if share is None or share != share:
        return missing
    return f"{round(share * 100)} %"


def count_text(count: float, noun: str, plural: str | None = None) -> str:
    """``count`` with its noun: the singular for exactly 1, else ``plural`` (default: the noun and "s").
    The count is written with thousands separated ("1,000 runs"; a whole float as a whole number)."""
    if isinstance(count, float) and count.is_integer():
        count = int(count)
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def json_number(x: float) -> float | None:
    """A float as strict JSON holds it: nan and the infinities become null (their text says which)."""
    return float(x) if math.isfinite(x) else None


def number_fields(key: str, x: float) -> dict[str, Any]:
    """`{key: the number or null, key_text: its text}`: a number for JSON that keeps nan, inf and -inf apart."""
    return {key: json_number(x), f"{key}_text": format_number(x)}


def with_number_texts(document: Any, digits: int = 4, every: bool = True) -> Any:
    """A copy of a JSON-ready document in which every float under a key gets a "<key>_text" beside it
    (with `every=False`, only the floats strict JSON cannot hold: nan and the infinities). Those become
    null, their text saying which; a list holding one becomes nulls with a "<key>_texts" list beside it."""
    def keep(value: Any) -> bool:
        return isinstance(value, float) and (every or not math.isfinite(value))

    if isinstance(document, Mapping):
        result: dict[str, Any] = {}
        for key, value in document.items():
            if isinstance(value, float):
                result[key] = json_number(value)
                if keep(value):
                    result[f"{key}_text"] = format_number(value, digits)
            elif isinstance(value, list) and any(isinstance(v, float) and not math.isfinite(v) for v in value):
                result[key] = [json_number(v) if isinstance(v, float) else with_number_texts(v, digits, every) for v in value]
                result[f"{key}_texts"] = [format_number(v, digits) if isinstance(v, float) else None for v in value]
            else:
                result[key] = with_number_texts(value, digits, every)
        return result
    if isinstance(document, list):
        return [json_number(v) if isinstance(v, float) else with_number_texts(v, digits, every) for v in document]
    return document


# --- numbers in formulas and sentences --------------------------------------------------------------

# An operator that a number's minus sign would collide with, before it ("2 × -3") or after it ("-4^2").
_OPERATOR_BEFORE = re.compile(r"(\*\*|\\cdot|\\times|[-+*/^\u00d7\u2212\u00b7])\s*$")
_POWER_AFTER = re.compile(r"^\s*(\^|\*\*)")
# A multiplication sign written as code between two operands: "a * b", "2 * (x + 1)" (not "**", not a
# markdown bullet at the start of a line).
_CODE_TIMES = re.compile(r"(?<=[\w)\].}]) \* (?=[\w(\[{\u2212-])")
# A negative number written right after an operator, in a template ("x ** -0.5").
_NEGATIVE_OPERAND = re.compile(r"((?:\*\*|[*/^\u00d7+])\s*)(-[0-9.]+(?:e-?[0-9]+)?)(?![0-9.e(])")
_FIELD = re.compile(r"\{(\w+)\}")


def operand_text(value: float | str, before: str = "", after: str = "", digits: int = 4) -> str:
    """A number (or a name) written where `before` and `after` surround it in a formula: a negative number
    in parentheses when an operator touches it ("2 × (-3)", "(-4)^2"), bare otherwise ("= -6")."""
    text = value if isinstance(value, str) else format_number(value, digits)
    negative = text.startswith(("-", "\u2212"))
    if negative and (_OPERATOR_BEFORE.search(before) or _POWER_AFTER.search(after)):
        return f"({text})"
    return text


def formula_text(text: str) -> str:
    """A formula or a sentence with its code multiplication written as × and a negative number after an
    operator in parentheses: "e = a * b" -> "e = a × b", "x ** -0.5" -> "x ** (-0.5)"."""
    return _NEGATIVE_OPERAND.sub(r"\1(\2)", _CODE_TIMES.sub(f" {TIMES} ", text))


@lru_cache(maxsize=4096)
def _template_parts(template: str) -> tuple[tuple[str, str | None, bool, bool], ...]:
    """A template written as a formula (×, literal negatives in parentheses), cut into (literal, field,
    an operator before the field, a power after it): the work of `place_numbers` done once per template."""
    written = formula_text(template)
    parts = []
    at = 0
    for match in _FIELD.finditer(written):
        literal = written[at:match.start()]
        after = written[match.end():]
        parts.append((literal, match.group(1), bool(_OPERATOR_BEFORE.search(literal)),
                      bool(_POWER_AFTER.search(after))))
        at = match.end()
    parts.append((written[at:], None, False, False))
    return tuple(parts)


def place_numbers(template: str, values: Mapping[str, float | str], digits: int = 4) -> str:
    """Put `values` into the `{name}` fields of a formula template, each number written by
    `operand_text` for what surrounds it, and multiplication as ×:
    place_numbers("{out} = {a} * {b}", {"out": -6.0, "a": 2.0, "b": -3.0}) == "-6 = 2 × (-3)"."""
    pieces: list[str] = []
    for literal, field, operator_before, power_after in _template_parts(template):
        pieces.append(literal)
        if field is None:
            continue
        value = values[field]
        text = value if isinstance(value, str) else format_number(value, digits)
        negative = text.startswith(("-", "\u2212"))
        # Two fields side by side: what touches the second is the end of the first.
        touched = operator_before or (not literal and bool(pieces) and bool(_OPERATOR_BEFORE.search("".join(pieces))))
        pieces.append(f"({text})" if negative and (touched or power_after) else text)
    return "".join(pieces)
