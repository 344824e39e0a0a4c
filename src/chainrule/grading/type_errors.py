"""TypeScript type errors in a grading result: read from the harness's events, judged, and worded.

The harness runs the real TypeScript compiler on the learner's file before any learner code runs and
reports {"event": "type-errors", "errors": [{line, column, code, message}]} (or "type-check-failed").
`with_type_errors(result, events)` adds `type_errors` to the result and, when there are some, makes the
run fail with verdict "type-error" (see docs/grading.md, "TypeScript type checking").
"""

from __future__ import annotations

from chainrule.grading.json_objects import Event, JsonObject, Result
from chainrule.number_text import count_text

__all__ = ["TYPE_ERRORS_SHOWN", "type_error_lines", "with_type_errors"]

TYPE_ERRORS_SHOWN = 21  # the checker reports at most 20, then one "... and N more" line


def _type_errors(events: list[Event]) -> tuple[list[JsonObject], str | None]:
    """(type errors, why the checker could not run or None), from the FIRST checker event: the harness
    sends it before any learner code runs, so a line the learner's code forges later is ignored."""
    first = next((e for e in events if e.get("event") in ("type-errors", "type-check-failed")), None)
    if first is None:
        return [], "the type checker did not report (the run ended before it finished)"
    if first["event"] == "type-check-failed":
        return [], f"the type checker failed: {str(first.get('message'))[:500]}"
    errors = []
    listed = first.get("errors")
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, dict):
            continue
        where = {key: item.get(key) if isinstance(item.get(key), int) and not isinstance(item.get(key), bool)
                 else None for key in ("line", "column", "code")}
        errors.append(where | {"message": str(item.get("message", ""))[:1000]})
    return errors[:TYPE_ERRORS_SHOWN], None


def type_error_lines(errors: list[JsonObject]) -> list[str]:
    """One line per type error: "line 3, column 7: Type 'string' is not assignable ... (TS2322)"."""
    lines = []
    for error in errors:
        where = f"line {error['line']}, column {error['column']}: " if error.get("line") else ""
        code = f" (TS{error['code']})" if error.get("code") else ""
        lines.append(f"{where}{error['message']}{code}")
    return lines


def with_type_errors(result: Result, events: list[Event]) -> Result:
    """Add `type_errors` to a TypeScript result. Type errors fail a run that would otherwise pass or
    fail on its numbers (verdict "type-error"); the tests still ran, so both are shown. A run that
    ended in an error or a limit keeps that verdict, and lists the type errors too."""
    errors, problem = _type_errors(events)
    result["type_errors"] = errors
    if problem and result["verdict"] in ("passed", "failed"):
        result["message"] = ((result["message"] or "") + f"\n\nTypes were not checked: {problem}.").strip()
    if not errors:
        return result
    count = count_text(len(errors), "type error") if len(errors) < TYPE_ERRORS_SHOWN else \
        "type errors"
    listing = "\n".join(type_error_lines(errors))
    if result["verdict"] in ("passed", "failed"):
        passed = sum(t["status"] == "pass" for t in result["tests"])
        result["verdict"], result["status"] = "type-error", "fail"
        result["message"] = (f"TypeScript found {count} in your file; a run with type errors does not pass "
                             f"(the tests ran anyway: {passed} of {len(result['tests'])} passed).\n{listing}")
    else:
        result["message"] = f"{result['message'] or ''}\n\nTypeScript also found {count}:\n{listing}".strip()
    return result
