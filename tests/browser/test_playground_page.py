"""The playground page at desktop (1280 px) and phone (390x844) size, in a real Chromium against the real
server: type an expression, step through it, change and nudge an input, forward mode beside reverse mode,
errors marked where they are in the text, readable graph text, and axe-core.

Expected numbers are derived by hand for the expressions typed here (never read back from the server):
a*b + c at a = 2, b = -3, c = 0.5 (the starting values of the first three names) is -5.5, with gradients
a: b = -3, b: a = 2, c: 1.
"""

from __future__ import annotations

import json

import pytest
from graph_checks import overprints
from lesson_pages import click

from conftest import axe_violations, keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(scope="module", params=list(SIZES))
def signed_in(request, browser, lesson_server):
    """One signed-in browser context per screen size for the whole file, and one page in it that each test opens
    the playground in afresh (the playground keeps its run in the page's address, so a new load starts afresh):
    a new page costs Chromium a renderer of its own, about three times the CPU of loading the playground again
    in the same page."""
    from conftest import new_page

    width, height = SIZES[request.param]
    context, page, log = new_page(browser, lesson_server, width=width, height=height, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield request.param, page, errors
    assert log.outside(lesson_server.origin) == []
    context.close()


@pytest.fixture()
def page(signed_in, lesson_server):
    """The size's page with the playground loaded anew (the address without a run in it is a new document, not
    a move within the page), the mouse off every element; no script error in the page during the test."""
    size, page, errors = signed_in
    seen = len(errors)
    page.mouse.move(0, 0)
    page.goto(f"{lesson_server.origin}/playground", wait_until="commit")
    page.wait_for_selector("main[data-ready='true']")
    page.size_name = size
    yield page
    assert errors[seen:] == []


def runs(page) -> int:
    return int(page.get_attribute("main", "data-runs") or "0")


def after_run(page, action) -> None:
    """Do `action` and wait until the server's answer is on the page."""
    before = runs(page)
    action()
    page.wait_for_function(f"() => Number(document.querySelector('main').dataset.runs || 0) > {before}", polling=PAGE_POLL_MS)


def submit(page, expression: str) -> None:
    def act():
        page.fill("#pg-expression", expression)
        page.click("#pg-run")
    after_run(page, act)


def box(page, label: str, slot: str) -> str:
    return page.locator(f"#pg-player g.node[data-label='{label}'] .node-{slot}").text_content()


def to_end(page) -> None:
    page.locator("#pg-player input[type=range]").focus()
    page.keyboard.press("End")
    page.wait_for_selector("#pg-player.at-end")


def test_type_an_expression_and_see_every_value_and_gradient(page):
    submit(page, "a*b + c")
    assert page.get_attribute("#pg-results", "data-state") == "current"
    assert [page.input_value(f"#pg-value-{name}") for name in "abc"] == ["2", "-3", "0.5"]
    to_end(page)
    assert box(page, "out", "value") == "-5.5"
    assert [box(page, name, "grad") for name in "abc"] == ["-3", "2", "1"]
    assert "out = -5.5" in page.text_content("#pg-status")


def together_in_view(page) -> bool:
    """The active box (inside the graph's frame), the caption and the controls are all on screen."""
    return page.evaluate("""() => {
        const holder = document.getElementById('pg-player');
        const active = holder.querySelector('g.node.active');
        const frame = holder.querySelector('figure').getBoundingClientRect();
        const inside = (r, box) => r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.left >= box.left - 1 && r.right <= box.right + 1;
        const screen = {top: 0, left: 0, bottom: innerHeight, right: innerWidth};
        const a = active.getBoundingClientRect();
        return inside(a, frame) && inside(a, screen)
          && inside(holder.querySelector('.caption').getBoundingClientRect(), screen)
          && inside(holder.querySelector('.player-controls').getBoundingClientRect(), screen);
    }""")


def test_step_forward_then_backward_with_the_lessons_captions(page):
    submit(page, "a*b + c")
    player = page.locator("#pg-player")
    assert player.get_attribute("data-total") == "8"  # 5 boxes forward; the seed and 2 ops backward
    seen = []
    for _ in range(8):
        click(page, "#pg-player button.next")
        seen.append((player.locator(".phase-badge").text_content(), player.locator(".caption-text").text_content()))
        assert together_in_view(page), (page.size_name, len(seen), seen[-1])
        # The forward/reverse table marks the row of the box the step works on.
        active = player.get_attribute("data-active-node")
        assert page.locator(".pg-sweeps-table tr.pg-active-row").get_attribute("data-node") == active
    phases = [phase for phase, _ in seen]
    assert phases == ["Forward"] * 5 + ["Backward"] * 3
    assert seen[3][1] == "t1 = a × b = 2 × (-3) = -6", seen[3][1]  # the lessons' caption: ×, and (-3) after it
    assert seen[5][1] == "out is the output, so its gradient is 1."
    assert "a receives" in seen[-1][1] and "= -3" in seen[-1][1]
    player.locator("button.prev").click()
    assert player.get_attribute("data-position") == "7"


def test_a_large_graph_keeps_every_step_in_view(page):
    submit(page, "tanh(a*b + c*d + e*f + g*h) * sigmoid(a - h) + log(abs(b) + 1)")
    player = page.locator("#pg-player")
    total = int(player.get_attribute("data-total"))
    assert total == 24 + 16  # 24 boxes forward; the seed and 15 ops backward
    page.evaluate("window.scrollTo(0, 0)")  # the learner scrolled back up to read
    for step in range(total):
        click(page, "#pg-player button.next")
        assert together_in_view(page), (page.size_name, step + 1)


def test_the_lessons_layout_at_every_width_no_number_overprints_and_a_repeat_is_said(page):
    """Issue 32 items 2 and 9: the playground lays its graph out as the lessons do (top to bottom on a phone,
    in a frame as wide as the screen), its boxes fit their longest numbers at every step, and a computation
    the expression writes twice is said to be computed twice (the engine builds one node per copy)."""
    submit(page, "(a*b) + (a*b)**2")
    player = page.locator("#pg-player")
    assert player.locator("svg").get_attribute("data-shape") == ("narrow" if page.size_name == "phone" else "wide")
    frame = page.locator("#pg-player .graph-figure")
    assert frame.evaluate("f => f.scrollWidth <= f.clientWidth"), frame.evaluate("f => [f.scrollWidth, f.clientWidth]")
    # Two boxes compute a*b, and the page says why.
    products = player.locator("g.node title").evaluate_all("ts => ts.filter(t => / = a × b$/.test(t.textContent)).length")
    assert products == 2
    note = page.locator("#pg-repeats")
    assert note.is_visible() and "2 times" in note.text_content() and "t1" in note.text_content() and "t2" in note.text_content()
    assert "new box each time" in note.text_content()
    after_run(page, lambda: page.fill("#pg-value-a", "-999.9876"))
    after_run(page, lambda: page.fill("#pg-value-b", "123.4567"))
    assert page.locator("#pg-repeats").is_visible()
    scrubber = player.locator("input[type=range]")
    scrubber.focus()
    page.keyboard.press("Home")
    for position in range(int(player.get_attribute("data-total")) + 1):
        assert player.get_attribute("data-position") == str(position)
        assert overprints(page, "#pg-player") == [], (page.size_name, position)
        page.keyboard.press("ArrowRight")
    # -999.9876 * 123.4567 = -123455.16913692 (4 decimals), squared 1.524e10 (4 significant digits).
    assert box(page, "t1", "value") == "-123455.1691" and box(page, "t3", "value") == "1.524e10"
    submit(page, "a*b + c")
    assert page.locator("#pg-repeats").is_hidden()


def test_change_an_input_then_nudge_it(page):
    submit(page, "a*b + c")
    to_end(page)
    after_run(page, lambda: page.fill("#pg-value-a", "4"))
    assert box(page, "out", "value") == "-11.5"    # 4 * -3 + 0.5
    assert box(page, "b", "grad") == "4"
    assert page.get_attribute("#pg-player", "data-position") == "8"  # the step stays where it was
    page.select_option("#pg-nudge-input", "b")
    page.fill("#pg-nudge-h", "0.25")
    after_run(page, lambda: page.click("#pg-nudge-form button[type=submit]"))
    rows = {row.get_attribute("data-row"): row.locator("td").text_content()
            for row in page.locator("#pg-nudge-result tr").all()}
    # b: -3 -> -2.75, so out: -11.5 -> -10.5; change 1, change / h = 4 = the gradient (out is linear in b).
    assert rows == {"before": "-11.5", "after": "-10.5", "change": "1", "ratio": "4", "grad": "4"}


def test_forward_mode_column_beside_reverse_mode(page):
    submit(page, "x*x + y")
    page.wait_for_selector("#pg-seed")
    # Starting values x = 2, y = -3. Forward mode by x: d(x*x)/dx = 2x = 4, d out/dx = 4.
    table = {row.get_attribute("data-node"): [cell.text_content() for cell in row.locator("td").all()]
             for row in page.locator(".pg-sweeps-table tbody tr").all()}
    labels = [page.locator(f".pg-sweeps-table tr[data-node='{node}'] .pg-node-label").text_content() for node in table]
    by_label = dict(zip(labels, table.values()))
    assert by_label["x"] == ["2", "1", "4"]       # value, tangent dx/dx, gradient d out/dx
    assert by_label["t1"] == ["4", "4", "1"]
    assert by_label["out"] == ["1", "4", "1"]
    assert "Both give d(out)/dx = 4" in page.text_content(".pg-agreement")
    after_run(page, lambda: page.select_option("#pg-seed", "y"))
    by_label = {page.locator(f".pg-sweeps-table tr[data-node='{row.get_attribute('data-node')}'] .pg-node-label").text_content():
                [cell.text_content() for cell in row.locator("td").all()]
                for row in page.locator(".pg-sweeps-table tbody tr").all()}
    assert [by_label[name][1] for name in ("x", "y", "t1", "out")] == ["0", "1", "0", "1"]
    assert page.get_attribute(".pg-agreement", "data-agree") == "true"
    assert "Both give d(out)/dy = 1" in page.text_content(".pg-agreement")
    # The table fits the screen (no sideways scrolling in its frame) at both widths.
    assert page.evaluate("() => { const f = document.querySelector('.pg-table-frame'); return f.scrollWidth <= f.clientWidth; }")
    intro = page.text_content(".pg-sweeps-intro")
    assert "one input" in intro and "every input" in intro


def test_an_expression_error_is_marked_where_it_is(page):
    submit(page, "x * tan(x)")
    mark = page.locator("#pg-expression-problem .pg-echo mark")
    assert mark.text_content() == "tan"
    message = page.text_content("#pg-expression-problem .pg-problem-message")
    assert "column 5" in message and "unknown function 'tan'" in message
    assert page.get_attribute("#pg-expression", "aria-invalid") == "true"
    assert page.evaluate("() => [document.activeElement.id, document.activeElement.selectionStart, "
                         "document.activeElement.selectionEnd]") == ["pg-expression", 4, 7]
    # The last graph stays, said to be the last run's, not the current one.
    assert page.get_attribute("#pg-results", "data-state") == "stale"
    assert "still those of the last run" in page.text_content("#pg-status")
    assert page.is_hidden("#messages")  # said once, at the field: no banner
    # Columns count characters: an emoji before the problem does not shift the mark.
    submit(page, "\U0001F600 + x")
    assert page.locator("#pg-expression-problem .pg-echo mark").text_content() == "\U0001F600"
    submit(page, "x + \U0001F600 * zz(x)")
    assert page.locator("#pg-expression-problem .pg-echo mark").text_content() == "\U0001F600"
    submit(page, "x * 2 +")
    assert page.locator("#pg-expression-problem .pg-echo mark.pg-at-end").count() == 1
    submit(page, "x * tanh(x)")
    assert page.locator("#pg-expression-problem > *").count() == 0
    assert page.get_attribute("#pg-results", "data-state") == "current"


@pytest.mark.parametrize("typed, words", [("1e400", "too large"), ("nan", "is not a number"), ("", "is empty")])
def test_a_bad_number_is_said_at_its_field(page, typed, words):
    submit(page, "x + 1")
    after_run(page, lambda: page.fill("#pg-value-x", typed))
    assert words in page.text_content("#pg-value-x-problem")
    assert page.get_attribute("#pg-value-x", "aria-invalid") == "true"
    assert page.get_attribute("#pg-results", "data-state") == "stale"
    assert page.is_hidden("#messages")
    after_run(page, lambda: page.fill("#pg-value-x", "3"))
    assert page.text_content("#pg-value-x-problem") == ""
    assert page.get_attribute("#pg-results", "data-state") == "current"


def test_nothing_typed_can_break_the_page(page):
    hostile = "<img src=x onerror=\"document.body.dataset.owned=1\">"
    submit(page, hostile)
    assert page.locator("#main img").count() == 0
    assert page.text_content("#pg-expression-problem .pg-echo") == hostile
    assert page.evaluate("() => document.body.dataset.owned") is None
    # Names that mean something to JavaScript objects are ordinary names here.
    submit(page, "__proto__ * valueOf")
    after_run(page, lambda: page.fill("#pg-value-__proto__", "5"))
    to_end(page)
    assert box(page, "out", "value") == "-15"  # 5 * -3 (valueOf starts at -3)


def test_graph_text_is_never_below_12_px_and_never_shrunk(page):
    submit(page, "tanh(w1*x1 + w2*x2 + b) * log(abs(x1) + 1)")
    to_end(page)
    sizes = page.evaluate("""() => Array.from(document.querySelectorAll('#pg-player svg text'))
        .filter((t) => t.textContent.trim() !== '')
        .map((t) => parseFloat(getComputedStyle(t).fontSize))""")
    assert sizes and min(sizes) >= 12, sorted(sizes)[:5]
    # Drawn at its own size: one unit of the picture is one CSS pixel.
    scale = page.evaluate("""() => { const svg = document.querySelector('#pg-player svg');
        return svg.getBoundingClientRect().width / svg.viewBox.baseVal.width; }""")
    assert scale == pytest.approx(1.0, abs=0.01)
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[page.size_name][0]  # no page-wide sideways scroll


def test_axe_finds_no_serious_violation_and_screenshots(page):
    submit(page, "tanh(w*x + b)")
    page.locator("#pg-player button.next").click()
    found = {"running": axe_violations(page)}
    to_end(page)
    keep_screenshot(page, f"playground-{page.size_name}.png")
    keep_screenshot(page, f"playground-{page.size_name}-full.png", full_page=True)
    submit(page, "w * x +* b")
    after_run(page, lambda: page.fill("#pg-value-x", "huge"))
    found["with errors"] = axe_violations(page)
    keep_screenshot(page, f"playground-{page.size_name}-error.png", full_page=True)
    problems = {where: violations for where, violations in found.items() if violations}
    assert not problems, json.dumps(problems, indent=1)


def test_a_reload_shows_the_same_run(page):
    submit(page, "a*b + c")
    after_run(page, lambda: page.fill("#pg-value-b", "0.25"))
    after_run(page, lambda: page.select_option("#pg-seed", "c"))
    page.reload()
    page.wait_for_selector("main[data-ready='true']")
    assert page.input_value("#pg-expression") == "a*b + c"
    assert [page.input_value(f"#pg-value-{name}") for name in "abc"] == ["2", "0.25", "0.5"]
    assert page.input_value("#pg-seed") == "c"
    to_end(page)
    assert box(page, "out", "value") == "1"  # 2 * 0.25 + 0.5
    # An address someone wrote by hand is read as input like any other: its problem is said at its place.
    page.goto(page.url.split("#")[0] + "#e=x%20%2B%20tan(x)&v.x=oops")
    page.reload()
    page.wait_for_selector("main[data-ready='true']")
    assert page.locator("#pg-expression-problem .pg-echo mark").text_content() == "tan"


def test_every_example_runs(page):
    examples = page.locator(".pg-example")
    for index in range(examples.count()):
        example = examples.nth(index)
        after_run(page, example.click)
        assert page.input_value("#pg-expression") == example.get_attribute("data-expression")
        assert page.get_attribute("#pg-results", "data-state") == "current"
        assert page.locator("#pg-expression-problem > *").count() == 0


def test_the_path_page_links_to_the_playground(page, lesson_server):
    page.goto(lesson_server.origin + "/")
    page.wait_for_selector("main[data-ready='true']")
    page.click("a#playground-link")
    page.wait_for_selector("main[data-ready='true'][data-page='playground']")
    assert page.input_value("#pg-expression") == "x*y + tanh(x)"
