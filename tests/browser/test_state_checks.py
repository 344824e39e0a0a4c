"""The walks' state checks (path_walk.StateChecks) audit a part's state once per test run and never skip one that
failed: a state audited and passed in one worker's page is not audited again in another's (the run's folder of
audited states), a state whose audit failed is audited again, and a formula that differs only inside KaTeX's
span is the same state. Small pages of their own, no server."""

from __future__ import annotations

import pytest
from path_walk import StateChecks

# One part (the scope's child with an id) holding a paragraph and a formula drawn as KaTeX draws one.
PAGE = """<!doctype html><html lang="en"><head><title>Parts</title></head><body><main id="scope">
<div id="prose"><p style="color: {colour}">Text of the part, and a formula: {formula}</p></div></main></body></html>"""
SUM = ('<span class="katex"><span class="katex-html" aria-hidden="true"><span class="base"><span class="mord">a</span>'
       '<span class="mbin">+</span><span class="mord">b</span></span></span></span>')
FRACTION = ('<span class="katex"><span class="katex-html" aria-hidden="true"><span class="base"><span class="mfrac">'
            '<span class="vlist"><span class="mord">1</span><span class="frac-line"></span><span class="mord">2</span>'
            '</span></span></span></span></span>')


ADDRESS = "http://localhost/state"


@pytest.fixture()
def fresh_page(browser):
    """fresh_page(html): a new page at desktop size (as another worker's would be) showing html."""
    contexts = []

    def show(html: str):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        # Served by Playwright itself from a localhost address: a secure context, as the lesson pages are (the
        # parts' digests use crypto.subtle, which a page set on about:blank does not have).
        page.route(ADDRESS, lambda route: route.fulfill(body=html, content_type="text/html"))
        page.goto(ADDRESS)
        return page

    yield show
    for context in contexts:
        context.close()


def axe_ran(page) -> bool:
    return page.evaluate("() => Boolean(window.axe)")


def test_a_state_is_audited_once_per_run_and_a_failed_one_again(fresh_page, tmp_path) -> None:
    faint = fresh_page(PAGE.format(colour="#bbbbbb", formula=SUM))  # 1.9:1 on white: axe's colour-contrast fails it
    with pytest.raises(AssertionError, match="color-contrast"):
        StateChecks(faint, "desktop", tmp_path).check("#scope", "faint")
    assert list(tmp_path.iterdir()) == []  # not recorded: the next walk to meet it audits it again
    again = fresh_page(PAGE.format(colour="#bbbbbb", formula=SUM))
    with pytest.raises(AssertionError, match="color-contrast"):
        StateChecks(again, "desktop", tmp_path).check("#scope", "faint again")

    dark = fresh_page(PAGE.format(colour="#222222", formula=SUM))
    StateChecks(dark, "desktop", tmp_path).check("#scope", "dark")
    assert axe_ran(dark) and len(list(tmp_path.iterdir())) == 2  # the scope's part and #prose, audited and passed

    elsewhere = fresh_page(PAGE.format(colour="#222222", formula=FRACTION))  # another formula, the same kinds of prose
    StateChecks(elsewhere, "desktop", tmp_path).check("#scope", "elsewhere")
    assert not axe_ran(elsewhere)  # seen in this run: no audit


def test_a_new_kind_of_element_in_a_part_is_a_new_state(fresh_page, tmp_path) -> None:
    first = fresh_page(PAGE.format(colour="#222222", formula=SUM))
    StateChecks(first, "desktop", tmp_path).check("#scope", "first")
    with_a_link = fresh_page(PAGE.format(colour="#222222", formula='<a href="#scope">a link</a>'))
    StateChecks(with_a_link, "desktop", tmp_path).check("#scope", "with a link")
    assert axe_ran(with_a_link)
