"""The capstone, "Build the engine and train it", by keyboard alone at desktop width (1280x900), in Python: its
players, predictions, each step typed and run (each opening with the step before's passing code), the download
link, its quiz and explain-it-back. A part of the keyboard and screen-reader walk (tests/browser/keyboard_walk.py),
in a file of its own so that it runs beside the other parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyboard_walk import keyboard_session, walk_lessons
from path_walk import CAPSTONE

pytestmark = pytest.mark.timeout(600)


def test_the_capstone_by_keyboard_alone(browser, server_factory, tmp_path: Path) -> None:
    with keyboard_session(browser, server_factory, tmp_path, "desktop") as (page, keys, server):
        walk_lessons(page, keys, server, "desktop", [CAPSTONE])
