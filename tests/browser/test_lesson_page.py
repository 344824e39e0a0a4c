"""The lesson web app in a real Chromium against the real `chainrule lesson` server.

Expected numbers are the lesson spec's hand-derived ones (its sections 03, 04 and 06), never read back from
the page or the API. Every request the page makes must go to the local server. Screenshots of every section
(and a 390 px phone-width page) go to test-artifacts/screenshots/ when CHAINRULE_SCREENSHOTS=1 asks for them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lesson_pages import (
    LANGUAGES,
    LESSON,
    SPEC_PREDICTIONS,
    box_text,
    choose_language,
    click_until_disabled,
    reference,
    run_tests,
    set_editor_text,
)

from conftest import keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)

# Section 03 (spec): a = 2, b = -3, c = 10, f = -2; e = a*b = -6, d = e + c = 4, L = d*f = -8;
# dL/da = 6, dL/db = -4, dL/dc = -2, dL/df = 4, dL/de = -2, dL/dd = -2.
SECTION03_VALUES = {"a": "2", "b": "-3", "c": "10", "f": "-2", "e": "-6", "d": "4", "L": "-8"}
SECTION03_GRADS = {"a": "6", "b": "-4", "c": "-2", "f": "4", "e": "-2", "d": "-2", "L": "1"}

# Section 04 (spec): SPEC_PREDICTIONS (lesson_pages.py).
WRONG_GUESSES = {"n": 0.5, "db": 1.0}  # two deliberate mistakes; the other four are right

# Section 06 (spec): the answers, with a deliberate mistake on the tanh question (0.49 instead of 0.51).
QUIZ_ANSWERS = {
    "product-gradient": ("number", "6", True),
    "addition-node": ("choice", "unchanged", True),
    "tanh-gradient": ("number", "0.49", False),
    "reverse-order": ("choice", "every node that uses it", True),
    "sum-of-uses": ("number", "8", True),
}

# One wrong solution per exercise (Python), each a classic mistake the spec names, made from the reference.
WRONG_EDITS = {
    "neuron-grads": ("1 - out**2", "1 - out"),                                     # tanh's derivative wrong
    "local-gradients": ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),  # = not +=
    "backward-order": ("for v in reversed(order):", "for v in order:"),             # forgot the reverse
}
# Section 07: the learner's explanation, and the key ideas' checkboxes that appear once it is saved.
EXPLANATION = "Start at the output with gradient 1; every box multiplies what arrives by its local derivative."
IDEAS = "#section-07 .key-ideas input[type=checkbox]"
# The language each exercise's reference is graded in through the page: each exercise once, each language once.
GRADED_IN = {"neuron-grads": "typescript", "local-gradients": "javascript", "backward-order": "python"}


def section_top(page, number: str) -> float:
    return page.evaluate(f"document.querySelector('#section-{number}').getBoundingClientRect().top + window.scrollY")


def test_path_page_shows_the_lesson_in_place(open_page, lesson_server) -> None:
    context, page, log = open_page(lesson_server, wait_until="commit")
    try:
        page.goto(lesson_server.origin + "/")
        page.wait_for_selector("main[data-ready='true']")
        assert page.locator("h1").text_content() == "Math for CS and ML"
        titles = page.locator(".path-lesson .lesson-title").all_text_contents()
        titles = [re.sub(r"^\d+\s*", "", t).strip() for t in titles]
        here = titles.index("Backpropagation: the chain rule on a graph")
        assert titles[here - 1] == "Computational graphs"
        assert titles[here + 1] == "Gradient descent: linear regression"
        lesson = page.locator(f".path-lesson[data-lesson='{LESSON}']")
        assert lesson.locator(".lesson-title a").get_attribute("href") == f"/lessons/{LESSON}"
        assert "Your progress" in lesson.text_content()
        following = page.locator(".path-lesson").nth(here + 1)
        assert following.locator(".lesson-title a").get_attribute("href") == "/lessons/gradient-descent-linear-regression"
        assert "fit a line" in following.locator(".lesson-summary").text_content()
        keep_screenshot(page, "path.png", full_page=True)
        lesson.locator(".lesson-title a").click()
        page.wait_for_selector("main[data-ready='true']")
        assert page.url.endswith(f"/lessons/{LESSON}")
        assert log.outside(lesson_server.origin) == []
    finally:
        context.close()


def test_run_and_reset_wait_for_their_editor_then_work(open_page, lesson_server) -> None:
    """A press on Run tests while the exercise's code is still loading would do nothing and say nothing: the
    buttons are disabled until the editor has its text, then enabled. An editor drawn while another exercise
    still loads is already in the keyboard's reach (its text area's tabindex=0: at a phone's width its lines
    scroll sideways, a scrolling region axe-core wants reachable; once it was set only when every exercise had
    loaded, and an audit in between failed). Before the end-to-end walk, which saves code: a learner with no
    code of their own yet loads the starter."""
    context, page, log = open_page(lesson_server, wait_until="commit")
    held = []  # the starter's request, held until the test has looked at the buttons
    page.route("**/api/exercises/neuron-grads/starter*", lambda route: held.append(route))
    with page.expect_request(lambda request: "/api/exercises/neuron-grads/starter" in request.url):
        page.goto(f"{lesson_server.origin}/lessons/{LESSON}", wait_until="commit")
    block = page.locator("article[data-exercise='neuron-grads']")
    block.locator("button.run-tests").wait_for(state="attached")  # made before its starter is asked for
    assert block.locator("button.run-tests").is_disabled() and block.locator("button.reset-code").is_disabled()
    drawn = page.locator("article[data-exercise='local-gradients'] .cm-content")
    drawn.wait_for(state="attached")  # this exercise's starter was not held
    assert drawn.get_attribute("tabindex") == "0"
    assert len(held) == 1
    held.pop().continue_()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert block.locator("button.run-tests").is_enabled() and block.locator("button.reset-code").is_enabled()
    assert log.page_errors == []


def test_lesson_end_to_end_and_kept_on_reload(open_page, lesson_server) -> None:
    context, page, log = open_page(lesson_server, wait_until="commit")
    try:
        page.goto(f"{lesson_server.origin}/lessons/{LESSON}", wait_until="commit")
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert page.locator("#messages .message").count() == 0

        _check_sections(page)
        _play_see_it_work(page)
        _make_predictions(page)
        _grade_exercises(page)
        _answer_quiz(page)
        _explain_it_back(page)
        _check_recap(page)
        for number in ("01", "02", "03", "04", "05", "06", "07", "08"):
            keep_screenshot(page.locator(f"#section-{number}"), f"section-{number}.png")
        assert page.locator("#messages .message").count() == 0

        _check_kept_after_reload(page)

        assert log.outside(lesson_server.origin) == [], "the page called something other than the local server"
        assert log.page_errors == []
        assert any("/static/vendor/fonts/" in url and url.endswith(".woff2") for url in log.urls)
    finally:
        context.close()


def _check_sections(page) -> None:
    # The eight sections, in order, with prose and rendered math.
    numbers = page.locator("section.lesson-section").evaluate_all("nodes => nodes.map(n => n.dataset.section)")
    assert numbers == ["01", "02", "03", "04", "05", "06", "07", "08"]
    titles = page.locator("section.lesson-section h2").all_text_contents()
    assert [t.split(" ", 1)[1] for t in titles] == [
        "Why it matters", "Key parts", "See it work", "Predict", "Try it", "Check yourself", "Explain it back", "Recap"]
    assert page.locator("section.lesson-section .prose .katex").count() > 0
    assert page.locator("#section-03 .chain-formula .katex").count() == 1


def _play_see_it_work(page) -> None:
    # 03: play, pause, then the scrubber with the keyboard; values first, then gradients.
    player = page.locator("#see-it-work-player")
    total = int(player.get_attribute("data-total"))
    forward_steps = len(SECTION03_VALUES)
    assert total == forward_steps + 4  # the seed plus three interior nodes (spec: e, d, L)
    page.evaluate("document.fonts.ready.then(() => true)")
    top_before = section_top(page, "04")
    # The page's timers run on Playwright's clock (time flows as usual until the test moves it on), so that
    # "nothing moves after Pause" is seen at once: the clock is run far past any step's time.
    page.clock.install()
    player.locator("select.speed").select_option("fast")  # this test is not about the speed
    player.locator("button.play").click()
    page.wait_for_function("() => Number(document.querySelector('#see-it-work-player').dataset.position) >= 2", polling=PAGE_POLL_MS)
    player.locator("button.play").click()  # pause
    assert player.locator("button.play").get_attribute("aria-pressed") == "false"
    paused_at = int(player.get_attribute("data-position"))
    page.clock.run_for(60_000)  # a minute on the page's clock: longer than any step stays at any speed
    assert int(player.get_attribute("data-position")) == paused_at
    scrubber = player.locator("input[type=range]")
    scrubber.focus()
    page.keyboard.press("Home")
    for _ in range(forward_steps):
        page.keyboard.press("ArrowRight")
    assert int(player.get_attribute("data-position")) == forward_steps
    for label, value in SECTION03_VALUES.items():  # every value known, no gradient yet
        assert box_text(page, "see-it-work-player", label, "value") == value
        assert box_text(page, "see-it-work-player", label, "grad") == "?"
    page.keyboard.press("ArrowRight")  # the seed: L gets gradient 1 first
    assert box_text(page, "see-it-work-player", "L", "grad") == "1"
    assert box_text(page, "see-it-work-player", "a", "grad") == "?"
    assert "1" in player.locator(".caption").text_content()
    click_until_disabled(page, "#see-it-work-player button.next")
    assert int(player.get_attribute("data-position")) == total
    assert box_text(page, "see-it-work-player", "a", "grad") == "6"
    for label, grad in SECTION03_GRADS.items():
        assert box_text(page, "see-it-work-player", label, "grad") == grad
    assert section_top(page, "04") == top_before  # no layout jump while it played
    page.keyboard.press("End")


def _make_predictions(page) -> None:
    # 04: six predictions, each gating its step; two of them wrong.
    predict = page.locator("#section-04")
    predict_player = page.locator("#predict-player")
    assert predict.locator(".prediction-list li").count() == 0  # no prompt before it is reached
    assert predict.locator(".prediction-counter").text_content() == "0 of 6 made"
    made = 0
    while made < 6:
        form = predict.locator("form.prediction-form")
        if form.count() == 0:
            predict_player.locator("button.next").click()
            continue
        key = form.get_attribute("data-key")
        assert predict_player.locator("button.next").is_disabled()  # the step waits for the prediction
        if key == "n":
            assert box_text(page, "predict-player", "n", "value") == "?"
        guess = WRONG_GUESSES.get(key, SPEC_PREDICTIONS[key])
        form.locator("input").fill(str(guess))
        form.locator("input").press("Enter")
        if key in WRONG_GUESSES:  # a wrong first try: a hint and one more try; the same guess again reveals
            form.locator(".prediction-hint .hint").wait_for()
            form.locator("input").fill(str(guess))
            form.locator("input").press("Enter")
        made += 1
        page.wait_for_function(
            "k => document.querySelector('#section-04').dataset.predictionsMade === String(k)", arg=made, polling=PAGE_POLL_MS)
        assert predict.locator(".prediction-counter").text_content() == f"{made} of 6 made"
        # The verdict stays at the input until the learner moves on with Next.
        assert predict.locator(f".prediction-feedback[data-key='{key}']").is_visible()
        predict.locator("button.prediction-next").click()
        if key == "n":
            assert box_text(page, "predict-player", "n", "value") == "0.8814"
    for key in SPEC_PREDICTIONS:
        item = predict.locator(f".prediction-list li[data-key='{key}']")
        expected_class = "wrong" if key in WRONG_GUESSES else "right"
        assert expected_class in item.get_attribute("class"), (key, item.text_content())
    assert "0.8814" in predict.locator(".prediction-list li[data-key='n']").text_content()
    click_until_disabled(page, "#predict-player button.next")
    assert box_text(page, "predict-player", "w1", "grad") == "1"
    assert box_text(page, "predict-player", "w2", "grad") == "0"
    assert box_text(page, "predict-player", "o", "value") == "0.7071"


def _grade_exercises(page) -> None:
    # 05: every exercise's editor takes its reference in every language; each exercise and each language is
    # graded through the page once with the reference and passes; a wrong one shows expected vs actual.
    # (Every reference in every language passing the real grader is tests/test_grading.py's
    # test_reference_passes; here the page shows the verdict, once per exercise and once per language.)
    exercises = page.locator("article.exercise").evaluate_all("nodes => nodes.map(n => n.dataset.exercise)")
    assert sorted(exercises) == sorted(WRONG_EDITS)
    assert sorted(GRADED_IN) == sorted(exercises) and sorted(GRADED_IN.values()) == sorted(LANGUAGES)
    for exercise in exercises:
        block = page.locator(f"article[data-exercise='{exercise}']")
        for language in sorted(LANGUAGES, key=lambda lang: lang == GRADED_IN[exercise]):  # the graded one last
            choose_language(page, exercise, language)
            set_editor_text(page, exercise, reference(exercise, language))
        run_tests(page, exercise)
        results = block.locator(".results")
        assert block.get_attribute("data-language") == GRADED_IN[exercise]
        assert results.get_attribute("data-status") == "pass", results.text_content()
        tests = results.locator("li.test")
        assert tests.count() >= 3
        assert tests.evaluate_all("nodes => nodes.every(n => n.dataset.status === 'pass')"), results.text_content()
        assert re.search(r"Isolation: (strong|partial|minimal)", results.text_content())
        choose_language(page, exercise, "python")
        old, new = WRONG_EDITS[exercise]
        source = reference(exercise, "python")
        assert old in source
        set_editor_text(page, exercise, source.replace(old, new))
        run_tests(page, exercise)
        results = block.locator(".results")
        assert results.get_attribute("data-status") == "fail", results.text_content()
        failed = results.locator("li.test[data-status='fail']")
        assert failed.count() >= 1
        expected = failed.first.locator("td.expected").text_content()
        actual = failed.first.locator("td.actual").text_content()
        assert re.search(r"\d", expected) and re.search(r"\d", actual) and expected != actual
    # The last language shown per exercise is Python with the wrong code; the TypeScript reference is kept too.


def _answer_quiz(page) -> None:
    # 06: five questions, immediate feedback with the reason and the review note.
    quiz = page.locator("#section-06")
    for question, (kind, answer, right) in QUIZ_ANSWERS.items():
        form = quiz.locator(f"form[data-question='{question}']")
        if kind == "number":
            form.locator("input").fill(answer)
            form.locator("input").press("Enter")
        else:
            form.locator("label", has_text=answer).click()
            form.locator("button[type=submit]").click()
        page.wait_for_function(
            "q => document.querySelector(`#section-06 form[data-question='${q}']`).dataset.correct !== undefined",
            arg=question, polling=PAGE_POLL_MS)
        assert form.get_attribute("data-correct") == ("true" if right else "false"), form.text_content()
        if not right:  # a wrong first answer: a hint and one more try; the same answer again reveals
            assert form.get_attribute("data-retry") == "true" and form.locator(".hint").text_content().strip()
            form.locator("input").press("Enter")
            page.wait_for_function(
                "q => document.querySelector(`#section-06 form[data-question='${q}']`).dataset.retry === 'false'",
                arg=question, polling=PAGE_POLL_MS)
        feedback = form.locator(".feedback").text_content()
        assert ("Right." if right else "Not quite.") in feedback
        assert "comes back in review" in feedback.lower()
        assert form.locator(".reason").text_content().strip()
    assert "0.51" in quiz.locator("form[data-question='tanh-gradient'] .feedback").text_content()


def _explain_it_back(page) -> None:
    # 07: the explanation is saved, then the key ideas appear and two are ticked.
    page.locator("#explanation-text").fill(EXPLANATION)
    with page.expect_response(lambda r: r.url.endswith("/explanation") and r.request.method == "PUT") as saved:
        page.locator("#section-07 button[type=submit]").click()
    assert saved.value.status == 200
    ideas = page.locator(IDEAS)
    assert ideas.count() == 5
    for index in (0, 1):
        with page.expect_response(lambda r: r.url.endswith("/explanation")):
            ideas.nth(index).check()


def _check_recap(page) -> None:
    # 08: recap, the way back and the next lesson, a link.
    recap = page.locator("#section-08")
    assert recap.locator("a.back-to-path").get_attribute("href") == "/"
    following = recap.locator(".next-lesson")
    assert "Gradient descent: linear regression" in following.text_content()
    assert following.locator("a").get_attribute("href") == "/lessons/gradient-descent-linear-regression"


def _check_kept_after_reload(page) -> None:
    # Reload: everything is kept.
    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    predict, quiz = page.locator("#section-04"), page.locator("#section-06")
    ideas = page.locator(IDEAS)
    assert predict.locator(".prediction-counter").text_content() == "6 of 6 made"
    for key in SPEC_PREDICTIONS:
        expected_class = "wrong" if key in WRONG_GUESSES else "right"
        assert expected_class in predict.locator(f".prediction-list li[data-key='{key}']").get_attribute("class")
    for exercise, (old, new) in WRONG_EDITS.items():
        text = page.evaluate("id => window.chainruleEditors[id].getText()", exercise)
        assert text == reference(exercise, "python").replace(old, new)
        assert page.locator(f"article[data-exercise='{exercise}'] .results").get_attribute("data-status") == "fail"
    choose_language(page, "neuron-grads", "typescript")
    assert page.evaluate("id => window.chainruleEditors[id].getText()", "neuron-grads") == reference("neuron-grads", "typescript")
    for question, (_, _, right) in QUIZ_ANSWERS.items():
        form = quiz.locator(f"form[data-question='{question}']")
        assert form.get_attribute("data-correct") == ("true" if right else "false")
    assert page.locator("#explanation-text").input_value() == EXPLANATION
    assert [ideas.nth(i).is_checked() for i in range(5)] == [True, True, False, False, False]


def test_phone_width_no_sideways_scroll_no_layout_jump(open_page, lesson_server) -> None:
    context, page, log = open_page(lesson_server, width=390, height=844, wait_until="commit")
    try:
        page.goto(f"{lesson_server.origin}/lessons/{LESSON}")
        page.wait_for_selector("main[data-ready='true']")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # No layout jump at this width either: stepping through every caption leaves section 04 in place.
        page.evaluate("document.fonts.ready.then(() => true)")  # KaTeX fonts arriving late reflow the prose
        top_before = section_top(page, "04")
        page.locator("#see-it-work-player input[type=range]").focus()
        tops = set()
        for _ in range(int(page.locator("#see-it-work-player").get_attribute("data-total"))):
            page.keyboard.press("ArrowRight")
            tops.add(section_top(page, "04"))
        assert tops == {top_before}
        page.keyboard.press("Home")
        keep_screenshot(page, "phone-390-lesson.png", full_page=True)
        assert log.outside(lesson_server.origin) == []
    finally:
        context.close()


def test_api_error_is_shown_then_reset_and_typing_are_kept(open_page, lesson_server) -> None:
    """A body over the server's limit gets 413 and the page says so; reset restores the starter code;
    typed code is saved after a short pause (no run needed) and is back after a reload."""
    context, page, log = open_page(lesson_server, wait_until="commit")
    try:
        page.goto(f"{lesson_server.origin}/lessons/{LESSON}")
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert page.locator("#messages").is_hidden()
        from chainrule.web.security import DEFAULT_MAX_BODY

        # Python comments a little over the server's body limit, in lines of 100 characters: few lines, so the
        # editor takes the text in a moment (40,000 short lines took it seconds).
        line = "# " + "padding " * 12 + "\n"
        huge = line * (DEFAULT_MAX_BODY // len(line) + 100)
        assert DEFAULT_MAX_BODY < len(huge) < DEFAULT_MAX_BODY + 20_000
        page.evaluate("text => window.chainruleEditors['neuron-grads'].setText(text)", huge)
        page.locator("article[data-exercise='neuron-grads'] button.run-tests").click()
        message = page.locator("#messages .message", has_text="run the tests")
        message.wait_for()
        assert message.is_visible()
        assert "HTTP 413" in message.text_content() and "too large" in message.text_content()
        status = page.locator("article[data-exercise='neuron-grads'] .run-status").text_content()
        assert "did not run" in status
        dismiss = page.locator("#messages button.dismiss")
        while dismiss.count():  # real buttons that clear the area
            dismiss.first.click()
        assert page.locator("#messages").is_hidden()

        # Reset brings back the starter code.
        from chainrule.grading import starter_source

        page.locator("article[data-exercise='neuron-grads'] button.reset-code").click()
        page.wait_for_function(
            "text => window.chainruleEditors['neuron-grads'].getText() === text", arg=starter_source("neuron-grads", "python"), polling=PAGE_POLL_MS)

        # Typing (no run) is saved after a short pause, and is there again after a reload.
        choose_language(page, "neuron-grads", "javascript")
        page.locator("[data-editor='neuron-grads'] .cm-content").click()
        page.keyboard.press("Control+End")
        def is_typing_saved(response) -> bool:
            body = response.request.post_data or ""
            return response.url.endswith("/api/progress/code") and "typed by the keyboard test" in body

        with page.expect_response(is_typing_saved) as saved:
            page.keyboard.type("// typed by the keyboard test")
        assert saved.value.status == 200
        typed = page.evaluate("() => window.chainruleEditors['neuron-grads'].getText()")
        assert typed.endswith("// typed by the keyboard test")
        page.reload()
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        choose_language(page, "neuron-grads", "javascript")
        assert page.evaluate("() => window.chainruleEditors['neuron-grads'].getText()") == typed
    finally:
        context.close()


def test_review_page_asks_due_questions_and_undoes(open_page, due_review_server) -> None:
    """The question the module's server has due (answered ten days ago) is asked with fresh numbers, and undone. The
    keyboard test shares the server: its one prediction is not asked in review for days, and this test makes no
    prediction, so neither reads what the other writes, in either order."""
    server = due_review_server
    try:
        context, page, log = open_page(server, wait_until="commit")
        page.goto(server.origin + "/review")
        page.wait_for_selector("main[data-ready='true']")
        assert page.get_attribute("main", "data-due") == "1"
        form = page.locator("#review-list form[data-question='product-gradient']")
        prompt = form.locator(".question-prompt").text_content()
        # A review asks with fresh numbers: a's gradient is b times the gradient at e (by hand).
        a, b, upstream = (float(x) for x in re.search(
            r"a = (-?\d+) and b = (-?\d+)\. .* gradient of (-?\d+)\.", prompt).groups())
        form.locator("input").fill(str(b * upstream))
        form.locator("input").press("Enter")
        page.wait_for_function("() => document.querySelector('#review-list form').dataset.correct !== undefined", polling=PAGE_POLL_MS)
        assert form.get_attribute("data-correct") == "true"
        assert "comes back in review" in form.locator(".feedback").text_content().lower()
        keep_screenshot(page, "review.png", full_page=True)
        page.locator("#undo-review").click()
        page.wait_for_function("() => document.querySelector('#undo-status').textContent.startsWith('Undone')", polling=PAGE_POLL_MS)
        page.wait_for_selector("#review-list form[data-question='product-gradient']:not([data-correct])")
        assert log.outside(server.origin) == []
    finally:
        context.close()


def test_keyboard_alone(open_page, due_review_server) -> None:
    """Buttons, the scrubber and a prediction work from the keyboard, with a visible focus outline."""
    lesson_server = due_review_server  # a store of the module's own: no predictions made yet
    context, page, log = open_page(lesson_server, wait_until="commit")
    page.goto(f"{lesson_server.origin}/lessons/{LESSON}")
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    player = page.locator("#see-it-work-player")
    page.keyboard.press("Tab")  # the first Tab reaches the skip link
    assert page.evaluate("document.activeElement.className") == "skip-link"
    player.locator("button.next").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Space")
    assert player.get_attribute("data-position") == "2"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Shift+Tab")  # to Play
    page.keyboard.press("Shift+Tab")  # to Previous
    page.keyboard.press("Enter")
    assert player.get_attribute("data-position") == "1"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # Previous -> Play -> Next -> speed
    assert page.evaluate("document.activeElement.className") == "speed"
    page.keyboard.press("Tab")  # -> scrubber
    assert page.evaluate("document.activeElement.type") == "range"
    page.keyboard.press("End")
    assert player.get_attribute("data-position") == player.get_attribute("data-total")

    # Section 04 from the keyboard: step with Enter until the first prediction box takes the focus.
    predict_player = page.locator("#predict-player")
    predict_player.locator("button.next").focus()
    for _ in range(50):
        if page.evaluate("document.activeElement.closest('form.prediction-form') !== null"):
            break
        page.keyboard.press("Enter")
    key = page.evaluate("document.activeElement.closest('form.prediction-form').dataset.key")
    # Not a number: the form says how to type one (no example numbers, they could be answers).
    from chainrule.lessons.checking import NUMBER_HELP

    page.keyboard.type("1.2.3")
    page.keyboard.press("Enter")
    problem = page.locator("form.prediction-form .field-error")
    problem.wait_for()  # the server reads what was typed and says it at the field
    assert problem.text_content() == NUMBER_HELP and not any(c.isdigit() for c in NUMBER_HELP)
    assert page.locator(f"#section-04 .prediction-list li[data-key='{key}'].made").count() == 0
    # The answer typed with a decimal comma, which the server accepts too.
    page.keyboard.press("Control+A")
    page.keyboard.type(str(SPEC_PREDICTIONS[key]).replace(".", ","))
    page.keyboard.press("Enter")
    item = page.locator(f"#section-04 .prediction-list li[data-key='{key}']")
    item.locator("xpath=self::*[contains(@class, 'right')]").wait_for()
    assert log.outside(lesson_server.origin) == []


def test_store_problem_is_shown_and_the_lesson_still_works(open_page, server_factory, tmp_path: Path) -> None:
    """With an unusable data dir the API answers 503; the page says so and the lesson still plays."""
    not_a_directory = tmp_path / "progress-file"
    not_a_directory.write_text("this is a file, so the progress store cannot live here")
    server = server_factory(not_a_directory)
    context, page, log = open_page(server, wait_until="commit")
    page.goto(f"{server.origin}/lessons/{LESSON}")
    page.wait_for_selector("main[data-ready='true']")
    message = page.locator("#messages .message", has_text="load your progress")
    message.wait_for()
    assert "HTTP 503" in message.text_content()
    player = page.locator("#see-it-work-player")
    player.locator("input[type=range]").focus()
    page.keyboard.press("End")
    assert box_text(page, "see-it-work-player", "a", "grad") == "6"
    predict_player = page.locator("#predict-player")
    while page.locator("form.prediction-form").count() == 0:
        predict_player.locator("button.next").click()
    page.locator("form.prediction-form input").fill("1")
    page.locator("form.prediction-form input").press("Enter")
    page.locator("#messages .message", has_text="save your prediction").wait_for()
    assert "HTTP 503" in page.locator("#messages .message", has_text="save your prediction").text_content()
    assert page.locator("#section-04 .prediction-counter").text_content() == "0 of 6 made"
    assert log.outside(server.origin) == []
