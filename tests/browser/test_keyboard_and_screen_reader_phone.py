"""The whole path by keyboard alone on a phone (390x844) that asks for less motion: the walk of
test_keyboard_and_screen_reader.py, in a file of its own so that it runs beside the desktop walk on another
pytest-xdist worker (each walk takes a minute or more; `--dist loadfile` keeps a file on one worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_keyboard_and_screen_reader import walk_at_width

pytestmark = pytest.mark.timeout(600)


def test_the_whole_path_by_keyboard_alone_on_a_phone_with_less_motion(browser, server_factory, tmp_path: Path) -> None:
    walk_at_width(browser, server_factory, tmp_path, "phone")
