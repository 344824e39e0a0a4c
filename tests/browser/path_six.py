"""The five lessons that make the path eight, taken end to end in a real Chromium at desktop width, each in a
test file of its own so that workers walk them side by side (test_path_six_*.py): one server and one page per
lesson; on each finished lesson and on the path page, what differs by size (axe-core, no sideways scrolling, the
picture) is checked at phone width too, on the state the walk reached. The walk's steps at 390 px are the keyboard
walk's (tests/browser/test_keyboard_and_screen_reader_phone_beyond.py).

Predictions and quiz answers are worked out by hand here, never read back from the page; exercises are pasted
from the reference solutions and graded through the page (one language per exercise, taking turns so that each
lesson grades one in TypeScript: the in-process tests grade every language). Along the way: the note a lesson
shows when opened before the lessons it builds on, each lesson's animated plot, axe-core on each finished
lesson, and the path page's "builds on" and "you are here".
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from lesson_pages import LANGUAGES, choose_language, click, click_until_disabled, reference, run_tests, set_editor_text
from path_walk import answer_quiz, make_predictions

from conftest import WIDTHS, axe_violations, keep_screenshot, new_page
from polling import PAGE_POLL_MS

SLOPES, NETWORK, MODES = "slopes-and-the-chain-rule", "a-network-learns", "forward-and-reverse-mode"
GRADIENT, SOFTMAX = "many-inputs-and-the-gradient", "softmax-and-cross-entropy"
FIVE = (NETWORK, SOFTMAX, SLOPES, GRADIENT, MODES)
# The lessons finished before each is walked, as a learner who skips ahead might take them: the network lesson
# first, before gradient descent is done; softmax after the network lesson; the gradient and the two modes after
# the slopes. Each file finishes them in the store before its server starts (finish_in_store).
FINISHED_BEFORE = {NETWORK: (), SOFTMAX: (NETWORK,), SLOPES: (), GRADIENT: (SLOPES,), MODES: (SLOPES,)}
# Where each lesson's turn of languages starts: its exercises (2, 3, 2) take turns, and each lesson has one in
# TypeScript.
TURN = {NETWORK: 1, SOFTMAX: 0, SLOPES: 0, GRADIENT: 0, MODES: 2}

TANH_HALF = math.tanh(0.5)
# Softmax of the scores (0, 1, -1), class 0 right: s = e^0 + e^1 + e^-1, p0 = 1 / s, dL/dp0 = -1 / p0, dL/dz0 = p0 - 1.
SOFTMAX_SUM = 1 + math.e + math.exp(-1)
PREDICTIONS = {  # section 04, by hand
    SLOPES: {"s": 4.0, "u": 5.0, "y": 25.0, "du": 10.0, "ds": 10.0, "dx": 40.0},
    # u = x y, v = x + y, z = u v at (2, 3): dz/du = v, and x's two paths v × y + u × 1.
    GRADIENT: {"u": 6.0, "v": 5.0, "z": 30.0, "du": 5.0, "dx": 5.0 * 3 + 6.0},
    SOFTMAX: {"s": SOFTMAX_SUM, "p0": 1 / SOFTMAX_SUM, "dp0": -SOFTMAX_SUM, "dz0": 1 / SOFTMAX_SUM - 1},
    NETWORK: {"s": 0.125, "ys": -0.125, "L": 1.125, "dys": -1.0, "ds": 1.0, "dw1": -0.5},
    MODES: {"o": TANH_HALF, "slope": 1 - TANH_HALF ** 2, "od": 1 - TANH_HALF ** 2, "xod": 0.5 * (1 - TANH_HALF ** 2),
            "yd": TANH_HALF + 0.5 * (1 - TANH_HALF ** 2)},
}
QUIZ_NUMBERS = {  # the numeric questions' keys, by hand
    "nudge-estimate": "6.1", "power-rule": "6", "chain-rule": "12",
    "hinge-loss": "0.75", "hinge-gradient": "0.5", "parameter-count": "33",
    "product-tangent": "-0.5", "tanh-tangent": f"{(1 - TANH_HALF ** 2) * 2:.4f}", "sweep-count": "5",
    "tangent-from-gradient": "-2",
    "partial-in-x": "-12", "partial-in-y": "4", "two-paths": "5",  # 2 × 2 × 3 × (-1); 2 × 2 × 1; (2 + 1) × 1 + 2 × 1
    # p - y at the right class and at a wrong one; -log(e^2 / (e^2 + e^0)) = log(1 + e^-2)
    "gradient-right-class": "-0.3", "gradient-other-class": "0.2", "loss-of-a-probability": f"{math.log(1 + math.exp(-2)):.4f}",
}
# Section 03: the graph's output after the forward pass, by hand: (2 × 1 + 1)^2; max(0, 1 - 1 × (-0.25));
# 0.5 × tanh(2 × 0.5); -log(e^2 / (e^2 + e^1 + e^-1)).
OUTPUT = {SLOPES: ("y", "9"), GRADIENT: ("f", "4"), NETWORK: ("L", "1.25"),
          SOFTMAX: ("L", f"{-math.log(math.exp(2) / (math.exp(2) + math.e + math.exp(-1))):.4f}".rstrip("0")), MODES: ("y", f"{0.5 * math.tanh(1.0):.4f}")}
NEXT = {SLOPES: f"/lessons/{GRADIENT}", GRADIENT: "/lessons/computational-graphs", NETWORK: f"/lessons/{SOFTMAX}", SOFTMAX: f"/lessons/{MODES}",
        MODES: "/lessons/build-the-engine"}
# What each lesson says it builds on when it is opened: (the unfinished lessons it names, or none).
NOTE = {NETWORK: ["Gradient descent: linear regression"], SOFTMAX: None, SLOPES: None, GRADIENT: None, MODES: ["Backpropagation: the chain rule on a graph"]}


def caption(page, holder: str) -> str:
    return page.locator(f"{holder} .fit-caption").text_content()


def step_to_end(page, holder: str) -> None:
    click_until_disabled(page, f"{holder} button[data-action='next']")


def play_nudges(page) -> None:
    """Every nudge in turn: the first estimate is (f(2) - f(1)) / 1 = 25 - 9 = 16, the slope 12; the error
    falls, then rises again for the tiniest h."""
    assert "h = 1: (f(1 + h) - f(1)) / h = 16. The slope is 12, so this estimate is off by 4." in caption(page, "#nudge-plot")
    errors = []
    next_step = page.locator("#nudge-plot button[data-action='next']")
    while not next_step.is_disabled():
        click(page, "#nudge-plot button[data-action='next']")
        errors.append(float(caption(page, "#nudge-plot").rsplit("off by ", 1)[1].rstrip(".")))
    assert len(errors) == 8 and errors[0] == pytest.approx(2.0)  # h = 0.5: 12 + 4 × 0.5
    assert min(errors) < 1e-6 and errors[-1] > 1e-3  # too small an h: rounding takes over
    assert page.locator("#nudge-plot line.nudge-secant").get_attribute("x2")


def play_boundary(page) -> None:
    """The too-large rate ends stuck on one side; the network, played then stepped, separates the moons."""
    plot = page.locator("#boundary-plot")
    page.locator("#boundary-run-large").check()
    step_to_end(page, "#boundary-plot")
    assert "step 20 of 20: loss = 1, 50% of the points on their side." in caption(page, "#boundary-plot")
    assert plot.locator("svg.boundary-plane").get_attribute("data-sides") == "plus"  # every region on one side
    page.locator("#boundary-run-network").check()
    plot.locator("button[data-action='play']").click()
    page.wait_for_function("() => Number(document.querySelector('#boundary-plot').dataset.step) >= 3", timeout=30_000, polling=PAGE_POLL_MS)
    step_to_end(page, "#boundary-plot")
    assert "step 80 of 80" in caption(page, "#boundary-plot") and "100% of the points" in caption(page, "#boundary-plot")
    assert plot.locator("path.boundary-line").get_attribute("d").startswith("M")
    assert plot.locator("svg.boundary-plane").get_attribute("data-sides") == "both"
    assert plot.locator("image.boundary-shading").get_attribute("href").startswith("data:image/png")


def move_on_the_contours(page) -> None:
    """The point moves over the lattice by its buttons: at (1, 1) the gradient of x^2 + 3y^2 is (2x, 6y) = (2, 6),
    its length the square root of 40 (by hand); the arrow climbs three times as steeply as it goes across; at
    the bottom the gradient is 0 and no arrow is drawn; at the edge the button that would leave is off and the
    focus stays on a move that can be made."""
    plot = page.locator("#contour-plot")
    says = caption(page, "#contour-plot")
    assert f"At (x, y) = (1, 1): f = 4, ∂f/∂x = 2, ∂f/∂y = 6. The gradient (2, 6) has length {math.sqrt(40):.4f}" in says
    arrow = {key: float(plot.locator("line.contour-arrow").get_attribute(key)) for key in ("x1", "y1", "x2", "y2")}
    assert arrow["x2"] > arrow["x1"] and (arrow["y1"] - arrow["y2"]) / (arrow["x2"] - arrow["x1"]) == pytest.approx(3)
    left, down = plot.locator("button[data-move='ArrowLeft']"), plot.locator("button[data-move='ArrowDown']")
    left.click()
    left.click()
    assert plot.get_attribute("data-point") == "0,1" and "∂f/∂x = 0, ∂f/∂y = 6" in caption(page, "#contour-plot")
    down.click()
    down.click()
    assert "the gradient is (0, 0)" in caption(page, "#contour-plot")
    assert plot.locator("line.contour-arrow").get_attribute("visibility") == "hidden"
    for _ in range(4):
        left.click()
    assert plot.get_attribute("data-point") == "-2,0" and left.is_disabled()
    assert page.evaluate("document.activeElement.dataset.move") == "ArrowRight"
    assert "∂f/∂x = -4, ∂f/∂y = 0" in caption(page, "#contour-plot")
    plot.locator("details.plot-table-view summary").click()
    current = plot.locator(".plot-table tr[aria-current='step']")
    assert current.locator("th").text_content() == "-2" and current.locator("td").all_text_contents() == ["4", "-4", "0", "4"]


def gradients_are_p_minus_y(page) -> None:
    """No plot: at the graph's end each score's gradient is its softmax probability minus the target (class 0),
    worked out by hand for the scores (2, 1, -1)."""
    exps = [math.exp(2), math.e, math.exp(-1)]
    shortcut = [e / sum(exps) - (k == 0) for k, e in enumerate(exps)]
    player = page.locator("#see-it-work-player")
    shown = [float(player.locator(f"g.node[data-label='z{k}'] .node-grad").text_content()) for k in range(3)]
    assert shown == pytest.approx(shortcut, abs=1e-4)


def cells(page) -> list[str]:
    return page.locator("#sweep-plot td.sweep-cell").all_text_contents()


def play_sweeps(page) -> None:
    """Six forward sweeps fill the loss-like function's row column by column; one reverse sweep fills it at
    once, with the same numbers; the one-input function takes six reverse sweeps and 37 steps (by hand)."""
    tally = page.locator("#sweep-plot .sweep-tally")
    step_to_end(page, "#sweep-plot")
    assert tally.text_content() == "Sweeps so far: 6 of 6. Steps so far: 48."
    forward = cells(page)
    assert len(forward) == 6 and "·" not in forward
    page.locator("#sweep-mode-reverse").check()
    assert "·" in cells(page)
    page.locator("#sweep-plot button[data-action='next']").click()
    assert cells(page) == forward and tally.text_content() == "Sweeps so far: 1 of 1. Steps so far: 8."
    page.locator("#sweep-function-spread").check()
    step_to_end(page, "#sweep-plot")
    assert tally.text_content() == "Sweeps so far: 6 of 6. Steps so far: 37."
    assert "filled the row of y6" in caption(page, "#sweep-plot")


PLOTS = {SOFTMAX: gradients_are_p_minus_y, SLOPES: play_nudges, GRADIENT: move_on_the_contours, NETWORK: play_boundary, MODES: play_sweeps}


def do_exercises(page, turn: int) -> None:
    exercises = page.locator("article.exercise").evaluate_all("nodes => nodes.map(n => n.dataset.exercise)")
    assert len(exercises) >= 2
    for number, exercise in enumerate(exercises):
        block = page.locator(f"article[data-exercise='{exercise}']")
        language = LANGUAGES[(turn + number) % 3]
        choose_language(page, exercise, language)
        set_editor_text(page, exercise, reference(exercise, language))
        run_tests(page, exercise)
        assert block.locator(".results").get_attribute("data-status") == "pass", block.text_content()


def at_both_widths(page, check) -> None:
    """check(size, width) at phone width then back at desktop width, on the state the page is in."""
    for size in ("phone", "desktop"):
        width, height = WIDTHS[size]
        page.set_viewport_size({"width": width, "height": height})
        check(size, width)




def finish_in_store(data_dir: Path, *lesson_ids: str) -> None:
    """Finish lessons in the data folder a server is then started on, as their walk would: every prediction made
    right (the hand-worked values), every exercise passed by a run of the reference solution graded here, every
    quiz question answered right, the explanation written (progress/finished.py's rule)."""
    from chainrule.lessons.loader import lesson_shape
    from chainrule.progress import open_store

    store = open_store(data_dir=data_dir)
    try:
        for lesson_id in lesson_ids:
            shape = lesson_shape(lesson_id)
            assert sorted(shape["predictions"]) == sorted(PREDICTIONS[lesson_id]), lesson_id
            for key in shape["predictions"]:
                store.save_prediction(lesson_id, key, PREDICTIONS[lesson_id][key], True)
            for exercise in shape["exercises"]:
                store.record_submission(exercise, "python", reference(exercise, "python"), {"status": "pass"})
            for question in shape["quiz"]:
                store.answer_question(lesson_id, question, QUIZ_NUMBERS.get(question, "0"), True)
            store.save_explanation(lesson_id, "Each step multiplies the slopes it meets, in order.", [])
    finally:
        store.close()


def finished_server(server_factory, data_dir: Path, *lesson_ids: str):
    """A server on a data folder where `lesson_ids` are finished already (finish_in_store)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    finish_in_store(data_dir, *lesson_ids)
    return server_factory(data_dir)


def walk_lesson(browser, server_factory, tmp_path: Path, lesson_id: str) -> None:
    """One of the five lessons end to end at desktop width, on a server where the lessons before it in the learner's
    order are finished (FINISHED_BEFORE); then the path page shows it finished."""
    server = finished_server(server_factory, tmp_path / "data", *FINISHED_BEFORE[lesson_id])
    width, height = WIDTHS["desktop"]
    context, page, log = new_page(browser, server, width=width, height=height, bypass_csp=True, wait_until="commit")
    try:
        page.goto(f"{server.origin}/lessons/{lesson_id}")
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert page.locator("#messages .message").count() == 0
        assert page.locator("section.lesson-section").count() == 8

        # Opened before the lessons it builds on are finished: a note says what it assumes.
        note = page.locator("#assumes-note")
        if NOTE[lesson_id] is None:
            assert note.count() == 0
        else:
            assert note.locator("a").all_text_contents()[:-1] == NOTE[lesson_id]
            assert "It assumes you know" in note.text_content()

        # 03: the graph jumps to its end (its slider, by keyboard), then the plot plays.
        player = page.locator("#see-it-work-player")
        player.locator("input[type=range]").focus()
        page.keyboard.press("End")
        assert player.locator("button.next").is_disabled()
        label, value = OUTPUT[lesson_id]
        assert player.locator(f"g.node[data-label='{label}'] .node-value").text_content() == value
        PLOTS[lesson_id](page)

        # 04 to 07.
        make_predictions(page, PREDICTIONS[lesson_id])
        do_exercises(page, TURN[lesson_id])
        answer_quiz(page, lesson_id, QUIZ_NUMBERS)
        page.locator("#explanation-text").fill("Each step multiplies the slopes it meets, in order.")
        with page.expect_response(lambda r: r.url.endswith("/explanation") and r.request.method == "PUT") as saved:
            page.locator("#section-07 button[type=submit]").click()
        assert saved.value.status == 200

        # 08: the recap leads on; the finished lesson says so; no serious accessibility problem.
        following = page.locator("#section-08 .next-lesson a")
        assert following.get_attribute("href") == NEXT[lesson_id] if NEXT[lesson_id] else following.count() == 0
        page.wait_for_selector("main[data-finished='true']")

        def finished_lesson(size: str, width: int) -> None:  # what differs by size, on the finished lesson
            assert axe_violations(page) == [], (lesson_id, size)
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
            keep_screenshot(page.locator("#section-03"), f"lesson-{lesson_id}-03-{size}.png")

        at_both_widths(page, finished_lesson)

        # The path page shows the lesson the walk finished as finished.
        page.goto(f"{server.origin}/")
        page.wait_for_selector("main[data-ready='true']")
        entry = page.locator(f".path-lesson[data-lesson='{lesson_id}']")
        assert entry.get_attribute("data-finished") == "true"
        assert entry.locator(".lesson-progress-block").get_attribute("data-state") == "done"
        assert log.outside(server.origin) == [] and log.page_errors == []
    finally:
        context.close()


def check_the_path(browser, server_factory, tmp_path: Path) -> None:
    """The path with the five lessons finished: nine lessons in order (the capstone last:
    tests/browser/test_path_capstone.py), what each builds on (ticked once finished), where the learner stands."""
    server = finished_server(server_factory, tmp_path / "data", *FIVE)
    width, height = WIDTHS["desktop"]
    context, page, log = new_page(browser, server, width=width, height=height, bypass_csp=True, wait_until="commit")
    try:
        page.goto(f"{server.origin}/")
        page.wait_for_selector("main[data-ready='true']")
        ids = page.locator(".path-lesson").evaluate_all("nodes => nodes.map(n => n.dataset.lesson)")
        assert ids == [SLOPES, GRADIENT, "computational-graphs", "backprop", "gradient-descent-linear-regression", NETWORK, SOFTMAX,
                       MODES, "build-the-engine"]
        for lesson_id in FIVE:
            entry = page.locator(f".path-lesson[data-lesson='{lesson_id}']")
            assert entry.get_attribute("data-finished") == "true"
            assert entry.locator(".lesson-progress-block").get_attribute("data-state") == "done"
        modes = page.locator(f".path-lesson[data-lesson='{MODES}'] .lesson-builds-on")
        assert modes.locator("a").all_text_contents() == ["Slopes and the chain rule", "Backpropagation: the chain rule on a graph"]
        assert modes.locator(".builds-on-done").count() == 1 and "✓" in modes.text_content().split(",")[0]
        here = page.locator(".path-lesson[data-here='true']")
        assert here.get_attribute("data-lesson") == "computational-graphs"  # the first lesson not finished
        assert here.get_attribute("aria-current") == "step" and "you are here" in here.text_content()

        def path_page(size: str, width: int) -> None:
            assert axe_violations(page) == [], size
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling

        at_both_widths(page, path_page)
        assert log.outside(server.origin) == [] and log.page_errors == []
    finally:
        context.close()
