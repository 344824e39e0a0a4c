"""In real Chromium: TypeScript type errors reach the page, and a lone surrogate printed by learner code
does not stop the page from loading its saved progress (the real server, store, grader and sandbox)."""

from __future__ import annotations

from lesson_pages import LESSON, choose_language, reference, run_tests, set_editor_text

from conftest import keep_screenshot

TYPE_ERROR_LINE = '  let label: number = "a";'


def test_type_errors_and_lone_surrogates_on_the_page(open_page, server_factory, tmp_path):
    server = server_factory(tmp_path / "data")
    context, page, log = open_page(server, wait_until="commit")
    page.goto(f"{server.origin}/lessons/{LESSON}")
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)

    # A TypeScript run whose numbers are right but whose types are not: shown as failed, with the line.
    source = reference("neuron-grads", "typescript").splitlines()
    opening = next(i for i, line in enumerate(source) if "function neuronGrads" in line)
    source.insert(opening + 1, TYPE_ERROR_LINE)
    choose_language(page, "neuron-grads", "typescript")
    set_editor_text(page, "neuron-grads", "\n".join(source) + "\n")
    run_tests(page, "neuron-grads")
    results = page.locator("article[data-exercise='neuron-grads'] .results")
    assert results.get_attribute("data-verdict") == "type-error"
    assert results.get_attribute("data-status") == "fail"
    text = results.text_content()
    assert f"line {opening + 2}, column 7: Type 'string' is not assignable to type 'number'." in text
    assert "does not pass" in text
    keep_screenshot(page, "typescript-type-error.png", full_page=False)

    # A Python run that prints a lone surrogate: graded, stored, and the page reloads with everything.
    printing = reference("local-gradients", "python").replace(
        "class Value", 'print("odd \\ud800 text")\n\nclass Value', 1)
    assert printing != reference("local-gradients", "python")
    choose_language(page, "local-gradients", "python")
    set_editor_text(page, "local-gradients", printing)
    run_tests(page, "local-gradients")
    assert page.locator("article[data-exercise='local-gradients'] .results").get_attribute("data-status") == "pass"

    page.reload()
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert page.locator("#messages .message").count() == 0
    choose_language(page, "local-gradients", "python")
    assert page.evaluate("id => window.chainruleEditors[id].getText()", "local-gradients") == printing
    restored = page.locator("article[data-exercise='local-gradients'] .results")
    assert restored.get_attribute("data-status") == "pass"
    assert log.page_errors == []
