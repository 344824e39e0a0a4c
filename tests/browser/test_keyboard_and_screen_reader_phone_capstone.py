"""The capstone, "Build the engine and train it", by keyboard alone on a phone (390x844) that asks for less
motion, in JavaScript: its players, predictions, each step typed and run (each opening with the step before's
passing code), the download link, its quiz and explain-it-back. A part of the keyboard and screen-reader walk
(tests/browser/keyboard_walk.py), in a file of its own so that it runs beside the other parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyboard_walk import keyboard_session, walk_lessons
from path_walk import CAPSTONE

pytestmark = pytest.mark.timeout(600)


def test_the_capstone_by_keyboard_alone_on_a_phone_with_less_motion(browser, server_factory, tmp_path: Path) -> None:
    with keyboard_session(browser, server_factory, tmp_path, "phone") as (page, keys, server):
        walk_lessons(page, keys, server, "phone", [CAPSTONE])
