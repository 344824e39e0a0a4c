"""The lesson's step player and editor controls, at desktop (1280 px) and phone (390 px) width, in a real
Chromium against the real server: play speeds, the chain rule's active term at each step, captions that
write multiplication as ×, the glyphs the page draws, the remembered language and the save status.
"""

from __future__ import annotations

import re

import pytest
from lesson_pages import LESSONS, SIZES, lesson

from conftest import keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------- speed and the formula's term


@pytest.mark.parametrize("size", SIZES)
def test_play_speed_and_the_formula_term_of_each_step(page_per_size, lesson_server, size) -> None:
    context, page, log = page_per_size(lesson_server, size)
    lesson(page, lesson_server, complete=False)
    player = page.locator("#see-it-work-player")
    speed = player.locator("select.speed")
    assert speed.input_value() == "normal"
    assert speed.locator("option").all_text_contents() == ["Slow", "Normal", "Fast"]
    speed.select_option("fast")
    player.locator("button.play").click()
    page.wait_for_function("() => Number(document.querySelector('#see-it-work-player').dataset.position) >= 2", polling=PAGE_POLL_MS)
    player.locator("button.play").click()
    # The chain rule along a's path: dL/da = dL/dd * dd/de * de/da; the backward step at L computes
    # dL/dd, the one at d computes dd/de, the one at e computes de/da; the seed computes none of them.
    formula = page.locator("#section-03 .chain-formula")
    player.locator("input[type=range]").focus()
    page.keyboard.press("Home")
    for _ in range(7):  # the seven forward steps
        page.keyboard.press("ArrowRight")
    seen = []
    for _ in range(4):
        page.keyboard.press("ArrowRight")
        seen.append(formula.get_attribute("data-active-term"))
        assert formula.locator(".term-active").count() == (1 if seen[-1] else 0)
        if seen[-1] == "d/e":
            keep_screenshot(page.locator("#section-03"), f"lesson-formula-term-{size}.png")
    assert seen == ["", "L/d", "d/e", "e/a"]
    assert log.page_errors == []


# ---------------------------------------------------------------- multiplication in prose is ×, never "x"


SPOKEN_TIMES = re.compile(r"(?:\d|\)|\b[a-z]) x (?:-?\d|\()")  # "2 x -2", "x x (gradient"


@pytest.mark.parametrize("size", SIZES)
def test_captions_write_multiplication_as_times(page_per_size, lesson_server, size) -> None:
    context, page, log = page_per_size(lesson_server, size)
    for lesson_id in LESSONS:
        lesson(page, lesson_server, lesson_id, complete=False)
        captions = page.evaluate("""() => {
            const player = window.chainruleSeeItWork, seen = [];
            for (let i = 1; i <= player.total; i += 1) {
              player.goTo(i); seen.push(document.querySelector('#see-it-work-player .caption-text').textContent);
            }
            return seen; }""")
        backward = [caption for caption in captions if "receives" in caption]
        assert backward, lesson_id
        assert all("×" in caption for caption in backward), backward
        assert [c for c in captions if SPOKEN_TIMES.search(c)] == []
    assert not log.page_errors


# ---------------------------------------------------------------- speeds, glyphs, remembered choices


@pytest.mark.parametrize("size", SIZES)
def test_speeds_glyphs_language_and_saved_status(page_per_size, lesson_server, size) -> None:
    context, page, log = page_per_size(lesson_server, size)
    lesson(page, lesson_server)
    # A short caption: "Fast" is faster than "Normal", which is faster than "Slow".
    durations = page.evaluate("""() => import('/static/js/graph.js').then(m =>
        ['slow', 'normal', 'fast'].map(speed => m.stepDuration({caption: 'a = 2 is an input.'}, speed)))""")
    assert durations[0] > durations[1] > durations[2]
    # The pause sign is drawn, not a character some fonts lack (U+23F8).
    play = page.locator("#see-it-work-player button.play")
    play.click()
    assert play.locator(".pause-icon").count() == 1 and "\u23f8" not in play.inner_text()
    play.click()
    assert "\u23f8" not in page.locator("body").inner_text()
    # The language chosen comes back on reload; "Saved (Python)" does not stay beside the JavaScript text.
    article = page.locator("article.exercise").first
    exercise = article.get_attribute("data-exercise")
    editor = article.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# python words\n")
    article.locator(".save-status", has_text="Saved (Python)").wait_for()
    article.locator("label", has_text="JavaScript").click()
    page.wait_for_function("id => document.querySelector(`article[data-exercise='${id}']`).dataset.language === 'javascript'", arg=exercise, polling=PAGE_POLL_MS)
    assert "Python" not in article.locator(".save-status").inner_text()
    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    article = page.locator(f"article[data-exercise='{exercise}']")
    assert article.get_attribute("data-language") == "javascript"
    assert article.locator("input[value='javascript']").is_checked()
    assert "# python words" not in article.locator(".cm-content").inner_text()
    # Code keeps its indentation on a phone: the model solution does not wrap its lines.
    assert page.evaluate("() => getComputedStyle(document.querySelector('pre.solution-source')).whiteSpace") == "pre"
    assert not log.page_errors
