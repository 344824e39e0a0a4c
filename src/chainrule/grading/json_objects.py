"""Names for the JSON objects the grader reads and writes, so a signature says which one it takes.

Their values come from JSON (an exercise.json, a line the harness printed) or go to it (a run's result, as
Exercism's test-runner interface v3 has it): what a value holds is checked where it is read (`number_field`,
`parse_event`, ...), so a value's type stays open here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Case", "Event", "JsonList", "JsonObject", "Result"]

JsonObject = dict[str, Any]  # any JSON object
JsonList = list[Any]  # any JSON array: a call's arguments, a case's list of numbers
Case = JsonObject  # one case of an exercise.json, as written (inputs only)
Event = JsonObject  # one event the harness printed ({"test": ..., "result": ...} or {"error": ...}), checked
Result = JsonObject  # a run's result: Exercism's interface v3 plus verdict, exercise, language, isolation
