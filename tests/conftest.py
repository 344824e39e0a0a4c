"""Fixtures shared by the whole suite.

One real Chromium for every test that needs a browser: Playwright's sync API allows a single running instance
per thread, so the browser tests and the picture tests must share this session-wide one.
"""

from __future__ import annotations

import shutil

import pytest

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
def default_moons_run(tmp_path_factory) -> dict:
    """The eager moons demo with every default (100 points, MLP(2, [16, 16, 1]), 100 steps), trained ONCE
    per session by the real CLI in a process of its own (`chainrule train moons --json --plot`): its JSON
    document (config, the whole learning curve, the final evaluation) plus "plot_file", the picture written.
    A clean process (no torch imported) trains about twice as fast as this one would (docs/performance.md)."""
    import json
    import subprocess
    import sys

    plot = tmp_path_factory.mktemp("moons") / "moons.png"
    result = subprocess.run([sys.executable, "-m", "chainrule", "train", "moons", "--json", "--plot", str(plot)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return {**json.loads(result.stdout), "plot_file": plot}
