"""The path page once the five lessons that make the path eight are finished (path_six.py; each lesson's walk is in
a test_path_six_*.py file of its own): the nine lessons in order, what each builds on, where the learner stands,
axe-core and no sideways scrolling at both widths."""

from __future__ import annotations

from pathlib import Path

import pytest
from path_six import check_the_path

pytestmark = pytest.mark.timeout(300)


def test_the_path_with_the_five_lessons_finished(browser, server_factory, tmp_path: Path) -> None:
    check_the_path(browser, server_factory, tmp_path)
