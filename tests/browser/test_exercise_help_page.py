"""Exercise help in real Chromium, at 1280 and 390 px: hints open one at a time on request; the model
solution stays locked until three runs have failed (counted by the server from the stored
submissions) or the learner confirms; TypeScript type errors show as a list with line numbers."""

from __future__ import annotations

import json
import re

import pytest

from chainrule.grading import reference_source, starter_source
from conftest import keep_screenshot
from polling import PAGE_POLL_MS

LESSON = "backprop"
WIDTHS = [1280, 390]


@pytest.fixture(scope="module", params=WIDTHS)
def width_server(request, tmp_path_factory):
    """One server per width for the module's tests, which store runs: each test works on an exercise of its own
    (failed runs and confirms are counted per exercise), and each width starts from no runs."""
    from conftest import start_lesson_server, stop_lesson_server

    server = start_lesson_server(tmp_path_factory.mktemp(f"help-{request.param}"))
    try:
        yield request.param, server
    finally:
        stop_lesson_server(server.process)


@pytest.fixture(scope="module")
def width_page(browser, width_server):
    """One signed-in page on the width's server for the module's tests, instead of a context and a page each (a new
    page costs Chromium a renderer of its own): each test loads the lesson afresh in it (open_lesson)."""
    from conftest import new_page

    width, server = width_server
    context, page, log = new_page(browser, server, width=width, height=900, wait_until="commit")
    yield width, server, page, log
    context.close()


def open_lesson(width_page):
    """(width, server, page, request log): the lesson loaded afresh in the width's page, the mouse off every element,
    the page's script errors of earlier tests forgotten."""
    width, server, page, log = width_page
    page.mouse.move(0, 0)
    log.page_errors.clear()
    page.goto(f"{server.origin}/lessons/{LESSON}", wait_until="commit")
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    return width, server, page, log


def run_tests(page, exercise: str) -> dict:
    block = page.locator(f"article[data-exercise='{exercise}']")
    with page.expect_response(lambda r: r.url.endswith("/api/grade"), timeout=120_000) as response:
        block.locator("button.run-tests").click()
    assert response.value.status == 200, response.value.text()
    page.wait_for_function(
        "id => !document.querySelector(`article[data-exercise='${id}'] .results`).hasAttribute('aria-busy')", arg=exercise, polling=PAGE_POLL_MS
    )
    return response.value.json()


def solution_text(page, exercise: str) -> str:
    return page.locator(f"article[data-exercise='{exercise}'] .solution-source").text_content()


def ask_for_solution(page, exercise: str, button: str = "button.show-solution") -> None:
    """Click, then wait until the page has handled the server's answer (not just received it)."""
    selector = f"article[data-exercise='{exercise}'] .exercise-help"
    before = int(page.locator(selector).get_attribute("data-solution-answers") or "0")
    page.locator(f"{selector} {button}").click()
    page.wait_for_function(
        "([s, n]) => Number(document.querySelector(s).dataset.solutionAnswers || 0) > n", arg=[selector, before], polling=PAGE_POLL_MS)


def fits(page, selector: str, width: int) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (selector, box)


def test_hints_one_at_a_time_and_the_solution_behind_three_failed_runs(width_page) -> None:
    width, server, page, log = open_lesson(width_page)
    exercise = "local-gradients"
    block = page.locator(f"article[data-exercise='{exercise}']")
    help_panel = block.locator(".exercise-help")
    block.scroll_into_view_if_needed()

    # Hints: none shown until asked; then the first, then the second.
    assert help_panel.locator("li.hint").count() == 0
    assert help_panel.locator("button.show-hint").text_content() == "Show hint 1 of 3"
    help_panel.locator("button.show-hint").click()
    page.wait_for_selector(f"article[data-exercise='{exercise}'] li.hint[data-hint='1']")
    assert help_panel.locator("li.hint").count() == 1
    assert help_panel.locator("button.show-hint").text_content() == "Show hint 2 of 3"
    help_panel.locator("button.show-hint").click()
    page.wait_for_selector(f"article[data-exercise='{exercise}'] li.hint[data-hint='2']")
    hints = help_panel.locator("li.hint").all_text_contents()
    assert len(hints) == 2 and all(len(h) > 40 for h in hints)
    assert "+=" not in hints[0] and "+=" not in hints[1]  # the third hint says it, when asked for
    fits(page, f"article[data-exercise='{exercise}'] .exercise-help", width)

    # The solution is locked: asking shows a confirm, not the code.
    ask_for_solution(page, exercise)
    assert help_panel.locator(".solution-confirm").is_visible()
    assert "So far 0 runs did not pass" in help_panel.locator(".solution-confirm-text").text_content()
    assert help_panel.locator(".solution").is_hidden()
    help_panel.locator("button.keep-trying").click()
    assert help_panel.locator(".solution-confirm").is_hidden()

    # Two failed runs: still locked. The third opens it by itself, without a click or a confirm.
    for run in (1, 2, 3):
        result = run_tests(page, exercise)
        assert result["status"] != "pass" and result["saved"] is True
        if run < 3:
            ask_for_solution(page, exercise)
            assert help_panel.locator(".solution").is_hidden()
            assert f"So far {run} run{'s' if run > 1 else ''} did not pass" in help_panel.locator(
                ".solution-confirm-text").text_content()
            help_panel.locator("button.keep-trying").click()
    page.wait_for_selector(f"article[data-exercise='{exercise}'] .exercise-help[data-solution='open']")
    assert help_panel.locator(".solution-confirm").is_hidden()
    assert help_panel.locator(".solution").is_visible()
    assert solution_text(page, exercise) == reference_source(exercise, "python")
    # The learner's code is untouched.
    assert page.evaluate("id => window.chainruleEditors[id].getText()", exercise) == starter_source(exercise, "python")
    fits(page, f"article[data-exercise='{exercise}'] .solution-source", width)
    keep_screenshot(help_panel, f"exercise-help-{width}.png")

    # Switching language shows the solution in the new language.
    page.locator(f"#lang-{exercise}-javascript").check()
    page.wait_for_function(
        "id => document.querySelector(`article[data-exercise='${id}'] .solution`).dataset.language === 'javascript'",
        arg=exercise, polling=PAGE_POLL_MS)
    assert solution_text(page, exercise) == reference_source(exercise, "javascript")
    assert log.page_errors == []
    assert page.locator("#messages .message").count() == 0


def test_the_solution_opens_early_only_after_a_confirm(width_page) -> None:
    width, server, page, log = open_lesson(width_page)
    exercise = "backward-order"
    help_panel = page.locator(f"article[data-exercise='{exercise}'] .exercise-help")
    help_panel.scroll_into_view_if_needed()
    ask_for_solution(page, exercise)
    assert help_panel.locator(".solution").is_hidden()
    ask_for_solution(page, exercise, "button.confirm-solution")
    assert help_panel.get_attribute("data-solution") == "open"
    assert solution_text(page, exercise) == reference_source(exercise, "python")
    keep_screenshot(help_panel, f"exercise-solution-confirmed-{width}.png")
    # Hide it again; asking again needs no second confirm.
    help_panel.locator("button.show-solution").click()
    assert help_panel.locator(".solution").is_hidden()
    ask_for_solution(page, exercise)
    assert help_panel.locator(".solution").is_visible()
    assert log.page_errors == []


def test_type_errors_are_listed_with_line_numbers(width_page) -> None:
    """The grade result is the real server's; only the `type_errors` list (which the TypeScript checker
    adds on another branch) is added to it here, to see the page render it, and its absence. Its exercise is
    one that no other test of the width's server runs."""
    width, server, page, log = open_lesson(width_page)
    errors = [{"line": 4, "column": 9, "message": "Type 'string' is not assignable to type 'number'."},
              {"line": 7, "column": 3, "message": "<b>not markup</b>"}]

    def add_type_errors(route) -> None:
        response = route.fetch()
        body = response.json()
        if json.loads(route.request.post_data or "{}").get("language") == "typescript":
            body["type_errors"] = errors
        route.fulfill(response=response, json=body)

    page.route("**/api/grade", add_type_errors)
    try:
        type_errors_listed(page, width)
    finally:
        page.unroute("**/api/grade", add_type_errors)  # the page is the next test's too
    assert log.page_errors == []


def type_errors_listed(page, width: int) -> None:
    exercise = "neuron-grads"
    block = page.locator(f"article[data-exercise='{exercise}']")
    block.scroll_into_view_if_needed()
    run_tests(page, exercise)  # Python: no list
    assert block.locator(".type-errors").count() == 0
    page.locator(f"#lang-{exercise}-typescript").check()
    page.wait_for_function(
        "id => document.querySelector(`article[data-exercise='${id}']`).dataset.language === 'typescript'", arg=exercise, polling=PAGE_POLL_MS)
    run_tests(page, exercise)
    items = block.locator(".type-errors li.type-error")
    assert items.count() == 2
    assert items.nth(0).get_attribute("data-line") == "4"
    assert items.nth(0).text_content() == "Line 4, column 9: Type 'string' is not assignable to type 'number'."
    assert items.nth(1).text_content() == "Line 7, column 3: <b>not markup</b>"  # shown as text
    assert re.search(r"TypeScript found 2 type errors", block.locator(".type-errors").text_content())
    fits(page, f"article[data-exercise='{exercise}'] .type-errors", width)
    keep_screenshot(block.locator(".results"), f"type-errors-{width}.png")
