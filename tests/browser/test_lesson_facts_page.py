"""Issue 42 items 1, 2, 4 to 9 as a learner meets them, at desktop (1280 px) and phone (390 px) width, in a real
Chromium against the real server: the network lesson's dead layer said truly, the constant 1 no input, the
forward-mode lesson's (1 - o*o) × x' and its four terms, the Slopes lesson's small slips, where the focus goes
after each action (item 6), the editor's way out said to a screen reader (7), each graph's name (8) and every
plot's numbers as a table (9).

Expected texts and numbers come from hand derivations (said at each check), never from the page itself.
"""

from __future__ import annotations

import pytest
from keyboard_walk import Keys
from lesson_pages import SIZES, lesson, open_at, visible_text

from conftest import WIDTHS, new_page
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)


def opened(open_page, server, size, lesson_id):
    """The lesson at one of SIZES, complete, on a page of the test's own; (page, log)."""
    _, page, log = open_at(open_page, server, size)
    lesson(page, server, lesson_id)
    return page, log


def loaded(page_per_size, server, size, lesson_id):
    """The lesson at one of SIZES, complete, loaded afresh in the module's page of that size (page_per_size);
    (page, log)."""
    _, page, log = page_per_size(server, size)
    lesson(page, server, lesson_id)
    return page, log


@pytest.fixture(scope="module")
def shared(browser, lesson_server):
    """shared(size, lesson_id) -> (page, log): one page per size and lesson for the module's tests that read a
    lesson or change only a part that no other test reads (a sweep plot, a language, the moons plot's table), opened
    once instead of once per test."""
    pages = {}

    def open_(size: str, lesson_id: str):
        if (size, lesson_id) not in pages:
            width, height = WIDTHS[size]
            context, page, log = new_page(browser, lesson_server, width=width, height=height, wait_until="commit")
            lesson(page, lesson_server, lesson_id)
            pages[size, lesson_id] = (context, page, log)
        _, page, log = pages[size, lesson_id]
        return page, log

    yield open_
    for context, _, _ in pages.values():
        context.close()


def words(page, selector: str) -> str:
    """What `selector` shows, its runs of spaces and line breaks as one space."""
    return " ".join(visible_text(page, selector).split())


def fits_and_no_errors(page, log, size) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS[size][0]
    assert log.page_errors == []


@pytest.mark.parametrize("size", SIZES)
def test_the_network_lesson_says_which_layer_died_and_keeps_the_constant_one_fixed(shared, size):
    page, log = shared(size, "a-network-learns")
    prose = words(page, "#section-03 .prose")
    # Rerun by hand (seed 1, rate 5, 20 steps): first-layer neurons 0 and 7 fire, the second layer never does.
    assert "every neuron of the second hidden layer outputs" in prose
    assert "two neurons of the first hidden layer still fire" in prose
    assert "every hidden neuron's" not in prose
    # The constant 1 of 1 - y*s: shown, never an input to edit or nudge.
    assert page.locator("#explore-x1").count() == 1
    assert page.locator("#explore-1").count() == 0
    assert page.locator("#nudge-input option[value='1']").count() == 0
    assert page.locator("#nudge-input option").first.get_attribute("value") != "1"
    row = page.locator("#explore .graph-table tr", has=page.locator("th", has_text="1")).filter(
        has=page.locator("td.table-formula", has_text="a constant"))
    assert row.count() == 1
    # The quiz's option says the same as the plot.
    quiz = words(page, "#section-06")
    assert "every ReLU of the second hidden layer" in quiz and "every hidden ReLU" not in quiz
    fits_and_no_errors(page, log, size)


@pytest.mark.parametrize("size", SIZES)
def test_the_forward_mode_lesson_reads_unambiguously(shared, size):
    page, log = shared(size, "forward-and-reverse-mode")
    terms = words(page, "#section-02 .prose")
    order = [terms.index(word) for word in ("First, the tangent", "Second, the dual number", "Third, the Jacobian",
                                            "Fourth, the cost")]
    assert order == sorted(order)
    assert "reverse mode must keep every value of the forward pass" in terms
    predict = words(page, "#section-04 .prose")
    assert "without ever going backward" not in predict and "second derivative" in predict
    # tanh(0.5) = 0.4621, so d/dx of y' = tanh(x) + x (1 - tanh(x)^2) at 0.5 is 1.2095 (by hand).
    assert "1.2095" in predict
    formulas = page.evaluate("""() => Array.from(document.querySelectorAll('#predict-player .graph-table tr'))
        .map((row) => [row.querySelector('th')?.textContent, row.querySelector('td.table-formula')?.textContent])""")
    formula = dict(f for f in formulas if f[0])
    assert formula["o'"] == "o' = (1 - o*o) × x'"
    assert formula["1"] == "a constant"
    # One input, six outputs: one forward sweep, said in the singular.
    page.locator("label[for='sweep-function-spread']").click()
    page.locator("label[for='sweep-mode-forward']").click()
    page.wait_for_function("() => document.querySelector('#sweep-plot .fit-caption').textContent.includes('1 sweep will')", polling=PAGE_POLL_MS)
    assert "1 sweeps" not in visible_text(page, "#sweep-plot")
    # Item 6, the sweep plot: after its last step by Enter, Next is disabled and the focus is on Restart.
    sweep_next = page.locator("#sweep-plot button[data-action='next']")
    sweep_next.focus()
    for _ in range(60):
        if sweep_next.is_disabled():
            break
        page.keyboard.press("Enter")
    assert sweep_next.is_disabled()
    assert page.evaluate("() => document.activeElement.dataset.action") == "reset"
    fits_and_no_errors(page, log, size)


@pytest.mark.parametrize("size", SIZES)
def test_the_slopes_lesson_shows_the_tiny_nudge_inexact_and_every_tick_whole(page_per_size, lesson_server, size):
    page, log = loaded(page_per_size, lesson_server, size, "slopes-and-the-chain-rule")
    parts = words(page, "#section-02 .prose")
    assert "Gradient (shown as grad in the graph's boxes)" in parts
    see = words(page, "#section-03 .prose")
    assert see.index("under grad") < see.index("Press play")
    # The sixth nudge, h = 1e-5: ((2(1 + h) + 1)^2 - 9) / h = 12 + 4h = 12.00004 (by hand), not "12".
    caption = page.locator("#nudge-plot .fit-caption")
    for shown in range(2, 7):
        page.locator("#nudge-plot button[data-action='next']").click()
        page.wait_for_function(f"() => document.querySelector('#nudge-plot .fit-caption').textContent.startsWith('Nudge {shown} ')", polling=PAGE_POLL_MS)
    assert "h = 1e-5: (f(1 + h) - f(1)) / h = 12.00004." in caption.text_content()
    # Every tick of the error plot lies wholly inside its picture ("0.001", not ".001").
    cut = page.evaluate("""() => Array.from(document.querySelectorAll('#nudge-plot svg text.fit-tick'))
        .filter((t) => t.getBBox().x < 0).map((t) => t.textContent)""")
    assert cut == []
    assert "0.001" in page.evaluate("() => Array.from(document.querySelectorAll('#nudge-plot .nudge-errors text.fit-tick')).map((t) => t.textContent)")
    fits_and_no_errors(page, log, size)


@pytest.mark.parametrize("size", SIZES)
def test_the_code_editor_tells_a_screen_reader_how_to_leave_it(shared, size):
    """Item 7: the Tab trap's way out is linked to the editor (aria-describedby), in every language."""
    page, log = shared(size, "forward-and-reverse-mode")
    described = """() => Array.from(document.querySelectorAll('article.exercise')).map((block) => {
        const ids = (block.querySelector('.cm-content').getAttribute('aria-describedby') || '').split(' ');
        return ids.map((id) => document.getElementById(id)?.textContent || '').join(' '); })"""
    said = page.evaluate(described)
    assert len(said) == 2 and all("press Esc, then Tab" in text for text in said)
    block = page.locator("article.exercise").first
    other = block.locator(".language-switch input:not(:checked)").first
    page.locator(f"label[for='{other.get_attribute('id')}']").click()
    assert all("press Esc, then Tab" in text for text in page.evaluate(described))
    fits_and_no_errors(page, log, size)


@pytest.mark.parametrize("size", SIZES)
def test_each_graph_is_named_by_its_section_and_formula(shared, size):
    """Item 8: the tangent graph is not "The neuron", the see-it-work graph not only "5 boxes" (boxes counted
    by hand: x, x', 1 and 7 nodes; x, w and 3 nodes)."""
    page, log = shared(size, "forward-and-reverse-mode")
    labels = page.evaluate("""() => Object.fromEntries(['#predict-player', '#section-03'].map((at) =>
        [at, document.querySelector(`${at} svg.graph[aria-label], ${at} svg[aria-label]`).getAttribute('aria-label')]))""")
    assert labels["#predict-player"].startswith("Predict: the graph of y = x*tanh(x) and its tangent y': 10 boxes.")
    assert labels["#section-03"].startswith("See it work: the graph of y = x*tanh(w*x): 5 boxes.")
    assert "neuron" not in " ".join(labels.values())
    fits_and_no_errors(page, log, size)


@pytest.mark.parametrize("size", SIZES)
def test_focus_stays_on_the_controls_after_the_last_step(page_per_size, lesson_server, size):
    """Item 6, players: the last Next is disabled, and focus moves to the next control, not to the page."""
    page, log = loaded(page_per_size, lesson_server, size, "slopes-and-the-chain-rule")
    focused = "() => { const a = document.activeElement; return a === document.body ? 'body' : a.dataset.action || a.className; }"
    nudge_next = page.locator("#nudge-plot button[data-action='next']")
    nudge_next.focus()
    for _ in range(8):  # nine nudges: eight steps from the first to the last
        page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#nudge-plot').dataset.step === '8'", polling=PAGE_POLL_MS)
    assert nudge_next.is_disabled() and page.evaluate(focused) == "reset"
    player_next = page.locator("#section-03 .player-controls button.next").first
    player_next.focus()
    while not player_next.is_disabled():
        page.keyboard.press("Enter")
    assert page.evaluate(focused) == "prev"
    fits_and_no_errors(page, log, size)


FOCUSED = """() => { const a = document.activeElement;
  return a === document.body ? 'body' : [a.tagName.toLowerCase(), a.className, a.closest('[data-exercise], form[data-question], [id]')?.getAttribute('data-question') || ''].join(' '); }"""


@pytest.mark.parametrize("size", SIZES)
def test_focus_goes_to_the_result_after_run_tests_show_hint_and_check_answer(open_page, server_factory, tmp_path, size):
    """Item 6, by keyboard alone: after the line fit's last step focus is on Restart; after Run tests on the
    results' header; after Show hint on the hint shown; after Check answer on the feedback; never on the page."""
    server = server_factory(tmp_path / "data")  # a store of its own: this test grades a run and answers the quiz
    page, log = opened(open_page, server, size, "gradient-descent-linear-regression")
    keys = Keys(page)
    keys.tab_to("#fit-plot button[data-action='next']")
    while page.locator("#fit-plot button[data-action='next']").is_enabled():
        keys.press("Enter")
    assert page.evaluate("() => document.activeElement.dataset.action") == "reset"

    block = "article[data-exercise='loss-gradient']"
    keys.tab_to(f"{block} button.run-tests")
    with page.expect_response(lambda r: r.url.endswith("/api/grade"), timeout=120_000):
        keys.press("Enter")
    page.wait_for_function("b => document.querySelector(`${b} .results`).dataset.status", arg=block, timeout=120_000, polling=PAGE_POLL_MS)
    assert page.evaluate(FOCUSED).startswith("div verdict verdict-"), page.evaluate(FOCUSED)
    assert page.evaluate("b => document.querySelector(`${b} .results`).contains(document.activeElement)", block)

    for number in (1, 2, 3):  # the last hint turns the button into "No more hints", disabled: focus is on the hint
        keys.tab_to(f"{block} button.show-hint")
        keys.press("Enter")
        page.wait_for_function("([b, n]) => document.querySelector(`${b} .exercise-help`).dataset.hintsShown === String(n)",
                               arg=[block, number], polling=PAGE_POLL_MS)
        assert page.evaluate("() => document.activeElement.dataset.hint") == str(number), page.evaluate(FOCUSED)
    assert page.locator(f"{block} button.show-hint").is_disabled()

    for question, keys_pressed in (("rate-too-large", ["Space"]), ("one-step", ["0", ".", "9", "Enter"])):
        form = f"#section-06 form[data-question='{question}']"
        keys.tab_to(f"{form} input")
        keys.press(*keys_pressed)
        if question == "rate-too-large":
            keys.tab_to(f"{form} button[type=submit]")
            keys.press("Enter")
        page.wait_for_function("f => document.querySelector(f).dataset.correct !== undefined", arg=form, polling=PAGE_POLL_MS)
        assert page.evaluate(FOCUSED) == f"div feedback {question}", page.evaluate(FOCUSED)
    fits_and_no_errors(page, log, size)


PLOT_ROWS = """([holder, index]) => Array.from(document.querySelectorAll(`${holder} table.plot-table`)[index].querySelectorAll('tbody tr'),
    (row) => [row.getAttribute('aria-current'), ...Array.from(row.children, (cell) => cell.textContent)])"""


def plot_rows(page, holder: str, index: int = 0) -> list[list]:
    return page.evaluate(PLOT_ROWS, [holder, index])


def numbers_match(shown: list[str], expected: list[float]) -> bool:
    """Texts of four decimals (or a few significant digits) against the numbers worked out here."""
    return len(shown) == len(expected) and all(
        float(text) == pytest.approx(number, rel=1e-3, abs=6e-5) for text, number in zip(shown, expected))


@pytest.mark.parametrize("size", SIZES)
def test_every_plot_has_a_table_of_its_numbers(page_per_size, lesson_server, shared, size):
    """Item 9: the line fit, the nudges and the two moons each have a table view (a caption saying what it shows)
    holding the plot's numbers, worked out here: gradient descent on the mean squared error by hand, f(x) =
    (2x + 1)^2 nudged at 1 (slope 4(2x + 1) = 12), and the moons run of the engine's own trainer (its scores'
    signs are the sides); the row of the current step is marked."""
    from chainrule.lessons import lesson_data
    from chainrule.lessons.plot_boundary import boundary_plot
    from chainrule.number_text import format_number

    page, log = loaded(page_per_size, lesson_server, size, "gradient-descent-linear-regression")
    spec = lesson_data("gradient-descent-linear-regression")["see_it_work"]["plot"]
    xs, ys = spec["xs"], spec["ys"]
    right = next(run for run in spec["runs"] if run["name"] == "right")
    w = b = 0.0
    expected = []
    for _ in range(right["steps"] + 1):
        errors = [w * x + b - y for x, y in zip(xs, ys)]
        expected.append((w, b, sum(e * e for e in errors) / len(xs)))
        w, b = (w - right["lr"] * 2 * sum(e * x for e, x in zip(errors, xs)) / len(xs),
                b - right["lr"] * 2 * sum(errors) / len(xs))
    page.locator("#fit-plot .plot-table-view summary").click()
    assert "the line y = w x + b and its loss after each step" in page.locator("#fit-plot table.plot-table caption").text_content()
    rows = plot_rows(page, "#fit-plot")
    assert [row[1] for row in rows] == [str(k) for k in range(right["steps"] + 1)]
    for row, numbers in zip(rows, expected):
        assert numbers_match(row[2:], list(numbers)), (row, numbers)
    page.locator("#fit-plot button[data-action='next']").click()
    assert [row[0] for row in plot_rows(page, "#fit-plot")][:3] == [None, "step", None]
    fits_and_no_errors(page, log, size)

    page, log = loaded(page_per_size, lesson_server, size, "slopes-and-the-chain-rule")
    page.locator("#nudge-plot .plot-table-view summary").click()
    f = lambda x: (2 * x + 1) * (2 * x + 1)  # noqa: E731
    rows = plot_rows(page, "#nudge-plot")
    hs = [nudge["h"] for nudge in lesson_data("slopes-and-the-chain-rule")["see_it_work"]["plot"]["nudges"]]
    assert len(rows) == len(hs) == 9 and rows[0][0] == "step"
    for row, h in zip(rows, hs):
        ratio = (f(1 + h) - f(1)) / h
        assert numbers_match(row[1:], [h, f(1 + h), ratio, abs(ratio - 12)]), (row, h)

    page, log = shared(size, "a-network-learns")
    spec = lesson_data("a-network-learns")["see_it_work"]["plot"]
    run = next(r for r in boundary_plot(spec)["runs"] if r["name"] == "network")
    page.locator("#boundary-plot .plot-table-view summary").click()
    losses = plot_rows(page, "#boundary-plot", 0)
    assert [row[1:] for row in losses] == [[str(frame["step"]), format_number(frame["loss"]), format_number(frame["accuracy"])]
                                           for frame in run["frames"]]
    cells = spec.get("cells", 16) + 1
    for k in (0, 1):  # the sides as the plot opens, and after one step
        sides = [row[2:] for row in plot_rows(page, "#boundary-plot", 1)]
        signs = ["+" if score > 0 else "−" for score in run["frames"][k]["scores"]]
        assert sides == [signs[r * cells:(r + 1) * cells] for r in range(cells)], k
        assert f"Step {run['frames'][k]['step']}:" in page.locator("#boundary-plot table.plot-table caption").nth(1).text_content()
        page.locator("#boundary-plot button[data-action='next']").click()
    fits_and_no_errors(page, log, size)
