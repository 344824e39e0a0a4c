"""Names that look alike (classes/names.py): UTS #39 skeletons from Unicode's own confusables.txt, case
ignored. The pairs come from Unicode's data as its file writes them (each row's comment shows the two
characters), not from our code."""

from __future__ import annotations

import re
import unicodedata

import pytest

from chainrule.classes.names import CONFUSABLES_FILE, looks_alike, skeleton


@pytest.mark.parametrize(("first", "second"), [
    ("\u0410da", "Ada"),                 # CYRILLIC CAPITAL LETTER A
    ("\uff21\uff44\uff41", "Ada"),       # FULLWIDTH LATIN letters
    ("\u0422\u0435acher", "Teacher"),    # CYRILLIC TE and IE
    ("ada", "Ada"), ("TEACHER", "Teacher"),
    ("\u0422\u0415\u0410\u0421\u041dER", "teacher"),  # all capitals, Cyrillic and Latin mixed
    ("Ian", "lan"),                      # I and l: the file's own "0049 ; 006C" row
    ("Bo\u0431", "Bo6"),                 # CYRILLIC SMALL LETTER BE is confusable with the digit 6
])
def test_names_that_look_alike(first, second):
    assert looks_alike(first, second) and looks_alike(second, first)


@pytest.mark.parametrize(("first", "second"), [("Ada", "Adam"), ("Zo\u00eb", "Zoe"), ("Jos\u00e9", "Jose"),
                                               ("Bea", "Ada")])
def test_names_that_only_resemble_are_different(first, second):
    assert not looks_alike(first, second)


def test_the_data_is_unicodes_confusables_file_with_its_licence():
    text = CONFUSABLES_FILE.read_text(encoding="utf-8-sig")
    assert "# Unicode Security Mechanisms for UTS #39" in text and re.search(r"# Version: \d+\.\d+\.\d+", text)
    assert (CONFUSABLES_FILE.parent / "UNICODE-LICENSE.txt").read_text(encoding="utf-8").startswith("UNICODE LICENSE V3")
    rows = [line for line in text.splitlines() if re.match(r"^[0-9A-F]{4,6} ;", line)]
    assert len(rows) > 6000
    # Each row makes its source character and its prototype confusable (UTS #39 takes NFD first, so the
    # rows of characters that decompose are reached through their parts instead).
    for line in rows[::37]:
        source, prototype = (field.strip() for field in line.split(";")[:2])
        char = chr(int(source, 16))
        if unicodedata.normalize("NFD", char) == char:
            assert skeleton(char) == skeleton("".join(chr(int(code, 16)) for code in prototype.split())), line
