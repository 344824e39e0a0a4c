"""One plural rule for every count in text (issue 43, item 7: "1 learners would change standing"): Python's
count_text (chainrule/number_text.py) and the page's plural() (web/static/js/api.js). This looks through the
source for counts written by hand: a noun put after a counted placeholder, or an "s" chosen by a comparison
with 1, anywhere but in those two functions' modules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chainrule.number_text import count_text

SOURCE = Path(__file__).resolve().parents[1] / "src" / "chainrule"
RULE_MODULES = {SOURCE / "number_text.py", SOURCE / "web" / "static" / "js" / "api.js"}
# Nouns the class and lesson pages count. Not counts: a placeholder named in capitals (a constant of the code,
# a limit such as MAX_STARTS, never 1, with or without a format), a total after "of" or "all" ("2 of 3 tests passed", "all 3 seats are
# taken", many by then), and the words that only look like one ("(latest runs)", "{output} changes by", "nudging {name} changes").
NOT_COUNTED = r"(?<!of )(?<!all )(?<!All )"
WORDS = r"(?![^{}]*\bpick\b)(?!theirs\}|output\}|name\})"
NOUNS = ("learners|runs|teachers|extensions|scores|hints|questions|lessons|exercises|seats|people|tests|problems|"
         "comments|answers|changes|errors|minutes|seconds|days|nodes|boxes|steps|times|points|sections|values|cases|"
         "predictions|rows|items|characters|words")
HAND_MADE = {
    "py": [re.compile(r"""(==|!=) 1 else ["']s?["']"""),
           re.compile(NOT_COUNTED + r"\{(?![A-Z_][A-Z0-9_]*(?::[^{}]*)?\})" + WORDS + r"[^{}]+\} (%s)\b" % NOUNS)],
    "js": [re.compile(r"(===|!==) 1 \?"),
           re.compile(NOT_COUNTED + r"\$\{(?![A-Z_]+\})" + WORDS + r"[^{}]+\} (%s)\b" % NOUNS)],
}


def hand_made_plurals() -> list[str]:
    found = []
    for extension, patterns in HAND_MADE.items():
        for path in sorted(SOURCE.rglob(f"*.{extension}")):
            if path in RULE_MODULES or "vendor" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if any(pattern.search(line) for pattern in patterns):
                    found.append(f"{path.relative_to(SOURCE)}:{number}: {line.strip()}")
    return found


def test_every_count_in_text_goes_through_the_one_plural_rule():
    assert hand_made_plurals() == []


@pytest.mark.parametrize("count, noun, plural, text", [
    (0, "learner", None, "0 learners"), (1, "learner", None, "1 learner"), (2, "learner", None, "2 learners"),
    (1, "person", "people", "1 person"), (3, "person", "people", "3 people"), (1000, "run", None, "1,000 runs"),
])
def test_count_text_is_singular_for_exactly_one(count, noun, plural, text):
    assert count_text(count, noun, plural) == text


def test_the_search_finds_a_hand_made_plural():
    line = 'said = f"{changes} learners would change standing"'
    assert any(pattern.search(line) for pattern in HAND_MADE["py"])
    assert any(pattern.search("`${n} run${n === 1 ? \"\" : \"s\"}`") for pattern in HAND_MADE["js"])
