"""The capstone, "Build the engine and train it", taken end to end in a real Chromium at desktop width: its graph,
its predictions, its five steps (each step's editor filled with the learner's own passing code of the step
before as soon as that step passes, in the same language; the network step's passing run draws the learner's
own graph of their network), its quiz, explain-it-back and recap, then axe-core,
no sideways scrolling and a picture at 1280 and at 390 px on the finished lesson.

Predictions and quiz answers are worked out by hand (path_walk.py), never read back from the page; the steps are pasted
from the reference solutions and graded through the page (the first two in Python, so that the carried code can
be seen; then JavaScript, TypeScript, and Python again)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from keyboard_walk import assert_carried
from lesson_pages import choose_language, reference, run_tests, set_editor_text
from path_walk import CAPSTONE, CAPSTONE_PREDICTIONS, answer_quiz, make_predictions

from conftest import WIDTHS, axe_violations, keep_screenshot, new_page
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(900)

STEPS = [("engine-value", "python"), ("engine-ops", "python"), ("engine-backward", "javascript"),
         ("engine-network", "typescript"), ("engine-training", "python")]
# o = tanh(1.5 × -0.8 + -0.5 × 0.6 + 0.4) = tanh(-1.1)
OUTPUT = f"{math.tanh(-1.1):.4f}"


def assert_the_learners_graph_is_drawn(page, graph: list[dict], size: str) -> None:
    """The network step passed: under its tests, the graph the learner's own engine built (the result's "graph",
    walked through their _prev and _op) is drawn, one box per node with the result's own texts, one edge per
    input, and its table view holds the same numbers. At 1280 px it fits its frame (at most 1,166 px wide, no
    scrolling sideways); at 390 px it is drawn top to bottom and its frame scrolls, taking the keyboard focus."""
    holder = page.locator("article[data-exercise='engine-network'] .drawn-graph")
    holder.wait_for()
    page.wait_for_function("h => h.dataset.shape === (innerWidth <= 640 ? 'narrow' : 'wide')", arg=holder.element_handle(), polling=PAGE_POLL_MS)
    shown = holder.evaluate("""h => {
        const texts = (rows, a, b) => Array.from(rows, (r) => [r.querySelector(a).textContent, r.querySelector(b).textContent]);
        const figure = h.querySelector('figure.graph-figure');
        return { boxes: texts(h.querySelectorAll('svg g.node'), '.node-value', '.node-grad'),
                 rows: texts(h.querySelectorAll('.graph-table tbody tr'), '.table-value', '.table-grad'),
                 edges: h.querySelectorAll('svg path.edge').length, svg: h.querySelector('svg').getBoundingClientRect().width,
                 sideways: figure.scrollWidth > figure.clientWidth, focusable: figure.tabIndex === 0,
                 name: h.querySelector('svg').getAttribute('aria-label'), caption: h.querySelector('.drawn-graph-caption').textContent }; }""")
    want = sorted([n["data_text"], n["grad_text"]] for n in graph)
    assert len(shown["boxes"]) == len(graph) and sorted(shown["boxes"]) == want and sorted(shown["rows"]) == want
    assert shown["edges"] == sum(len(n["inputs"]) for n in graph)
    assert shown["name"].startswith(f"Your engine's graph of your network: {len(graph)} boxes.")
    assert f"the {len(graph)} Values your network built" in shown["caption"]
    if size == "desktop":
        assert shown["svg"] <= 1166 and not shown["sideways"]
    else:
        assert shown["sideways"] and shown["focusable"]


def test_the_capstone_end_to_end(browser, server_factory, tmp_path: Path) -> None:
    server = server_factory(tmp_path / "data")
    width, height = WIDTHS["desktop"]
    context, page, log = new_page(browser, server, width=width, height=height, bypass_csp=True, wait_until="commit")
    try:
        page.goto(f"{server.origin}/lessons/{CAPSTONE}")
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert page.locator("#messages .message").count() == 0
        assert page.locator("section.lesson-section").count() == 8
        note = page.locator("#assumes-note")  # opened first: it says what it builds on
        assert note.locator("a").all_text_contents()[:-1] == [
            "Backpropagation: the chain rule on a graph", "A network learns: two moons"]

        player = page.locator("#see-it-work-player")
        player.locator("input[type=range]").focus()
        page.keyboard.press("End")
        assert player.locator("button.next").is_disabled()
        assert player.locator("g.node[data-label='o'] .node-value").text_content() == OUTPUT

        make_predictions(page, CAPSTONE_PREDICTIONS)
        for number, (exercise, language) in enumerate(STEPS):
            block = page.locator(f"article[data-exercise='{exercise}']")
            choose_language(page, exercise, language)
            if number == 1:  # step 1 passed in Python: step 2 opens with that very code, its marker renamed
                assert_carried(page, "engine-value", exercise, "python")
            set_editor_text(page, exercise, reference(exercise, language))
            result = run_tests(page, exercise)
            assert block.locator(".results").get_attribute("data-status") == "pass", block.text_content()
            if exercise == "engine-network":
                graph = next(t for t in result["tests"] if t["name"] == "the network drawn")["graph"]["nodes"]
                assert_the_learners_graph_is_drawn(page, graph, "desktop")
        download = page.locator("article[data-exercise='engine-training'] a.download-code")
        assert download.is_visible()
        assert download.get_attribute("href") == "/api/exercises/engine-training/passing-code?language=python"

        answer_quiz(page, CAPSTONE)
        page.locator("#explanation-text").fill("Each Value sends its gradient back to its inputs, added up.")
        with page.expect_response(lambda r: r.url.endswith("/explanation") and r.request.method == "PUT") as saved:
            page.locator("#section-07 button[type=submit]").click()
        assert saved.value.status == 200
        assert page.locator("#section-08 .next-lesson a").count() == 0  # the last lesson of the path
        page.wait_for_selector("main[data-finished='true']")

        for size in ("phone", "desktop"):
            width, height = WIDTHS[size]
            page.set_viewport_size({"width": width, "height": height})
            assert axe_violations(page) == [], size
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
            assert_the_learners_graph_is_drawn(page, graph, size)
            keep_screenshot(page.locator("#section-05"), f"lesson-{CAPSTONE}-05-{size}.png")
            keep_screenshot(page.locator(".drawn-graph"), f"lesson-{CAPSTONE}-drawn-network-{size}.png")
        page.reload()  # the stored passing run is drawn again
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert_the_learners_graph_is_drawn(page, graph, "desktop")
        assert log.outside(server.origin) == [] and log.page_errors == []
    finally:
        context.close()
