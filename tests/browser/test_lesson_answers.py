"""A learner's answers and what the page says back, at desktop (1280 px) and phone (390 px) width, in a real
Chromium against the real server: predictions spoil nothing and their feedback waits and is kept across
reloads and restarts, a wrong first answer gets a hint and one more try, a retry is practice, review answers stay on reload, and a verdict
names its exercise and shows values as the learner's code returned them.

Expected numbers are hand-derived from the lesson spec (section 04: the neuron), never read from the page.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lesson_pages import (
    LESSON,
    SIZES,
    SPEC_PREDICTIONS,
    at_each_width,
    has_number,
    in_view,
    lesson,
    open_at,
    visible_text,
)

from conftest import keep_screenshot
from polling import PAGE_POLL_MS

pytestmark = pytest.mark.timeout(300)


# ---------------------------------------------------------------- no spoilers, feedback kept


@pytest.mark.parametrize("size", SIZES)
def test_predictions_spoil_nothing_and_feedback_waits_and_is_kept(
    open_page, server_factory, tmp_path: Path, size
) -> None:
    from conftest import free_port

    port = free_port()
    server = server_factory(tmp_path, port)
    context, page, log = open_at(open_page, server, size)
    lesson(page, server)
    section = page.locator("#section-04")
    player = page.locator("#predict-player")
    assert section.locator(".prediction-list li").count() == 0
    # The answers' own numbers, checked before each prediction that they do not appear yet.
    telling = {"n": "0.8814", "o": "0.7071", "dn": "0.5"}
    made: list[str] = []
    guesses = {**SPEC_PREDICTIONS, "n": 0.3}  # n wrong on purpose
    while len(made) < len(SPEC_PREDICTIONS):
        if section.locator("form.prediction-form").count() == 0:
            player.locator("button.next").click()
            # While stepping the active box stays on screen (at a prediction, the input takes the focus).
            if player.get_attribute("data-active-node") and section.locator("form.prediction-form").count() == 0:
                active = player.get_attribute("data-active-node")
                assert in_view(page, f"#predict-player g.node[data-node-id='{active}']"), active
            continue
        key = section.locator("form.prediction-form").get_attribute("data-key")
        text = visible_text(page, "#section-04")
        for other, number in telling.items():
            if other not in made:
                assert not has_number(text, number), f"{number} ({other}) shown before it was predicted"
        listed = section.locator(".prediction-list li").evaluate_all("nodes => nodes.map(n => n.dataset.key)")
        assert listed == made + [key]  # only the prompts reached, in the order they come
        position = player.get_attribute("data-position")
        section.locator("form.prediction-form input").fill(str(guesses[key]))
        section.locator("form.prediction-form input").press("Enter")
        if key == "n":  # wrong: a hint and one more try, still without the answer; the same guess again reveals
            section.locator("form.prediction-form .prediction-hint .hint").wait_for()
            assert not has_number(visible_text(page, "#section-04"), telling["n"])
            section.locator("form.prediction-form input").fill(str(guesses[key]))
            section.locator("form.prediction-form input").press("Enter")
        feedback = section.locator(f".prediction-panel .prediction-feedback[data-key='{key}']")
        feedback.wait_for()
        made.append(key)
        assert ("Not quite." if key == "n" else "Right.") in feedback.text_content()
        assert feedback.locator(".reason").text_content().strip()
        if key == "n":
            assert "0.8814" in feedback.text_content()
        assert player.get_attribute("data-position") == position  # not moved on by itself
        assert in_view(page, f"#section-04 .prediction-feedback[data-key='{key}']")
        if len(made) == 1:
            keep_screenshot(page.locator("#section-04"), f"lesson-prediction-feedback-{size}.png")
        section.locator("button.prediction-next").click()
        assert int(player.get_attribute("data-position")) == int(position) + 1
    assert section.locator(".prediction-list li").evaluate_all("nodes => nodes.map(n => n.dataset.key)") == made
    assert sorted(made) == sorted(SPEC_PREDICTIONS)

    quiz = page.locator("#section-06 form[data-question='tanh-gradient']")
    quiz.locator("input").fill("0.49")
    quiz.locator("input").press("Enter")
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='tanh-gradient']\").dataset.retry === 'true'", polling=PAGE_POLL_MS)
    assert "0.51" not in quiz.locator(".feedback").text_content()  # the hint, not the answer
    quiz.locator("input").press("Enter")  # the same answer again: now the answer is shown
    page.wait_for_function("() => document.querySelector(\"#section-06 form[data-question='tanh-gradient']\").dataset.retry === 'false'", polling=PAGE_POLL_MS)
    reason = quiz.locator(".reason").text_content().strip()
    assert reason and "0.51" in quiz.locator(".feedback").text_content()
    n_reason = section.locator(".prediction-list li[data-key='n'] .reason").text_content().strip()

    def check_kept() -> None:
        item = section.locator(".prediction-list li[data-key='n']")
        assert "wrong" in item.get_attribute("class")
        assert "0.8814" in item.text_content() and n_reason in item.text_content()
        assert "0.51" in quiz.locator(".feedback").text_content()
        assert quiz.locator(".reason").text_content().strip() == reason

    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    check_kept()
    # A restarted server (same data folder, same port): the same tab still shows it all.
    from conftest import stop_lesson_server

    stop_lesson_server(server.process)
    server_factory(tmp_path, port)
    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    check_kept()
    assert log.outside(server.origin) == [] and log.page_errors == []


# ---------------------------------------------------------------- one learner's server per size


@pytest.fixture(scope="module", params=SIZES)
def learner(request, tmp_path_factory):
    """(size, server): one server per size for the review and the retry tests, with "addition-node" answered
    wrong 400 days ago (due in review). The review test comes first in the file (it finds nothing else due);
    the retry test answers a question of its own."""
    from conftest import answered_days_ago, start_lesson_server, stop_lesson_server

    data_dir = tmp_path_factory.mktemp(f"learner-{request.param}")
    answered_days_ago(data_dir, 400, (LESSON, "addition-node", "1", False))
    server = start_lesson_server(data_dir)
    try:
        yield request.param, server
    finally:
        stop_lesson_server(server.process)


def fresh_page(page_per_size, learner):
    """(size, server, page, request log): the size's one signed-in page on the learner server (conftest.page_per_size),
    shared by the review and the retry tests, each loading its own address in it afresh."""
    size, server = learner
    _context, page, log = page_per_size(server, size)
    return size, server, page, log


# ---------------------------------------------------------------- review answers


def test_review_answers_stay_on_reload_and_nothing_due_says_when(page_per_size, learner) -> None:
    size, server, page, log = fresh_page(page_per_size, learner)
    page.goto(server.origin + "/review", wait_until="commit")
    page.wait_for_selector("main[data-ready='true']")
    form = page.locator("#review-list form[data-question='addition-node']")
    # The question's number is at the start of its prompt, not beside the middle of the fieldset.
    number, marker = page.evaluate("""() => [getComputedStyle(document.querySelector(
        "#review-list form[data-question='addition-node'] .question-prompt"), '::before').content,
        getComputedStyle(document.querySelector('#review-list > li')).listStyleType]""")
    assert number.startswith("counter(question)") and marker == "none"
    form.locator("label", has_text="g to each of them, unchanged").click()
    form.locator("button[type=submit]").click()
    page.wait_for_function("() => document.querySelector(\"#review-list form[data-question='addition-node']\").dataset.correct === 'true'", polling=PAGE_POLL_MS)
    reason = form.locator(".reason").inner_text()
    assert reason
    page.reload()
    page.wait_for_selector("main[data-ready='true']")
    empty = page.locator("#review-empty")
    assert empty.is_visible() and "The next question comes back" in empty.inner_text()
    kept = page.locator("#reviewed-list form[data-question='addition-node']")
    assert kept.locator(".reason").inner_text() == reason and "Right." in kept.locator(".feedback").inner_text()
    assert not log.page_errors


# ---------------------------------------------------------------- a retry after the reveal is practice


def test_a_retry_after_the_reveal_is_practice(page_per_size, learner) -> None:
    from chainrule.progress import open_store

    size, server, page, log = fresh_page(page_per_size, learner)
    lesson(page, server)
    form = page.locator("#section-06 form[data-question='product-gradient']")

    def answer(text: str) -> None:
        form.locator("input").fill(text)
        with page.expect_response(lambda r: "/quiz/product-gradient" in r.url) as response:
            form.locator("input").press("Enter")
        assert response.value.status == 200
        page.wait_for_function(f"() => document.querySelector(\"#section-06 form[data-question='product-gradient']\").dataset.correct === '{str(text == '6').lower()}'", polling=PAGE_POLL_MS)

    answer("-6")  # the sign slip that quiz.json names: its hint, and one more try before the answer
    assert form.get_attribute("data-retry") == "true"
    assert form.locator(".hint").get_attribute("data-mistake") == "lost a minus sign"
    assert "The answer is" not in form.locator(".feedback").text_content()
    assert form.get_attribute("data-practice") == "false"
    answer("6")
    assert form.get_attribute("data-practice") == "true"
    assert "Practice" in form.locator(".practice-note").text_content()
    # The server rated the card once, for the first (wrong) answer; a direct API call cannot add a rating.
    status = page.evaluate(
        """() => fetch('/api/lessons/backprop/quiz/product-gradient', {method: 'POST',
              headers: {'Content-Type': 'application/json'}, body: JSON.stringify({answer: '6'})})
              .then(r => r.json())""")
    assert status["correct"] is True and status["practice"] is True
    store = open_store(server.data_dir)
    try:
        log_entries = [e for e in store.review_log(LESSON, "product-gradient") if not e["undone"]]
    finally:
        store.close()
    assert [(e["kind"], e["correct"], e["rating"]) for e in log_entries] == [("quiz", False, 1)]  # 1: Again
    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert form.get_attribute("data-practice") == "true"
    assert "The answer is" not in form.locator(".feedback").text_content()  # the latest answer was right
    assert log.page_errors == []


# ---------------------------------------------------------------- verdicts of this exercise, values as returned


WRONG_TYPES = {
    "python": ("def forward_values(leaves, nodes):\n    return ['a'] * (len(leaves) + len(nodes))\n", "'a'"),
    "typescript": ("export function forwardValues(nodes: any[], leaves: number[]): number[] {\n"
                   "  return [{a: 1}] as any;\n}\n", '{"a":1}'),
}


def test_a_verdict_names_this_exercise_and_shows_values_as_returned(open_page, lesson_server) -> None:
    """Each language's run is graded once and its verdict read at both widths."""
    context, page, log = open_at(open_page, lesson_server, SIZES[0])
    lesson(page, lesson_server, "computational-graphs")
    article = page.locator("article[data-exercise='forward-values']")
    for language, (source, shown) in WRONG_TYPES.items():
        if language != "python":
            article.locator(f"input[value='{language}']").check()
            page.wait_for_function("() => window.chainruleEditors['forward-values'].getText().includes('number[]')", polling=PAGE_POLL_MS)
        page.evaluate("s => window.chainruleEditors['forward-values'].setText(s)", source)
        article.locator("button.run-tests").click()
        article.locator(".results[data-status]").wait_for(timeout=120_000)

        def named_and_as_returned(language=language, shown=shown):
            first = article.locator(".test-results li").first
            assert shown in first.locator("td.actual").inner_text()  # as returned: not null, not [object Object]
            text = article.locator(".results").inner_text()
            assert "grad" not in text and "[object Object]" not in text
            assert "null" not in first.locator("td.actual").inner_text()
            assert ("forward_values" if language == "python" else "forwardValues") in text

        at_each_width(page, named_and_as_returned)
        page.evaluate("() => { const r = document.querySelector(\"article[data-exercise='forward-values'] .results\"); delete r.dataset.status; }")
    assert not log.page_errors
