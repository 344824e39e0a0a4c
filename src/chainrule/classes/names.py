"""Names in a class that look alike: Unicode's confusable skeletons (UTS #39), case ignored.

    looks_alike("Аda", "Ada")        -> True   (the first letter is Cyrillic)
    looks_alike("Ａｄａ", "Ada")      -> True   (fullwidth letters)
    looks_alike("Теacher", "Teacher") -> True
    looks_alike("ada", "Ada")        -> True   (case ignored)
    looks_alike("Bea", "Ada")        -> False

UTS #39's skeleton: the text in NFD, every character replaced by its prototype from confusables.txt,
NFD again (https://www.unicode.org/reports/tr39/#Confusable_Detection). Two strings are confusable when
their skeletons are equal. Skeletons keep case ("I" has the prototype "l", "i" has none), so to ignore case
a name has two keys: the skeleton of its case-folded NFKC form (NFKC also turns fullwidth letters into
plain ones), and the case-folded skeleton of its NFKC form. Two names look alike when they share a key.

The data: Unicode's own confusables.txt (version 17.0.0, in data/ beside this module, under the Unicode
License V3 in data/UNICODE-LICENSE.txt). docs/security.md says how to replace it with a newer release.
"""

from __future__ import annotations

import functools
import unicodedata
from pathlib import Path

__all__ = ["skeleton", "look_alike_keys", "looks_alike", "CONFUSABLES_FILE"]

CONFUSABLES_FILE = Path(__file__).parent / "data" / "confusables.txt"


@functools.lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Each source character of confusables.txt -> its prototype (one or more characters)."""
    table: dict[str, str] = {}
    with open(CONFUSABLES_FILE, encoding="utf-8-sig") as lines:
        for line in lines:
            fields = line.split("#", 1)[0].split(";")
            if len(fields) < 3:
                continue
            source, prototype = fields[0].strip(), fields[1].split()
            table[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in prototype)
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton of ``text``: equal skeletons mean the strings can be mistaken for each other."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(char, char) for char in decomposed))


def look_alike_keys(name: str) -> frozenset[str]:
    """The keys under which ``name`` collides with a name that looks like it, whatever the case."""
    compatible = unicodedata.normalize("NFKC", name)
    return frozenset({skeleton(compatible.casefold()), skeleton(compatible).casefold()})


def looks_alike(first: str, second: str) -> bool:
    return not look_alike_keys(first).isdisjoint(look_alike_keys(second))
