"""Fixtures shared by the whole suite.

One real Chromium for every test that needs a browser: Playwright's sync API allows a single running instance
per thread, so the browser tests and the picture tests must share this session-wide one.
"""

from __future__ import annotations

import shutil

import pytest

# Grading knows exercise folders, not lessons: importing chainrule.lessons registers the built-in lessons'
# exercise folders, so that every test can grade them by id.
import chainrule.lessons  # noqa: F401,E402

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.skip("no `chromium` executable on PATH: the real-browser tests need Chromium (apt-get install chromium)")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def grade_once():
    """grade(exercise, language, source) that grades each distinct (exercise folder, language, source) once
    per session: the reference solutions and starters are checked by test_grading, test_lessons_path and
    the lessons-check tests, and one real sandbox run each is enough. Each call gets its own copy."""
    import copy

    from chainrule.grading import grade
    from chainrule.grading.registry import resolve

    results: dict[tuple[str, str, str], dict] = {}

    def graded(exercise, language: str, source: str) -> dict:
        key = (str(resolve(exercise).folder.resolve()), language, source)
        if key not in results:
            results[key] = grade(exercise, language, source)
        return copy.deepcopy(results[key])

    return graded
