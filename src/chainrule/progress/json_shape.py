"""The shape of a JSON text checked on its raw bytes, before any object is built: depth, items in one array
or object, and values in all.

    problem = shape_problem(data)     # None, or what was over a limit ("an array of more than 500,000 items")

``json.loads`` builds the whole tree in C, holding the interpreter for as long as it takes: 32 MB of
``[[],[],...]`` is 11 million lists, 1 GB and seconds in which no other request of the process runs. Here the
strings are blanked first (one pass of a regular expression, in C), so that every bracket, comma and colon left
is the document's own; the values are counted from those (one per comma, colon and opening bracket, plus the
first, less the empty arrays and objects), and the brackets alone are walked for the depth and the items of
each array or object, with the interpreter passing to other threads as it goes. Nothing is built. A text that is
not JSON is left to ``json.loads`` to describe; its counts were within the limits, so that parse is bounded too.
"""

from __future__ import annotations

import re

from chainrule.number_text import count_text

__all__ = ["MAX_DEPTH", "MAX_ITEMS", "MAX_VALUES", "shape_problem"]

MAX_DEPTH = 64  # arrays and objects inside each other
MAX_ITEMS = 500_000  # items of one array or members of one object
MAX_VALUES = 2_000_000  # values in all: each key, string, number, true, false, null, array and object

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a string, its escapes skipped whole
_BRACKET = re.compile(rb"[\[\]{}]")
WHITESPACE = b" \t\r\n"


def shape_problem(data: bytes, *, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS,
                  max_values: int = MAX_VALUES) -> str | None:
    """What in ``data`` passes a limit, said for a person; None when every limit holds (or the text is not
    JSON in a way the count cannot tell: json.loads says so)."""
    bare = _STRING.sub(b'""', data).translate(None, WHITESPACE)
    opens = bare.count(b"[") + bare.count(b"{")
    values = bare.count(b",") + bare.count(b":") + opens + 1 - bare.count(b"[]") - bare.count(b"{}")
    if values > max_values:
        return f"a document of more than {count_text(max_values, 'value')}"
    if opens <= max_depth and values <= max_items:
        return None
    commas: list[int] = []  # commas so far directly inside each open array or object, outermost first
    last = 0
    count = bare.count
    for found in _BRACKET.finditer(bare):
        at = found.start()
        if commas:
            commas[-1] += count(b",", last, at)
            if commas[-1] >= max_items:
                return f"an array or object of more than {count_text(max_items, 'item')}"
        last = at + 1
        if bare[at] in b"[{":
            if len(commas) >= max_depth:
                return f"nested more than {max_depth} levels deep"
            commas.append(0)
        elif commas:
            commas.pop()
    return None
