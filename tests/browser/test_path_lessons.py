"""The three lessons of the path taken end to end in a real Chromium at desktop width, each then reloaded at
phone width (what differs by size, on the state the walk reached), and a teacher's lesson added with
`chainrule lesson --lessons DIR`.

Predictions and quiz answers are typed from numbers worked out by hand (path_walk.py), never read back from
the page. Exercises are pasted from the reference solutions.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lesson_pages import LANGUAGES, choose_language, click, click_until_disabled, reference, run_tests, set_editor_text
from path_walk import NEXT, PREDICTIONS, answer_quiz, make_predictions, quiz_of

from conftest import WIDTHS, keep_screenshot, start_lesson_server, stop_lesson_server
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(400)

# Section 03: the output's value after the forward pass, by hand.
OUTPUT_VALUE = {"computational-graphs": ("out", "10"), "backprop": ("L", "-8"),
                "gradient-descent-linear-regression": ("L", "8.125")}
# Where each lesson's turn of languages starts: its exercises (2, 3, 2) take turns, and each lesson has one in
# TypeScript.
TURN = {"computational-graphs": 2, "backprop": 0, "gradient-descent-linear-regression": 1}


def play_fit_plot(page) -> None:
    """Section 03 of the regression lesson: the too-large rate diverges, the right one settles."""
    plot = page.locator("#fit-plot")
    page.locator("#fit-run-large").check()
    assert plot.get_attribute("data-run") == "large" and plot.get_attribute("data-step") == "0"
    losses = []
    next_step = plot.locator("button[data-action='next']")
    while not next_step.is_disabled():
        click(page, "#fit-plot button[data-action='next']")
        caption = plot.locator(".fit-caption").text_content()
        losses.append(float(caption.rsplit("loss = ", 1)[1].rstrip(".")))
    assert len(losses) == 20 and losses[-1] > 100 * losses[0]  # divergence, step after step
    page.locator("#fit-run-right").check()
    # Play moves the line by itself (a few steps are enough to see it), Next takes it to the end.
    plot.locator("button[data-action='play']").click()
    page.wait_for_function("() => Number(document.querySelector('#fit-plot').dataset.step) >= 3", timeout=30_000, polling=PAGE_POLL_MS)
    click_until_disabled(page, "#fit-plot button[data-action='next']")
    assert plot.get_attribute("data-step") == "40"
    caption = plot.locator(".fit-caption").text_content()
    assert "step 40 of 40" in caption and float(caption.rsplit("loss = ", 1)[1].rstrip(".")) < 0.05
    line = plot.locator("line.fit-line")
    assert line.get_attribute("x1") and line.get_attribute("y2")


def restored_at_phone_width(page, server, lesson_id: str, graded: dict[str, str]) -> None:
    """What differs by size, on the state the desktop walk reached: at 390 px a reload of the lesson shows each
    exercise's code and its passing run as kept (the language it was graded in), nothing scrolls sideways, and
    section 03 is pictured."""
    width, height = WIDTHS["phone"]
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{server.origin}/lessons/{lesson_id}")
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert page.locator("#messages .message").count() == 0
    for exercise, language in graded.items():
        block = page.locator(f"article[data-exercise='{exercise}']")
        choose_language(page, exercise, language)
        page.wait_for_function("id => window.chainruleEditors[id].getText().length > 0", arg=exercise, polling=PAGE_POLL_MS)
        assert page.evaluate("id => window.chainruleEditors[id].getText()", exercise) == reference(exercise, language)
        page.wait_for_function(
            "id => document.querySelector(`article[data-exercise='${id}'] .results`).dataset.status === 'pass'",
            arg=exercise, polling=PAGE_POLL_MS)
        assert "your last run" in block.locator(".result-facts").text_content()
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
    keep_screenshot(page.locator("#section-03"), f"lesson-{lesson_id}-03-phone.png")


@pytest.mark.parametrize("lesson_id", list(PREDICTIONS))
def test_a_lesson_end_to_end(open_page, server_factory, tmp_path: Path, lesson_id: str) -> None:
    """The walk at desktop width, then what differs at phone width on the state it reached (the walk's steps at
    390 px are the keyboard walk's, tests/browser/test_keyboard_and_screen_reader*.py)."""
    server = server_factory(tmp_path / "data")
    width, height = WIDTHS["desktop"]
    context, page, log = open_page(server, width=width, height=height, wait_until="commit")
    page.goto(f"{server.origin}/lessons/{lesson_id}")
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert page.locator("#messages .message").count() == 0
    assert page.locator("section.lesson-section").count() == 8

    # 03: the animation plays to its end; the output has its value.
    player = page.locator("#see-it-work-player")
    click_until_disabled(page, "#see-it-work-player button.next")
    label, value = OUTPUT_VALUE[lesson_id]
    assert player.locator(f"g.node[data-label='{label}'] .node-value").text_content() == value
    if lesson_id == "gradient-descent-linear-regression":
        play_fit_plot(page)

    # 04, 05, 06, 07.
    make_predictions(page, PREDICTIONS[lesson_id])
    exercises = page.locator("article.exercise").evaluate_all("nodes => nodes.map(n => n.dataset.exercise)")
    assert len(exercises) >= 2
    graded = {}
    for number, exercise in enumerate(exercises):
        block = page.locator(f"article[data-exercise='{exercise}']")
        # One language per exercise, taking turns from the lesson's own start so that every lesson grades one
        # in TypeScript (every reference is graded in every language in process, by tests/test_lessons_path.py
        # and tests/test_grading.py): the page's grading of each language is what this test shows.
        language = graded[exercise] = LANGUAGES[(number + TURN[lesson_id]) % 3]
        choose_language(page, exercise, language)
        set_editor_text(page, exercise, reference(exercise, language))
        run_tests(page, exercise)
        assert block.locator(".results").get_attribute("data-status") == "pass", block.text_content()
    answer_quiz(page, lesson_id)
    page.locator("#explanation-text").fill("Each box waits for its inputs; the values are kept for later.")
    with page.expect_response(lambda r: r.url.endswith("/explanation") and r.request.method == "PUT") as saved:
        page.locator("#section-07 button[type=submit]").click()
    assert saved.value.status == 200

    # 08: the recap leads on to the next lesson.
    following = page.locator("#section-08 .next-lesson a")
    if NEXT[lesson_id]:
        assert following.get_attribute("href") == NEXT[lesson_id]
    else:
        assert following.count() == 0
    keep_screenshot(page.locator("#section-03"), f"lesson-{lesson_id}-03-desktop.png")

    restored_at_phone_width(page, server, lesson_id, graded)

    # The path page shows the progress made in this lesson.
    page.goto(f"{server.origin}/")
    page.wait_for_selector("main[data-ready='true']")
    entry = page.locator(f".path-lesson[data-lesson='{lesson_id}']")
    progress = entry.locator(".lesson-progress").text_content()
    predictions, questions = len(PREDICTIONS[lesson_id]), len(quiz_of(lesson_id))
    assert f"{predictions} of {predictions} predictions made" in progress
    assert f"{len(exercises)} of {len(exercises)} exercises passed" in progress
    assert f"{questions} of {questions} questions answered" in progress and "explained back" in progress
    assert entry.locator(".lesson-progress-block").get_attribute("data-state") == "done"
    assert entry.locator("progress").get_attribute("value") == entry.locator("progress").get_attribute("max")
    others = [key for key in PREDICTIONS if key != lesson_id]
    for other in others:
        assert "not started yet" in page.locator(f".path-lesson[data-lesson='{other}'] .lesson-progress").text_content()
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTHS["phone"][0]
    assert log.outside(server.origin) == [] and log.page_errors == []


def test_a_scaffolded_lesson_joins_the_path_and_is_graded(open_page, tmp_path: Path) -> None:
    made = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "new", "vectors", "--title", "Vectors",
                           str(tmp_path / "mine")], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    server = start_lesson_server(tmp_path / "data", extra_args=("--lessons", str(tmp_path / "mine")))
    try:
        context, page, log = open_page(server, width=390, height=844, wait_until="commit")
        page.goto(f"{server.origin}/")
        page.wait_for_selector("main[data-ready='true']")
        ids = page.locator(".path-lesson").evaluate_all("nodes => nodes.map(n => n.dataset.lesson)")
        assert ids == ["slopes-and-the-chain-rule", "many-inputs-and-the-gradient", "computational-graphs", "backprop", "gradient-descent-linear-regression",
                       "a-network-learns", "softmax-and-cross-entropy", "forward-and-reverse-mode", "build-the-engine",
                       "vectors"]
        page.locator(".path-lesson[data-lesson='vectors'] .lesson-title a").click()
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert page.locator("h1").text_content() == "Vectors"
        block = page.locator("article[data-exercise='vectors-gradients']")
        set_editor_text(page, "vectors-gradients", (tmp_path / "mine/vectors/exercises/1-gradients/starter.py").read_text())
        run_tests(page, "vectors-gradients")
        assert block.locator(".results").get_attribute("data-status") == "fail"
        set_editor_text(page, "vectors-gradients", (tmp_path / "mine/vectors/exercises/1-gradients/solution.py").read_text())
        run_tests(page, "vectors-gradients")
        assert block.locator(".results").get_attribute("data-status") == "pass", block.text_content()
        assert "Isolation" in block.locator(".results").text_content()
        assert log.page_errors == []
    finally:
        stop_lesson_server(server.process)
