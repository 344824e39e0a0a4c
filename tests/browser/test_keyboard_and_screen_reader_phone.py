"""The path's next lessons by keyboard alone on a phone (390x844) that asks for less motion, after its first
lesson (which test_keyboard_and_screen_reader.py walks at both widths), one leading to the other by its recap's
link. A part of the keyboard and screen-reader walk (tests/browser/keyboard_walk.py), in a file of its own so
that it runs beside the other parts; test_keyboard_and_screen_reader_phone_beyond.py walks on from the path."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyboard_walk import keyboard_session, walk_lessons
from path_walk import PREDICTIONS

pytestmark = pytest.mark.timeout(600)


def test_the_next_lessons_by_keyboard_alone_on_a_phone_with_less_motion(browser, server_factory, tmp_path: Path) -> None:
    with keyboard_session(browser, server_factory, tmp_path, "phone") as (page, keys, server):
        walk_lessons(page, keys, server, "phone", list(PREDICTIONS)[1:])
