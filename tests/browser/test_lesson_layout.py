"""The lesson pages fit the screen, at desktop (1280 px) and phone (390 px) width, in a real Chromium against
the real server: every graph is the layout chainrule.draw computes, no text of a graph is under 12 px, and
display math breaks only between its sides. Every step and every prediction's gate is walked in
test_lesson_states_desktop*.py and test_lesson_states_phone*.py (lesson_walk.py).

Expected numbers are hand-derived (a = 2, b = -3, c = 10, f = -2 in section 03), never read from the page.
"""

from __future__ import annotations

import pytest
from lesson_pages import LESSON, LESSONS, SIZES, in_view, lesson, open_at

from conftest import WIDTHS, keep_screenshot

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------- the one layout, fitting the screen


@pytest.mark.parametrize("size", SIZES)
def test_graph_is_the_python_layout_and_fits_the_screen(open_page, lesson_server, size) -> None:
    import chainrule
    from chainrule.drawing import geometry
    from chainrule.lessons import build_lesson_graph

    context, page, log = open_at(open_page, lesson_server, size)
    width = WIDTHS[size][0]
    shape = "narrow" if size == "phone" else "wide"
    lesson(page, lesson_server)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for holder, graph in (("see-it-work-player", "section03"), ("predict-player", "neuron")):
        assert page.get_attribute(f"#{holder} svg.graph-svg", "data-shape") == shape
        # Every box exactly where chainrule.draw puts it (the page computes no layout of its own).
        expected = geometry(chainrule.trace(build_lesson_graph(LESSON, graph)), shape)["boxes"]
        shown = page.locator(f"#{holder} g.node").evaluate_all(
            "nodes => nodes.map(n => [n.dataset.nodeId, n.getAttribute('transform')])")
        assert {node: transform for node, transform in shown} == {
            node: f"translate({box['x']:g},{box['y']:g})" for node, box in expected.items()}
        # The picture keeps its own size (its text is never shrunk): its frame fits the screen, and
        # scrolls when the picture is larger (issue 21 item 3).
        frame = page.locator(f"#{holder} .graph-figure").bounding_box()
        assert frame["x"] >= 0 and frame["x"] + frame["width"] <= width
        rect = page.locator(f"#{holder} svg.graph-svg").bounding_box()
        if rect["width"] > frame["width"] + 1:
            assert page.get_attribute(f"#{holder} .graph-figure", "data-scrolls") == "true"
    # Display math wraps instead of running off the screen.
    overflowing = page.evaluate(
        """w => Array.from(document.querySelectorAll('.katex-display')).filter(d =>
             d.scrollWidth > d.clientWidth + 1 || d.getBoundingClientRect().right > w).length""", width)
    assert overflowing == 0

    # The backward pass: the active box stays on screen, and no edge label covers an arrowhead.
    player = page.locator("#see-it-work-player")
    player.locator("input[type=range]").focus()
    page.keyboard.press("Home")
    forward = len(page.evaluate("() => window.chainruleSeeItWork.trace.forward"))
    for _ in range(forward):
        page.keyboard.press("ArrowRight")
    backward_steps = int(player.get_attribute("data-total")) - forward
    for _ in range(backward_steps):
        player.locator("button.next").click()
        active = player.get_attribute("data-active-node")
        assert in_view(page, f"#see-it-work-player g.node[data-node-id='{active}']"), active
        clashes = page.evaluate(
            """() => {
                const svg = document.querySelector('#see-it-work-player svg');
                const out = [];
                for (const label of svg.querySelectorAll('.edge-label')) {
                    if (!label.textContent) continue;
                    const edge = svg.querySelector(`path.edge[data-from='${label.dataset.from}'][data-to='${label.dataset.to}']`);
                    const end = edge.getPointAtLength(edge.getTotalLength());
                    const box = label.getBBox();
                    const arrow = 9;  // the arrowhead's size in the picture's units
                    const apart = box.x > end.x + arrow || box.x + box.width < end.x - arrow ||
                                  box.y > end.y + arrow || box.y + box.height < end.y - arrow;
                    if (!apart) out.push(label.textContent);
                }
                return out;
            }""")
        assert clashes == []
    assert player.get_attribute("data-position") == player.get_attribute("data-total")
    keep_screenshot(page.locator("#section-03"), f"lesson-graph-{size}.png")
    assert log.outside(lesson_server.origin) == [] and log.page_errors == []


# ---------------------------------------------------------------- each lesson loaded once per size


@pytest.fixture(scope="module")
def loaded_lessons(browser, lesson_server):
    """loaded_lessons(size) -> ({lesson id: page}, request log): every lesson of LESSONS open, complete, in a
    signed-in context of its own at that size, loaded once for this file's tests that only read what the page
    shows (they do not click, type or scroll), instead of once per test."""
    from conftest import new_page

    opened: dict[str, tuple[dict, object]] = {}
    contexts = []

    def load(size: str):
        if size not in opened:
            width, height = WIDTHS[size]
            context, first, log = new_page(browser, lesson_server, width=width, height=height, wait_until="commit")
            contexts.append(context)
            pages = {}
            for lesson_id in LESSONS:
                page = first if not pages else context.new_page()
                if page is not first:
                    page.on("pageerror", lambda error: log.page_errors.append(str(error)))
                lesson(page, lesson_server, lesson_id)
                pages[lesson_id] = page
            opened[size] = (pages, log)
        return opened[size]

    yield load
    for context in contexts:
        context.close()


# ---------------------------------------------------------------- no graph text under 12 px


SMALLEST_TEXT = """() => {
    let smallest = Infinity, where = '';
    for (const svg of document.querySelectorAll('svg.graph-svg, svg.fit-panel')) {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      for (const text of svg.querySelectorAll('text')) {
        const size = parseFloat(getComputedStyle(text).fontSize) * scale;
        if (size < smallest) { smallest = size; where = `${svg.closest('[id]').id}: ${text.getAttribute('class')}`; }
      }
    }
    return [smallest, where]; }"""


@pytest.mark.parametrize("size", SIZES)
def test_no_text_in_any_graph_is_under_12_px(loaded_lessons, size) -> None:
    pages, log = loaded_lessons(size)
    for lesson_id, page in pages.items():
        smallest, where = page.evaluate(SMALLEST_TEXT)
        assert smallest >= 12, (lesson_id, where, smallest)
        # A graph larger than the screen scrolls in its frame (from the keyboard too), the page does not.
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[size][0]
        for figure in page.locator(".graph-figure[data-scrolls='true']").all():
            assert figure.get_attribute("tabindex") == "0" and "scroll" in figure.get_attribute("aria-label")


# ---------------------------------------------------------------- display math


@pytest.mark.parametrize("size", SIZES)
def test_math_breaks_only_between_sides_and_no_line_starts_with_a_full_stop(loaded_lessons, size) -> None:
    pages, log = loaded_lessons(size)
    for lesson_id, page in pages.items():
        # Measured as a learner sees it, with KaTeX's fonts in: before they load, a fallback font's metrics put
        # a side's pieces at different heights (once in a loaded CI run).
        page.evaluate("document.fonts.ready.then(() => true)")
        # Every piece of display math between two relations is on one line.
        split = page.evaluate("""() => Array.from(document.querySelectorAll('.katex-display .katex-html')).filter(html => {
            const tops = new Set();
            for (const side of html.querySelectorAll(':scope > .math-side')) {
              const bases = Array.from(side.children).map(b => Math.round(b.getBoundingClientRect().top));
              if (new Set(bases).size > 1) return true;
            }
            return html.querySelectorAll(':scope > .base').length > 0;  // every piece is in a side
          }).length""")
        assert split == 0, lesson_id
        # Inline math followed by punctuation: the punctuation is on the same line as the math.
        stray = page.evaluate("""() => Array.from(document.querySelectorAll('.prose')).flatMap(p => {
            const found = [];
            const walker = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
              const node = walker.currentNode, prev = node.previousSibling;
              if (/^[.,;:]/.test(node.textContent) && prev && prev.classList && prev.classList.contains('katex')) found.push(node.textContent.slice(0, 20));
            }
            return found; })""")
        assert stray == [], (lesson_id, stray)
    assert not log.page_errors
