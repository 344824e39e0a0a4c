"""The path beyond its first lessons by keyboard alone on a phone (390x844) that asks for less motion: the path
page gone round by Tab, each later lesson's plot worked by keys (a frame a second), a question due in review
answered and the playground used. A part of the keyboard and screen-reader walk (tests/browser/keyboard_walk.py),
in a file of its own so that it runs beside the other parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyboard_walk import keyboard_session, walk_beyond_the_lessons

pytestmark = pytest.mark.timeout(600)


def test_the_path_review_and_playground_by_keyboard_alone_on_a_phone_with_less_motion(
        browser, server_factory, tmp_path: Path) -> None:
    with keyboard_session(browser, server_factory, tmp_path, "phone", due_in_review=True) as (page, keys, server):
        walk_beyond_the_lessons(page, keys, server, "phone")
