"""Text that learner code produced, made safe to keep and to show.

    valid_text("a\\ud800b")        -> "a\\ufffdb"     (storable and encodable as UTF-8)
    valid_data({"out": "\\ud800"}) -> {"out": "\\ufffd"} (every string inside, at any depth)
    terminal_text("\\x1b[2Jhi\\r")  -> "\\\\x1b[2Jhi\\\\r"  (control characters shown, not obeyed)

Learner code runs in the sandbox and can print anything. Python strings may hold lone UTF-16
surrogates (from "\\ud800" in a JSON escape or a JavaScript string), which cannot be encoded as UTF-8:
such a string breaks a print, a JSON response and an export. And a terminal obeys escape sequences,
so printed verbatim they can clear the screen, draw a fake report, set the title or the clipboard.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["REPLACEMENT", "valid_text", "valid_data", "terminal_text", "terminal_json", "control_characters"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")

# C0 controls except tab and newline, DEL, C1 controls, and the invisible bidirectional controls that
# can make a line read differently from what it says (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069).
_SHOWN_ESCAPED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\x07": "\\x07", "\x08": "\\x08", "\x0b": "\\x0b", "\x0c": "\\x0c"}


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a valid surrogate pair becomes its character)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_data(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with valid_text applied to every string,
    keys included. Returns the same object when nothing needed replacing."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        cleaned = [valid_data(item) for item in value]
        return value if all(a is b for a, b in zip(cleaned, value)) else cleaned
    if isinstance(value, dict):
        pairs = [(valid_data(key), valid_data(item)) for key, item in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items())):
            return value
        return dict(pairs)
    return value


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def terminal_text(text: str) -> str:
    """``text`` safe to write to a terminal: valid UTF-8, and every control character except newline
    and tab shown as an escape (ESC as \\x1b, carriage return as \\r, CSI U+009B as \\x9b, ...)."""
    return _SHOWN_ESCAPED.sub(_escape, valid_text(text))


def terminal_json(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON safe to write to a terminal: every character terminal_text escapes (C1 controls
    such as U+009B, bidirectional overrides such as U+202E, ...) written as a JSON escape (\\u009b), so
    that the output is the same data to a JSON reader and inert on a screen."""
    text = valid_text(json.dumps(value, indent=indent, ensure_ascii=False))
    return _SHOWN_ESCAPED.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def control_characters(text: str) -> list[str]:
    """The characters of ``text`` that terminal_text would escape, each once, as terminal_text shows
    them ("\\x1b", "\\u202e"), in order of first appearance. A CR of a CRLF line end is not counted."""
    found: dict[str, None] = {}
    for match in _SHOWN_ESCAPED.finditer(text.replace("\r\n", "\n")):
        found.setdefault(_escape(match), None)
    return list(found)
