"""The path beyond its first lessons by keyboard alone at desktop width (1280x900): the path page gone round by
Tab, each later lesson's plot worked by keys, a question due in review answered and the playground used; a part
of the keyboard and screen-reader walk (tests/browser/keyboard_walk.py), in a file of its own so that it runs
beside the other parts."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyboard_walk import keyboard_session, walk_beyond_the_lessons

pytestmark = pytest.mark.timeout(600)


def test_the_path_review_and_playground_by_keyboard_alone(browser, server_factory, tmp_path: Path) -> None:
    with keyboard_session(browser, server_factory, tmp_path, "desktop", due_in_review=True) as (page, keys, server):
        walk_beyond_the_lessons(page, keys, server, "desktop")
