"""One of the five lessons that make the path eight end to end in a real Chromium (path_six.py):
many inputs and the gradient, after the slopes."""

from __future__ import annotations

from pathlib import Path

import pytest
from path_six import GRADIENT, walk_lesson

pytestmark = pytest.mark.timeout(600)  # one lesson's walk: about a minute at load average 25, a bound for a hang


def test_the_lesson_end_to_end(browser, server_factory, tmp_path: Path) -> None:
    walk_lesson(browser, server_factory, tmp_path, GRADIENT)
