"""The path's end-to-end walks share these: each lesson's hand-worked predictions (section 04) and numeric quiz
keys (section 06), making the predictions and answering the quiz through the page, where each lesson's
recap leads, and the checks every state a walk reaches must pass (StateChecks: axe-core and overflow).

Predictions and quiz keys are worked out by hand (math.tanh for the one tanh), never read back from the page."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from lesson_pages import SPEC_PREDICTIONS, click

from conftest import AXE_AUDIT, SERIOUS, WCAG_TAGS, load_axe
from polling import PAGE_POLL_MS

DATA = Path(__file__).resolve().parents[2] / "src" / "chainrule" / "lessons" / "data"

# Hand-worked predictions of each lesson's section 04.
PREDICTIONS = {
    "computational-graphs": {"p": -3.0, "n": -0.5, "o": math.tanh(-0.5), "oo": math.tanh(-0.5) ** 2,
                             "y": math.tanh(-0.5) ** 2 + math.tanh(-0.5)},
    "backprop": SPEC_PREDICTIONS,
    "gradient-descent-linear-regression": {"f": 2.0, "r": -1.0, "L": 1.0, "dr": -2.0, "dw": -4.0, "db": -2.0},
}
# The capstone's (walked on its own, after the path): L = a b + a at a = 3, b = -2: c = -6, L = -3, and a's two
# shares b + 1 = -1.
CAPSTONE = "build-the-engine"
CAPSTONE_PREDICTIONS = {"c": -6.0, "L": -3.0, "da": -1.0}
# Hand-worked keys of the numeric quiz questions (the choice questions are answered from quiz.json's index).
NUMERIC_ANSWERS = {
    "product-gradient": "6", "tanh-gradient": "0.51", "sum-of-uses": "8",
    "evaluate-graph": "8", "shared-value": "2", "count-values": "7",
    "one-step": "0.9", "point-gradient": "6", "mean-squared-error": "4.6667",
    # the capstone's, from their given numbers: b + 1; (1 - t²) g; b g
    "value-used-twice": "-1", "tanh-local-gradient": "1.28", "product-local-gradient": "-6",
}
NEXT = {"computational-graphs": "/lessons/backprop", "backprop": "/lessons/gradient-descent-linear-regression",
        "gradient-descent-linear-regression": "/lessons/a-network-learns", CAPSTONE: None}  # the last: no next


def quiz_of(lesson_id: str) -> list[dict]:
    return json.loads((DATA / lesson_id / "quiz.json").read_text(encoding="utf-8"))["questions"]


def make_predictions(page, expected: dict[str, float]) -> None:
    predict = page.locator("#section-04")
    made = 0
    while made < len(expected):
        form = predict.locator("form.prediction-form")
        if form.count() == 0:
            click(page, "#predict-player button.next")
            continue
        key = form.get_attribute("data-key")
        form.locator("input").fill(f"{expected[key]:.4f}")
        form.locator("input").press("Enter")
        made += 1
        page.wait_for_function("k => document.querySelector('#section-04').dataset.predictionsMade === String(k)",
                               arg=made, polling=PAGE_POLL_MS)
    for key in expected:
        item = predict.locator(f".prediction-list li[data-key='{key}']")
        assert "right" in item.get_attribute("class"), (key, item.text_content())


def answer_quiz(page, lesson_id: str, numeric_answers: dict[str, str] = NUMERIC_ANSWERS) -> None:
    quiz = page.locator("#section-06")
    for question in quiz_of(lesson_id):
        form = quiz.locator(f"form[data-question='{question['id']}']")
        if question["kind"] == "number":
            form.locator("input").fill(numeric_answers[question["id"]])
            form.locator("input").press("Enter")
        else:
            form.locator("label", has_text=question["options"][question["answer_index"]]).click()
            form.locator("button[type=submit]").click()
        page.wait_for_function(
            "q => document.querySelector(`#section-06 form[data-question='${q}']`).dataset.correct !== undefined",
            arg=question["id"], polling=PAGE_POLL_MS)
        assert form.get_attribute("data-correct") == "true", form.text_content()
        assert "comes back in review" in form.locator(".feedback").text_content().lower()


# What axe-core's rules can see change between two states of a part of the page: the kinds of element it holds,
# a kind being a tag, classes, attribute names, the values of the attributes that change a role or what takes the
# focus, and whether it has text of its own. A mark moving from one row to the next, one more entry of a kind
# already there, numbers, coordinates and texts changing from step to step, and what is drawn inside a picture
# are not a new state. A part is an element with an id or a child of the scope, and what it holds outside the parts
# inside it: a step of a player or an answer at a gate changes the player's or the prediction panel's part, not the
# prose and math beside it, so axe-core audits that part again and leaves the rest, which it has seen as it is now.
# A part's state leaves out its id: the next gate's form, the same kinds under another id, is not a new state.
PARTS = """async (scope) => {
  const kept = ['role', 'tabindex', 'type', 'hidden', 'disabled', 'open', 'aria-hidden', 'aria-live', 'aria-disabled',
                'aria-expanded', 'aria-pressed', 'aria-current'];
  const root = document.querySelector(scope);
  const kinds = new Map();  // part -> the kinds of element it holds
  // Each element in document order with its part: its own if it has an id or is a child of the scope, else its
  // parent's. A picture (an svg, role img) is one element to axe-core: what is drawn inside it is not a state, so
  // the walk does not go into it (thousands of a graph's elements left unvisited). Nor into a formula (KaTeX's
  // span.katex): its spans differ from formula to formula, but their text takes the colour of the text around it
  // (KaTeX's stylesheet sets none but currentColor, and no lesson colours a formula), its copy for screen readers
  // is MathML, and its drawing is hidden from them, so a new formula is prose's text changing, not a new state.
  const visit = (el, part) => {
    const names = el.getAttributeNames().filter((n) => !n.startsWith('data-') && !['style', 'class'].includes(n)).sort();
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!kinds.has(part)) kinds.set(part, new Set());
    kinds.get(part).add([el.tagName, [...el.classList].sort().join('.'),
      names.map((n) => kept.includes(n) ? `${n}=${el.getAttribute(n)}` : n).join(','),
      el.getClientRects().length ? 'shown' : 'unseen', own ? 'text' : ''].join('|'));
    if (el.localName === 'svg' || el.classList.contains('katex')) return;
    for (const child of el.children) visit(child, child.id || el === root ? child : part);
  };
  visit(root, root);
  const parts = [];
  for (const [part, set] of kinds) {
    const text = [...set].sort().join('\\n');
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
    parts.push([part, Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('')]);
  }
  return parts;
}"""

# Overflow: the page never scrolls sideways; at desktop width no graph is larger than its frame (no box cut off).
OVERFLOW = """([scope, framesFit]) => {
  const out = [];
  const page = document.documentElement.scrollWidth;
  if (page > innerWidth) out.push(`the page is ${page} px wide in a ${innerWidth} px window`);
  if (framesFit) for (const frame of document.querySelector(scope).querySelectorAll('.graph-figure')) {
    if (frame.scrollWidth > frame.clientWidth + 1) out.push(`${frame.closest('[id]').id}: a ${frame.scrollWidth} px graph in a ${frame.clientWidth} px frame`);
  }
  return out;
}"""

# The overflow, the parts and their audit in one visit to the page: axe-core runs on the parts whose state it has
# not seen (the parts inside them it has seen left out); MEASURED stands for the caller's own measurements, taken
# in the same visit, before it.
CHECK = f"""async ([scope, framesFit, seen, tags, args]) => {{
  const measured = [MEASURED];
  const overflow = ({OVERFLOW})([scope, framesFit]);
  const parts = await ({PARTS})(scope);
  const fresh = parts.filter(([, digest]) => !seen.includes(digest));
  if (!fresh.length) return {{measured, overflow, audited: [], violations: []}};
  if (!window.axe) return {{measured, overflow, needsAxe: true}};
  const include = fresh.map(([part]) => part);
  const exclude = parts.filter(([part]) => !include.includes(part) && include.some((i) => i.contains(part)))
                       .map(([part]) => part);
  const violations = await ({AXE_AUDIT})([{{include, exclude}}, tags]);
  return {{measured, overflow, audited: fresh.map(([, digest]) => digest), violations}};
}}"""


# The parts' states axe-core has audited and passed, shared by every StateChecks of the test run on a page of the
# same width, height and reduced-motion setting: the ten walks of every state (lesson_walk.py) audit a part's state
# once per run, not once per file or per worker. Why an audit in one walk stands for the same state in another: what
# axe-core's rules can see of a part is its kinds (PARTS), the CSS that styles them and the window it is laid out
# in. The kinds are the digest; the CSS is the same, served by the same source tree to the same Chromium build
# launched with the same flags by every worker; the window is the key. This is the argument by which one walk
# already trusts an audit from an earlier lesson of its own, on the same page. The workers share a folder (the
# audited_states fixture), a file per state audited: `{width}x{height}-{motion}-{digest}`. Two workers that meet a
# new state at once both audit it: a state is never taken as audited before an audit of it passed.
class AuditedStates:
    """The digests of the parts' states audited and passed, on pages of one window, in a folder the workers share."""

    def __init__(self, folder: Path, window: tuple[int, int, bool]) -> None:
        width, height, reduced = window
        self.folder = folder
        self.prefix = f"{width}x{height}-{'reduced' if reduced else 'motion'}-"

    def digests(self) -> list[str]:
        return [name[len(self.prefix):] for name in os.listdir(self.folder) if name.startswith(self.prefix)]

    def add(self, digests: list[str]) -> None:
        for digest in digests:
            (self.folder / f"{self.prefix}{digest}").touch()


# The key of AuditedStates, read from the page itself: its window's size and whether it asks for reduced motion.
WINDOW = "() => [innerWidth, innerHeight, matchMedia('(prefers-reduced-motion: reduce)').matches]"


class StateChecks:
    """The suite's axe-core and overflow checks on every state a walk reaches (issue 42 item 10), not only at
    its end: check(scope, where) after each step, gate and answer. The overflow check (a few reads) runs every
    time; axe-core (WCAG 2.1 A and AA) on each part of the scope (PARTS) whose state differs from every state of
    it already audited in what the rules can see, so a walk of forty steps costs a few audits of a player, not
    forty audits of its section."""

    def __init__(self, page, size: str, audited: Path):
        """`audited`: the folder of the states audited in this test run (the audited_states fixture)."""
        self.page = page
        self.frames_fit = size == "desktop"
        self.audited = AuditedStates(audited, tuple(page.evaluate(WINDOW)))

    def check(self, scope: str, where, *also: tuple[str, object]) -> list:
        """Check the state the page shows now; `also`: (page function source, argument) pairs measured in the same
        visit, their results returned. `where` names the state in a failure (or is a function of those results)."""
        source = CHECK.replace("MEASURED", ", ".join(f"await ({function})(args[{i}])" for i, (function, _) in enumerate(also)))
        arguments = [scope, self.frames_fit, self.audited.digests(), WCAG_TAGS, [argument for _, argument in also]]
        found = self.page.evaluate(source, arguments)
        if found.get("needsAxe"):
            load_axe(self.page)
            found = self.page.evaluate(source, arguments)
        named = where(found["measured"]) if callable(where) else where
        assert found["overflow"] == [], (named, found["overflow"])
        serious = [violation for violation in found["violations"] if violation["impact"] in SERIOUS]
        assert serious == [], (named, serious)
        self.audited.add(found["audited"])  # after the audit passed: a state that failed is audited again
        return found["measured"]
