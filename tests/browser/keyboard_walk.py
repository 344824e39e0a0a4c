"""The keyboard and screen-reader walk (issue 32 items 10 and 11), in parts that the test files
test_keyboard_and_screen_reader*.py run on different pytest-xdist workers: a lesson of the path, or the path
beyond the lessons (the path page, the later lessons' plots, review, the playground), at one of WIDTHS.

Each part presses keys only (no clicks, no focus() calls). On the way it checks that
* every stop of Tab shows a focus ring (3 px, in a colour with 3:1 against the page) on screen, and that Tab
  moves on from every control (from the code editor after Esc, as the hint under it says): never trapped, and
  never more stops to reach a control than the page has controls;
* the graph player says each step (its number and caption) in a live region, and its table view follows the
  step (the step's row marked, the same texts as the picture);
* with prefers-reduced-motion the steps play at the slowest speed and the line fit a frame a second;
  at 200 % and 400 % zoom (640 and 320 CSS px) each page reflows without sideways scrolling;
* axe-core finds no serious or critical violation on the lessons other tests do not audit (the editors hold the
  reference solutions, f-strings and template strings among them);
* the interactions of issue 42, by keys alone, each leaving the focus where the learner goes on and its status
  text read: every slider of the three driven plots (gradient descent's rate and start, the network's width,
  rate and seed, Slopes' point and h), the contour point of "Many inputs", the path-sum view of "Forward mode
  and reverse mode" path by path, a named wrong prediction's aimed hint and second try, a wrong quiz option's
  why_wrong and second try, and each plot's table view opened and read;
* the capstone's steps (issue 44): each step's editor opens with the learner's own passing code of the step
  before, in the same language, the network step's drawing of the learner's own graph is reached (its frame
  when it scrolls, its table view opened and read), and the last step's download link is followed by Enter.

Predictions and quiz answers are the hand-worked ones of path_walk.py; exercises are the reference
solutions, typed in.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

from path_walk import CAPSTONE, CAPSTONE_PREDICTIONS, NEXT, NUMERIC_ANSWERS, PREDICTIONS, quiz_of

from conftest import WIDTHS, answered_days_ago, axe_violations, new_page
from polling import PAGE_POLL_MS

LANGUAGE = {"desktop": "python", "phone": "javascript"}
REVIEWED = ("backprop", "addition-node")  # answered ten days ago: due in review

FOCUS = """(selector) => {
  const a = document.activeElement;
  if (!a || a === document.body) return null;
  const ring = (el) => { const s = getComputedStyle(el);
    return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2 ? s.outlineColor : null; };
  const editor = a.closest('.cm-editor');
  const r = a.getBoundingClientRect();
  return { what: `${a.tagName.toLowerCase()}#${a.id}.${String(a.className).split(' ')[0]}`,
           ring: ring(a) || (editor && ring(editor)), editor: Boolean(editor), matches: Boolean(selector && a.matches(selector)),
           onScreen: r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth };
}"""


def luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of "#rrggbb" or "rgb(r, g, b)"."""
    if colour.startswith("#"):
        channels = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    else:
        channels = [int(float(part)) for part in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3]]
    linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


# The page's Tab stops at most: every control that takes the focus and is drawn (a group of radio buttons counts
# each button, so this is an upper bound). Going round the page never takes more presses than this and two (out of
# the page to the browser and back in).
CONTROLS = """() => Array.from(document.querySelectorAll(
    'a[href], button, input, select, textarea, summary, [tabindex], [contenteditable=true]')).filter((el) =>
    el.tabIndex >= 0 && !el.disabled && el.getClientRects().length).length"""


class Keys:
    """The learner's keyboard: Tab to a control, then keys. Every Tab stop is checked on the way."""

    def __init__(self, page):
        self.page = page
        self.stops = 0

    def at(self, selector: str) -> bool:
        state = self.page.evaluate(FOCUS, selector)
        return bool(state and state["matches"])

    def round_trip(self) -> int:
        """The most Tab presses that going once round the page can take, counted from the page."""
        return int(self.page.evaluate(CONTROLS)) + 2

    def tab_to(self, selector: str) -> None:
        state = self.page.evaluate(FOCUS, selector)
        if state and state["matches"]:
            return  # there already: no Tab pressed, so the page's controls need not be counted
        limit = self.round_trip()
        for _ in range(limit):
            if state and state["matches"]:
                return
            state = self.tab(state, selector)
        if state and state["matches"]:
            return
        raise AssertionError(f"Tab never reached {selector} in {limit} stops (the page's controls and two)")

    def tab(self, state: dict | None = None, selector: str | None = None) -> dict | None:
        """Press Tab (after Esc in the editor, its documented way out); the new stop must show its ring."""
        if state and state["editor"]:
            self.page.keyboard.press("Escape")
        self.page.keyboard.press("Tab")
        self.stops += 1
        state = self.page.evaluate(FOCUS, selector)
        if state:
            assert state["ring"] and state["onScreen"], state
            assert contrast(state["ring"], "#ffffff") >= 3, state  # the ring stands out from the page
        return state

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)

    def cycle(self) -> int:
        """Tab from here round the whole page back to the skip link: focus moves on from every control.
        Returns the number of stops it took."""
        state = self.page.evaluate(FOCUS, ".skip-link")
        limit = self.round_trip()
        for stop in range(1, limit + 1):
            state = self.tab(state, ".skip-link")
            if state and state["matches"]:
                return stop
        raise AssertionError(f"Tab never came back round to the skip link in {limit} stops: focus is trapped")


def wait_page(page, complete: bool = False) -> None:
    page.wait_for_selector("main[data-complete='true']" if complete else "main[data-ready='true']", timeout=60_000)


REFLOWS = """(width) => {
  // What does not fit: the page scrolls sideways, or a control lies outside the screen without a
  // scrolling frame (a graph, an editor, a table) to reach it in.
  const inScroller = (el) => { for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p); if (/(auto|scroll)/.test(s.overflowX) && p.scrollWidth > p.clientWidth) return true; }
    return false; };
  const out = [];
  if (document.documentElement.scrollWidth > width) out.push(`page ${document.documentElement.scrollWidth} px wide`);
  for (const el of document.querySelectorAll('main a, main button, main input, main select, main textarea, main summary, main label, main p, main h1, main h2')) {
    const r = el.getBoundingClientRect();
    if (!r.width || el.closest('[hidden], .visually-hidden, svg')) continue;
    if ((r.right > width + 1 || r.left < -1) && !inScroller(el)) out.push(`${el.tagName} "${el.textContent.trim().slice(0, 30)}" ${r.left}-${r.right}`);
  }
  return out; }"""


CLIPPED = """() => Array.from(document.querySelectorAll('main *')).filter((el) => {
    if (el.closest('svg, .cm-editor, .visually-hidden, .katex-mathml, [hidden]') || !el.getClientRects().length) return false;
    const s = getComputedStyle(el);
    const clips = (o) => o === 'hidden' || o === 'clip';
    return (clips(s.overflowX) && el.scrollWidth > el.clientWidth + 1) || (clips(s.overflowY) && el.scrollHeight > el.clientHeight + 1);
  }).map((el) => `${el.tagName}.${el.className}: "${el.textContent.trim().slice(0, 30)}"`)"""
TEXT_SPACING = ("* { line-height: 1.5 !important; letter-spacing: 0.12em !important; word-spacing: 0.16em !important; }"
                " p { margin-bottom: 2em !important; }")


def assert_reflows(page, where: str) -> None:
    """WCAG 1.4.10 and 1.4.4: at 200 % and 400 % zoom of a 1280x900 window (640x450 and 320x225 CSS px)
    the page fits its width (only graphs, the editor and wide tables scroll inside their own frames).
    WCAG 1.4.12: with the criterion's text spacing no text is cut off."""
    for width, height in ((640, 450), (320, 225)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function("w => innerWidth === w", arg=width, polling=PAGE_POLL_MS)
        assert page.evaluate(REFLOWS, width) == [], (where, width)
    page.set_viewport_size({"width": WIDTHS["desktop"][0], "height": WIDTHS["desktop"][1]})
    page.wait_for_function("w => innerWidth === w", arg=WIDTHS["desktop"][0], polling=PAGE_POLL_MS)
    spacing = page.add_style_tag(content=TEXT_SPACING)
    assert page.evaluate(CLIPPED) == [], where
    spacing.evaluate("style => style.remove()")


LOW_BORDERS = """() => Array.from(document.querySelectorAll('input[type=text], textarea, select, .editor')).filter((el) =>
    el.getClientRects().length).map((el) => [el.id || el.className, getComputedStyle(el).borderTopColor])"""


GRAPH_TEXT = """() => Array.from(document.querySelectorAll('svg.graph-svg text')).filter((t) => t.textContent.trim()).map((t) => {
    // The text's colour and what it is drawn on: its box, its op ellipse, or the page (edge labels carry a halo of white).
    const shape = t.closest('g.node') ? t.closest('g.node').querySelector('rect') : t.closest('.op-node') ? t.closest('.op-node').querySelector('ellipse') : null;
    return [t.textContent, getComputedStyle(t).fill, shape ? getComputedStyle(shape).fill : 'rgb(255, 255, 255)'];
  })"""


# Pages axe-core audits in other tests (test_accessibility.py: the path, backprop, review;
# test_playground_page.py: the playground): here it audits the others, the costliest check of a page.
AUDITED_ELSEWHERE = {"path", "backprop", "review", "playground", "slopes-and-the-chain-rule", "a-network-learns",
                     "forward-and-reverse-mode", "many-inputs-and-the-gradient",
                     "softmax-and-cross-entropy",  # these five in test_path_six_*.py, at both widths
                     CAPSTONE}  # in test_path_capstone.py, at both widths (its keyboard walk is
                                # test_keyboard_and_screen_reader_capstone.py and _phone_capstone.py)
# The path's new lessons, finished by clicks in test_path_six_*.py: here each is opened from the path and its
# plot worked by keyboard (a choice by arrow keys, a step by Enter; the contour plot's point moved by arrow keys):
# (holder, a choice group, the choice an arrow key moves to, the data attribute that says which is shown).
PLOTS_BY_KEYBOARD = {
    "slopes-and-the-chain-rule": ("#nudge-plot", None, None, None),
    "many-inputs-and-the-gradient": ("#contour-plot", None, None, None),
    "a-network-learns": ("#boundary-plot", "boundary-run", "large", "run"),
    "forward-and-reverse-mode": ("#sweep-plot", "sweep-mode", "reverse", "mode"),
}
# The driven plots (driven.json): each slider moved by a key, the server's new plot awaited, its value and the
# live caption read: (plot, [(control, key)]). Gradient descent's is driven in its lesson walk (finish_lesson).
DRIVEN_BY_KEYBOARD = {
    "slopes-and-the-chain-rule": ("nudge", [("at", "ArrowLeft"), ("h", "Home")]),
    "a-network-learns": ("moons", [("width", "ArrowLeft"), ("lr", "ArrowRight"), ("seed", "Home")]),
    "gradient-descent-linear-regression": ("descent", [("lr", "ArrowRight"), ("w", "ArrowLeft"), ("b", "ArrowRight")]),
}
# Each plot's table view (a folded table of the numbers it draws), opened by Enter on its summary and read; the
# sweep plot's Jacobian is a table always shown, in a frame that takes the focus.
TABLE_VIEWS = {"slopes-and-the-chain-rule": ["#nudge-plot", "#driven-nudge"],
               "many-inputs-and-the-gradient": ["#contour-plot"],
               "a-network-learns": ["#boundary-plot", "#driven-moons"],
               "forward-and-reverse-mode": ["#path-plot"],
               "gradient-descent-linear-regression": ["#fit-plot", "#driven-descent"]}
# A wrong first prediction that the lesson names (lessons/mistakes.py), typed before the right one: (the
# prediction's key, the slip's number worked out by hand, the mistake's name). The hint is aimed at it.
SLIPS = {
    "computational-graphs": ("p", -(1.5 * -2.0), "lost the minus sign of w"),  # x*w with w's sign lost
    "backprop": ("n", 2.0 * -3.0 + 0.0 * 1.0, "left out the bias"),  # x1*w1 + x2*w2 without b
    "gradient-descent-linear-regression": ("dr", -1.0, "counted only one use of r"),  # r = 0.5*2 + 1 - 3, once
}


def assert_page_rules(page, where: str, site_nav: set) -> None:
    """axe-core's WCAG 2.1 A and AA rules (no serious or critical violation) on the pages no other test
    audits; 1.4.3 for the text of the graphs (4.5:1 against its box, op or the page); 1.4.11: every text field,
    choice and the editor has a border with 3:1 against the page; 4.1.1: no id used twice; 3.2.3: the
    site's navigation is the same on every page."""
    if where not in AUDITED_ELSEWHERE:
        found = axe_violations(page)
        assert found == [], json.dumps({where: found}, indent=1)
    low = [(what, colour) for what, colour in page.evaluate(LOW_BORDERS) if contrast(colour, "#ffffff") < 3]
    assert low == [], (where, low)
    # 1.4.3 for the graphs' own text, which axe-core does not measure in SVG.
    faint = {(text, fill, under) for text, fill, under in page.evaluate(GRAPH_TEXT) if contrast(fill, under) < 4.5}
    assert faint == set(), (where, faint)
    assert page.evaluate("() => { const ids = Array.from(document.querySelectorAll('[id]'), (e) => e.id);"
                         " return ids.filter((id, i) => ids.indexOf(id) !== i); }") == [], where
    site_nav.add(page.locator("nav[aria-label='Site']").inner_text())
    assert len(site_nav) == 1, site_nav


# After a step of a graph player: its position, what its live region says (and how: role and aria-live), the
# phase badge and caption it says it from, and the table view's rows beside the picture's boxes (value and
# gradient texts), with the row marked as the step's and the box the picture marks.
STEP_SAID = """h => { const root = document.getElementById(h);
    const said = root.querySelector('.step-announcer');
    const svg = Object.fromEntries(Array.from(root.querySelectorAll('g.node')).map((g) =>
      [g.dataset.nodeId, [g.querySelector('.node-value').textContent, g.querySelector('.node-grad').textContent]]));
    const rows = Object.fromEntries(Array.from(root.querySelectorAll('.graph-table tbody tr')).map((r) =>
      [r.dataset.nodeId, [r.querySelector('.table-value').textContent, r.querySelector('.table-grad').textContent]]));
    const current = root.querySelector(".graph-table tr[aria-current='step']");
    return { position: root.getAttribute('data-position'), role: said.getAttribute('role'),
             live: said.getAttribute('aria-live'), said: said.textContent,
             phase: root.querySelector('.phase-badge').textContent, caption: root.querySelector('.caption-text').textContent,
             svg, rows, current: current && current.dataset.nodeId, active: root.dataset.activeNode }; }"""


def step_through_with_announcements(page, keys: Keys, holder: str, steps: int) -> None:
    """Open the player's table view, then step with the scrubber's arrow keys: after each step the live
    region says "Step k of n, forward|backward: <caption>", and the table marks the step's box and shows the
    same value and gradient texts as the picture."""
    player = page.locator(f"#{holder}")
    keys.tab_to(f"#{holder} .graph-table-view summary")
    keys.press("Enter")
    assert player.locator(".graph-table-view").get_attribute("open") is not None
    keys.tab_to(f"#{holder} input[type=range]")
    keys.press("Home")
    total = int(player.get_attribute("data-total"))
    for position in range(1, min(steps, total) + 1):
        keys.press("ArrowRight")
        step = page.evaluate(STEP_SAID, holder)  # one call: the same texts and attributes, read in one go
        assert step["position"] == str(position), (holder, step)
        assert step["role"] == "status" and step["live"] == "polite", (holder, step)
        assert step["said"] == f"Step {position} of {total}, {step['phase'].lower()}: {step['caption']}", (holder, step)
        assert step["rows"] == step["svg"] and step["current"] == step["active"], (holder, position, step)


def read_table_view(page, keys: Keys, holder: str) -> None:
    """Tab to the plot's "Table view of the plot", open it by Enter (the focus stays on it), then Tab into its
    frame, which a screen reader names; its tables hold a caption and rows of the plot's numbers."""
    view = f"{holder} .plot-table-view"
    keys.tab_to(f"{view} summary")
    keys.press("Enter")
    assert page.locator(view).get_attribute("open") is not None and keys.at(f"{view} summary")
    keys.tab_to(f"{view} .plot-table-frame")
    assert page.locator(f"{view} .plot-table-frame").get_attribute("aria-label").endswith("as a table")
    tables = page.locator(f"{view} table.plot-table")
    for k in range(tables.count()):
        assert tables.nth(k).locator("caption").inner_text().strip(), (holder, k)
        assert tables.nth(k).locator("tbody tr").count() > 0, (holder, k)


def drive_by_keyboard(page, keys: Keys, name: str, moves: list[tuple[str, str]]) -> None:
    """Each slider of the driven plot `name` moved by its key: the server's new plot arrives, the slider keeps the
    focus and says its new value (aria-valuetext, the same text as shown beside it), and the live caption names it."""
    driven = f"#driven-{name}"
    trained = ":not([data-trained='false'])"  # a network's caption says where it ends once trained
    page.wait_for_selector(f"{driven}[data-answers]{trained}")
    caption = page.locator(f"{driven} .driven-caption")
    assert caption.get_attribute("aria-live") == "polite"
    for control, key in moves:
        slider = f"#driven-{name}-{control}"
        before, said = int(page.get_attribute(driven, "data-answers")), caption.inner_text()
        keys.tab_to(slider)
        keys.press(key)
        page.wait_for_selector(f"{driven}:not([data-answers='{before}'])[data-state='ready']{trained}")
        assert keys.at(slider)
        value = page.get_attribute(slider, "aria-valuetext")
        assert value == page.locator(f"{slider}-value").inner_text()
        now = caption.inner_text()
        assert now != said and value in now, (control, value, now)


def finish_lesson(page, keys: Keys, lesson_id: str, size: str) -> None:
    language = LANGUAGE[size]
    # 03: the animation, step by step from the keyboard, read out and mirrored in the table view.
    step_through_with_announcements(page, keys, "see-it-work-player", 6)
    speed = page.locator("#see-it-work-player select.speed").input_value()
    assert speed == ("slow" if size == "phone" else "normal")  # less motion asked for on the phone run
    if page.locator("#fit-plot").count():
        plot = page.locator("#fit-plot")
        assert plot.get_attribute("data-frame-ms") == ("1000" if size == "phone" else "250")
        keys.tab_to("#fit-plot button[data-action='next']")
        keys.press("Enter", "Enter", "Enter")
        assert plot.get_attribute("data-step") == "3"
    if lesson_id in DRIVEN_BY_KEYBOARD:
        drive_by_keyboard(page, keys, *DRIVEN_BY_KEYBOARD[lesson_id])
    for holder in TABLE_VIEWS.get(lesson_id, []):
        read_table_view(page, keys, holder)

    # 04: Next until a prediction box takes the focus; type, Enter; "Next ▶ play this step" has the focus.
    expected = CAPSTONE_PREDICTIONS if lesson_id == CAPSTONE else PREDICTIONS[lesson_id]
    section = page.locator("#section-04")
    keys.tab_to("#predict-player button.next")
    # Each step takes at most a Tab back to Next and an Enter; each prediction a typed answer and an Enter (the
    # named slip, a second).
    slip = SLIPS.get(lesson_id)
    for _ in range(2 * int(page.locator("#predict-player").get_attribute("data-total")) + 2 * len(expected) + 4):
        made = int(section.get_attribute("data-predictions-made") or "0")
        if made == len(expected):
            break
        if keys.at("form.prediction-form input"):
            key = page.locator("form.prediction-form").get_attribute("data-key")
            if slip and key == slip[0]:
                second_try_after_a_named_slip(page, keys, key, slip[1], slip[2], expected[key])
                slip = None
            keys.type(f"{expected[key]:.4f}")
            keys.press("Enter")
            page.wait_for_function("k => document.querySelector('#section-04').dataset.predictionsMade === String(k)", arg=made + 1, polling=PAGE_POLL_MS)
            assert keys.at(".prediction-next"), page.evaluate(FOCUS, None)
            keys.press("Enter")
        elif keys.at("#predict-player button.next:not([disabled])"):
            keys.press("Enter")
        else:
            keys.tab_to("#predict-player button.next")
    slipped = 1 if lesson_id in SLIPS else 0  # right on the second try: made, not right at once
    assert section.locator(".prediction-list li.right").count() == len(expected) - slipped

    run_exercises(page, keys, lesson_id, language)

    # 06: numbers typed, choices by arrow keys (Space checks the first), Enter on "Check answer". The first
    # choice question is answered wrong first: why that option is wrong is read, then one more try.
    wrong_first = next((q["id"] for q in quiz_of(lesson_id) if q["kind"] == "choice" and q.get("why_wrong")), None)
    for question in quiz_of(lesson_id):
        form = f"#section-06 form[data-question='{question['id']}']"
        if question["id"] == wrong_first:
            choose_wrong_then_right(page, keys, form, question)
        elif question["kind"] == "number":
            keys.tab_to(f"{form} input")
            keys.type(NUMERIC_ANSWERS[question["id"]])
            keys.press("Enter")
        else:
            keys.tab_to(f"{form} input[type=radio]")
            keys.press(*(["Space"] if question["answer_index"] == 0 else ["ArrowDown"] * question["answer_index"]))
            keys.tab_to(f"{form} button[type=submit]")
            keys.press("Enter")
        page.wait_for_function("f => document.querySelector(f).dataset.correct !== undefined", arg=form, polling=PAGE_POLL_MS)
        assert page.get_attribute(form, "data-correct") == "true"

    # 07: write, save; the key ideas take the focus; Space ticks the first.
    keys.tab_to("#explanation-text")
    keys.type("Each box waits for its inputs, and the gradients flow back along the same edges.")
    keys.tab_to("#section-07 button[type=submit]")
    keys.press("Enter")
    page.wait_for_selector("#section-07 .key-ideas:not([hidden])")
    assert keys.at("#section-07 .key-ideas input[type=checkbox]")
    keys.press("Space")
    page.wait_for_selector("main[data-finished='true']")


def run_exercises(page, keys: Keys, lesson_id: str, language: str) -> None:
    """Section 05: each exercise in one language: arrow keys choose it, the code is typed in, Run tests by Enter.
    The capstone's steps each open with the step before's passing code, and the last one's download is taken."""
    from chainrule.grading import reference_source

    exercises = page.locator("article.exercise").evaluate_all("nodes => nodes.map(n => n.dataset.exercise)")
    for number, exercise in enumerate(exercises):
        block = f"article[data-exercise='{exercise}']"
        keys.tab_to(f"{block} input[type=radio]:checked")
        while not keys.at(f"#lang-{exercise}-{language}"):
            keys.press("ArrowRight")
        page.wait_for_function("([b, l]) => document.querySelector(b).dataset.language === l", arg=[block, language], polling=PAGE_POLL_MS)
        if lesson_id == CAPSTONE and number:
            assert_carried(page, exercises[number - 1], exercise, language)
        keys.tab_to(f"{block} .cm-content")
        keys.press("Control+A")
        page.keyboard.insert_text(reference_source(exercise, language))
        assert page.evaluate("id => window.chainruleEditors[id].getText()", exercise) == reference_source(exercise, language)
        keys.tab_to(f"{block} button.run-tests")
        with page.expect_response(lambda r: r.url.endswith("/api/grade"), timeout=120_000):
            keys.press("Enter")
        page.wait_for_function("b => { const r = document.querySelector(`${b} .results`); return r.dataset.status && !r.hasAttribute('aria-busy'); }",
                               arg=block, timeout=120_000, polling=PAGE_POLL_MS)
        assert page.locator(f"{block} .results").get_attribute("data-status") == "pass"
        if exercise == "engine-network":
            read_drawn_graph(page, keys, block)
    if lesson_id == CAPSTONE:
        download_by_keyboard(page, keys, exercises[-1], language)


def read_drawn_graph(page, keys: Keys, block: str) -> None:
    """The network step's drawing of the learner's own graph, by keys: its frame reached by Tab when it scrolls
    (then named for a screen reader), its table view opened by Enter and its frame reached by Tab, named, with a
    row per box of the picture."""
    drawn = f"{block} .drawn-graph"
    page.wait_for_selector(f"{drawn} svg")
    if page.locator(f"{drawn} figure").get_attribute("data-scrolls") == "true":
        keys.tab_to(f"{drawn} figure")
        assert "scroll to see all of it" in page.locator(f"{drawn} figure").get_attribute("aria-label")
    view = f"{drawn} .graph-table-view"
    keys.tab_to(f"{view} summary")
    keys.press("Enter")
    assert page.locator(view).get_attribute("open") is not None and keys.at(f"{view} summary")
    keys.tab_to(f"{view} .graph-table-frame")
    assert page.locator(f"{view} .graph-table-frame").get_attribute("aria-label") == "Your engine's graph of your network as a table"
    assert page.locator(f"{view} tbody tr").count() == page.locator(f"{drawn} svg g.node").count() > 20


def assert_carried(page, before: str, exercise: str, language: str) -> None:
    """A capstone step opens with the learner's own passing code of the step before (in the same language, its
    exercise marker renamed) as soon as that step passes, and says so in a note beside the editor."""
    from chainrule.grading import reference_source

    carried = reference_source(before, language).replace(f"exercise: {before}", f"exercise: {exercise}")
    page.wait_for_function("([id, text]) => window.chainruleEditors[id].getText() === text", arg=[exercise, carried], polling=PAGE_POLL_MS)
    assert page.locator(f"article[data-exercise='{exercise}'] .carried-note").is_visible()


def download_by_keyboard(page, keys: Keys, exercise: str, language: str) -> None:
    """The last step's "Download your passing code" link, reached by Tab and followed by Enter: a file named for the
    step and language, holding the passing code (then the lines that run it on its own)."""
    from chainrule.grading import LANGUAGES, reference_source

    link = f"article[data-exercise='{exercise}'] a.download-code"
    keys.tab_to(link)
    assert page.get_attribute(link, "href") == f"/api/exercises/{exercise}/passing-code?language={language}"
    with page.expect_download() as got:
        keys.press("Enter")
    download = got.value
    assert download.suggested_filename == f"{exercise}.{LANGUAGES[language]}"
    assert Path(download.path()).read_text(encoding="utf-8").startswith(reference_source(exercise, language).rstrip())


def second_try_after_a_named_slip(page, keys: Keys, key: str, slip: float, name: str, right: float) -> None:
    """In the prediction's field: the slip typed and sent by Enter. Its hint is aimed at it (the mistake named),
    is a status region (announced) that describes the field, the answer is not shown, and the focus stays in the
    field for the second try, whose old text Ctrl+A selects to be typed over."""
    keys.type(f"{slip:.4f}")
    keys.press("Enter")
    hint = page.locator("form.prediction-form .prediction-hint")
    hint.locator(".hint").wait_for()
    assert hint.locator(".hint").get_attribute("data-mistake") == name
    assert hint.get_attribute("role") == "status"
    assert hint.get_attribute("id") in page.get_attribute(f"#prediction-{key}", "aria-describedby").split()
    assert f"{right:.4f}" not in page.locator("#section-04").inner_text()
    assert keys.at(f"#prediction-{key}")
    keys.press("Control+A")


def choose_wrong_then_right(page, keys: Keys, form: str, question: dict) -> None:
    """A choice question answered wrong by keyboard first: the feedback takes the focus and says why that option
    is wrong (its why_wrong), without the right answer; then Shift+Tab back to the options, an arrow key to the
    right one, Tab to Check answer, Enter: right, as practice (the first answer rated the review card)."""
    right = question["answer_index"]
    wrong = 0 if right != 0 else 1
    keys.tab_to(f"{form} input[type=radio]")
    keys.press(*(["Space"] if wrong == 0 else ["ArrowDown"] * wrong))
    keys.tab_to(f"{form} button[type=submit]")
    keys.press("Enter")
    page.wait_for_function("f => document.querySelector(f).dataset.retry === 'true'", arg=form, polling=PAGE_POLL_MS)
    feedback = page.locator(f"{form} .feedback")
    assert feedback.locator(".hint").inner_text().strip() == question["why_wrong"][wrong]
    assert question["options"][right].rstrip(".") not in feedback.inner_text()
    assert keys.at(f"{form} .feedback")
    keys.press("Shift+Tab", "Shift+Tab")  # back past Check answer to the chosen option
    assert keys.at(f"{form} input[type=radio]:checked")
    keys.press(*(["ArrowDown"] * (right - wrong) if right > wrong else ["ArrowUp"] * (wrong - right)))
    keys.tab_to(f"{form} button[type=submit]")
    keys.press("Enter")
    page.wait_for_function("f => document.querySelector(f).dataset.correct === 'true'", arg=form, polling=PAGE_POLL_MS)
    assert page.get_attribute(form, "data-practice") == "true"


@contextmanager
def keyboard_session(browser, server_factory, tmp_path: Path, size: str, *, due_in_review: bool = False):
    """A real server of its own (with REVIEWED answered ten days ago, due in review, when asked) and a page at one
    of WIDTHS (the phone asks for less motion); yields (page, keys, server). The page may raise no error and ask
    nothing of another origin."""
    from chainrule.lessons import register_exercises

    register_exercises()  # the lessons' exercises, for their reference solutions (importing registers nothing)
    data_dir = tmp_path / "data"
    if due_in_review:
        question = next(q for q in quiz_of(REVIEWED[0]) if q["id"] == REVIEWED[1])
        answered_days_ago(data_dir, 10, (*REVIEWED, question["options"][question["answer_index"]], True))
    server = server_factory(data_dir)
    width, height = WIDTHS[size]
    options = {"reduced_motion": "reduce"} if size == "phone" else {}
    context, page, log = new_page(browser, server, width=width, height=height, bypass_csp=True,
                                  wait_until="commit", **options)
    try:
        yield page, Keys(page), server
        assert log.page_errors == [] and log.outside(server.origin) == []
    finally:
        context.close()


def walk_lessons(page, keys: Keys, server, size: str, lessons: list[str]) -> list[str]:
    """From the path page into the first of `lessons` by keyboard, each finished in turn, the recap's link on to the
    next; after the last, the recap's link back to the path. Returns the text colours drawn in the first editor."""
    page.goto(server.origin + "/", wait_until="commit")
    wait_page(page)
    site_nav = {page.locator("nav[aria-label='Site']").inner_text()}  # each lesson's is the path page's
    keys.press("Tab")
    assert keys.at(".skip-link")
    keys.tab_to(f".path-lesson[data-lesson='{lessons[0]}'] a")
    keys.press("Enter")
    seen: list[str] = []
    for number, lesson_id in enumerate(lessons):
        wait_page(page, complete=True)
        assert page.url.endswith(f"/lessons/{lesson_id}")
        finish_lesson(page, keys, lesson_id, size)
        if not seen:
            seen = page.evaluate("""() => Array.from(document.querySelectorAll('.cm-line span')).map((s) => getComputedStyle(s).color)""")
        assert_page_rules(page, lesson_id, site_nav)
        if size == "desktop":
            assert_reflows(page, lesson_id)
        # 08: the recap's link leads on (its address is the next lesson's); the last lesson of the part leads
        # back to the path.
        following = page.locator("#section-08 .next-lesson a")
        if NEXT[lesson_id] is None:  # the path's last lesson
            assert following.count() == 0
        else:
            assert following.get_attribute("href") == NEXT[lesson_id]
        last = number == len(lessons) - 1
        keys.tab_to("#section-08 a.back-to-path" if last else "#section-08 .next-lesson a")
        keys.press("Enter")
    wait_page(page)
    assert page.locator(f".path-lesson[data-lesson='{lessons[-1]}'] .lesson-progress-block").get_attribute(
        "data-state") == "done"
    return seen


def walk_the_paths(page, keys: Keys) -> None:
    """The path-sum view of "Forward mode and reverse mode": Enter on Next step walks it path by path, the live
    caption says each path and its table marks the path's row; after the last, the focus stays on the controls
    (Restart), never on the page's body."""
    plot = page.locator("#path-plot")
    caption = plot.locator(".fit-caption")
    assert caption.get_attribute("aria-live") == "polite"
    keys.tab_to("#path-plot button[data-action='next']")
    paths = plot.locator(".plot-table-view table.plot-table").first.locator("tbody tr").count()
    for step in range(1, paths + 1):
        keys.press("Enter")
        page.wait_for_selector(f"#path-plot[data-step='{step}']")
        assert caption.inner_text().startswith(f"Path {step} of {paths}")
        marked = plot.locator(".plot-table-view table.plot-table").first.locator("tbody tr[aria-current='step']")
        assert marked.count() == 1 and marked.locator("th").text_content().startswith(f"{step} (from ")  # folded: not drawn
    assert keys.at("#path-plot button[data-action='reset']")


def walk_beyond_the_lessons(page, keys: Keys, server, size: str) -> None:
    """The path page (round it by Tab), each later lesson's plot worked by keyboard, the question due in review
    answered, and the playground: an expression typed, stepped through and read out, an input changed, a nudge.
    The session needs due_in_review."""
    page.goto(server.origin + "/", wait_until="commit")
    wait_page(page)
    keys.press("Tab")
    assert keys.at(".skip-link")
    site_nav: set[str] = set()
    assert_page_rules(page, "path", site_nav)
    if size == "desktop":
        assert_reflows(page, "path")
    keys.cycle()  # the path page: round and back to the skip link

    for lesson_id, (holder, group, chosen, shown) in PLOTS_BY_KEYBOARD.items():
        keys.tab_to(f".path-lesson[data-lesson='{lesson_id}'] h2 a")
        keys.press("Enter")
        wait_page(page, complete=True)
        plot = page.locator(holder)
        if holder == "#contour-plot":
            keys.tab_to("#contour-plot .contour-area")
            keys.press("ArrowLeft", "ArrowUp")
            assert plot.get_attribute("data-point") == "0.5,1.5"  # from (1, 1), a step of 0.5 left and up
            # The focus stays on the plot, whose live caption (which describes it) says the new point.
            assert keys.at("#contour-plot .contour-area")
            assert page.get_attribute("#contour-plot .contour-area", "aria-describedby") == "contour-caption"
            said = page.locator("#contour-caption")
            assert said.get_attribute("aria-live") == "polite" and said.inner_text().startswith("At (x, y) = (0.5, 1.5)")
        else:
            assert plot.get_attribute("data-frame-ms") == ("1000" if size == "phone" else "250")
            if group:
                keys.tab_to(f"{holder} input[name='{group}']:checked")
                while not keys.at(f"#{group}-{chosen}"):
                    keys.press("ArrowRight")
                assert plot.get_attribute(f"data-{shown}") == chosen
            keys.tab_to(f"{holder} button[data-action='next']")
            keys.press("Enter")
            assert plot.get_attribute("data-step") == "1"
        if lesson_id in DRIVEN_BY_KEYBOARD:
            drive_by_keyboard(page, keys, *DRIVEN_BY_KEYBOARD[lesson_id])
        if lesson_id == "forward-and-reverse-mode":
            walk_the_paths(page, keys)
        for table_holder in TABLE_VIEWS.get(lesson_id, []):
            read_table_view(page, keys, table_holder)
        if holder == "#sweep-plot":  # its table, the Jacobian, is always shown, in a frame the focus reaches
            keys.tab_to("#sweep-plot .plot-table-frame")
        assert_page_rules(page, lesson_id, site_nav)
        if size == "desktop":
            assert_reflows(page, lesson_id)
        keys.tab_to("nav a[href='/']")
        keys.press("Enter")
        wait_page(page)

    # Review: the question due, answered by keyboard.
    keys.tab_to("nav a[href='/review']")
    keys.press("Enter")
    wait_page(page)
    form = f"#review-list form[data-question='{REVIEWED[1]}']"
    question = next(q for q in quiz_of(REVIEWED[0]) if q["id"] == REVIEWED[1])
    keys.tab_to(f"{form} input[type=radio]")
    keys.press(*(["Space"] if question["answer_index"] == 0 else ["ArrowDown"] * question["answer_index"]))
    keys.tab_to(f"{form} button[type=submit]")
    keys.press("Enter")
    page.wait_for_function("f => document.querySelector(f).dataset.correct === 'true'", arg=form, polling=PAGE_POLL_MS)
    assert_page_rules(page, "review", site_nav)
    if size == "desktop":
        assert_reflows(page, "review")

    # The playground: an expression typed, stepped through and read out, an input changed, a nudge.
    keys.tab_to("nav a[href='/']")
    keys.press("Enter")
    wait_page(page)
    keys.tab_to("#playground-link")
    keys.press("Enter")
    wait_page(page)
    runs = lambda: int(page.get_attribute("main", "data-runs") or "0")  # noqa: E731
    before = runs()
    keys.tab_to("#pg-expression")
    keys.press("Control+A")
    keys.type("a*b + c")
    keys.press("Enter")
    page.wait_for_function(f"() => Number(document.querySelector('main').dataset.runs) > {before}", polling=PAGE_POLL_MS)
    step_through_with_announcements(page, keys, "pg-player", 8)
    before = runs()
    keys.tab_to("#pg-value-a")
    keys.press("Control+A")
    keys.type("4")
    page.wait_for_function(f"() => Number(document.querySelector('main').dataset.runs) > {before}", polling=PAGE_POLL_MS)
    keys.tab_to("#pg-nudge-input")
    keys.press("ArrowDown")
    keys.tab_to("#pg-nudge-form button[type=submit]")
    keys.press("Enter")
    page.wait_for_selector("#pg-nudge-result table")
    assert page.locator("#pg-nudge-result tr[data-row='grad'] td").text_content() == "4"  # d(a*b + c)/db = a = 4
    assert_page_rules(page, "playground", site_nav)
    if size == "desktop":
        assert_reflows(page, "playground")
    keys.cycle()
