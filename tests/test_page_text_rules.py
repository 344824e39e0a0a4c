"""Rules for the text on the pages: the pages format no number (every number is the server's text), and what
the lessons say about review and the model solution is what happens."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

import chainrule
from chainrule.lessons import get_lesson
from chainrule.lessons.help import solution_after
from chainrule.progress import open_store

STATIC_JS = Path(chainrule.__file__).parent / "web" / "static" / "js"
ROOT = Path(__file__).resolve().parent.parent

# Ways a script turns a number into text. Dates (when.js) are not numbers of the engine.
FORMATTING = re.compile(r"\.toFixed\(|\.toPrecision\(|\.toExponential\(|Intl\.NumberFormat|\.toLocaleString\(")
ROUNDING = re.compile(r"Math\.(round|floor|ceil|trunc)\(")
# String(...) is fine for ids, counts and flags; anything else must be one of the server's texts.
STRING_OF = re.compile(r"(?<![\w.])String\(([^()]*(?:\([^()]*\))?[^()]*)\)")
STRING_ALLOWED = re.compile(
    r"^(width|height|interval|groups\.length|scrolls|all|this\.(total|position)|times|count|step|(f|frame)\.step|stale|learner\.id|hint\.number|hintsShown|"
    r"error\.detail|error\.status === 0|item\.runs|item\.learners_answered|expected|"
    r"\+\+answers|sweeps\.agree|value|iso|error\.message \?\? \"\"|error\.line|share\.(total|done)|"
    r"outcome\.correct|Boolean\(outcome\.practice\)|due\.due\.length|finished\(lesson\)|"
    r"lesson\.exercises\.length \+ lesson\.questions\.length|Number\(main\.dataset\.runs \|\| \"0\"\) \+ 1)$")


def scripts():
    return sorted(STATIC_JS.glob("*.js"))


def test_the_pages_format_no_number_themselves():
    found = []
    for path in scripts():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//")[0]
            if FORMATTING.search(code) and path.name != "when.js":
                found.append(f"{path.name}:{number}: {line.strip()}")
            # Rounding is for geometry only (pixels, a log-scale axis), never for a number shown as text.
            if ROUNDING.search(code) and not re.search(r"px|room|logs|Math\.log10", code):
                found.append(f"{path.name}:{number}: {line.strip()}")
            for argument in STRING_OF.findall(code):
                if not STRING_ALLOWED.match(argument.strip()):
                    found.append(f"{path.name}:{number}: String({argument})")
    assert found == [], "number formatting in the pages' scripts:\n" + "\n".join(found)


def test_a_graph_shows_no_raw_number_when_a_text_is_missing():
    graph = (STATIC_JS / "graph.js").read_text(encoding="utf-8")
    body = graph[graph.index("export function numberText"):].split("\n}\n", 1)[0]
    assert "String(entry[key])" not in body and '"?"' in body


@pytest.mark.parametrize("lesson", ["backprop", "computational-graphs"])
def test_the_quiz_says_when_a_question_returns_as_the_scheduler_schedules_it(lesson):
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(folder)
        wrong = store.answer_question(lesson, "q1", "x", False)["interval_days"]
        right = store.answer_question(lesson, "q2", "x", True)["interval_days"]
        store.close()
    said = {1.0: "the next day", 2.0: "two days later"}
    html = next(s["html"] for s in get_lesson(lesson)["sections"] if s["slug"] == "check-yourself")
    text = " ".join(html.split())
    assert f"{said[wrong]} if your answer was wrong" in text
    assert f"{said[right]} if it was right" in text
    assert "a few days" not in text


def test_the_model_solution_is_said_one_way_and_that_is_what_the_page_does():
    needed = solution_after("backprop")
    html = " ".join(next(s["html"] for s in get_lesson("backprop")["sections"] if s["slug"] == "try-it").split())
    assert f"After {needed} runs that do not pass, the model solution opens by itself" in html
    assert "you can also see" not in html
    page = (STATIC_JS / "exercises.js").read_text(encoding="utf-8")
    assert "the model solution opens ` +\n        `by itself after ${plural(body.needed, \"run\")} that do not pass" in page
    assert "opened by itself" in page  # the page opens it at that run, and says so
    for doc in ("docs/authoring.md", "README.md"):
        assert "opens by itself" in (ROOT / doc).read_text(encoding="utf-8"), doc
