"""The whole path by keyboard alone, and what a screen reader meets (issue 32 items 10 and 11), in a real
Chromium against the real server. The walk (tests/browser/keyboard_walk.py, where its checks are listed) runs
in parts, one part a file, so that pytest-xdist workers run them side by side (`--dist loadfile` keeps a file
on one worker):
* here: the path's first lesson at desktop (1280x900) and phone (390x844, with less motion asked for) width,
  and the code editor's colours;
* test_keyboard_and_screen_reader_backprop.py and _descent.py: the next two lessons at desktop width;
* test_keyboard_and_screen_reader_beyond.py: the path page, the later lessons' plots, review and the
  playground at desktop width;
* test_keyboard_and_screen_reader_phone.py and _phone_beyond.py: the rest of the walk on the phone.

The editor's colours: every colour of its theme has 4.5:1 against every background it is drawn on, and every
token colour in the editor as drawn (Python at desktop, JavaScript on the phone) too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from keyboard_walk import contrast, keyboard_session, walk_lessons
from path_walk import PREDICTIONS

from conftest import WIDTHS

pytestmark = pytest.mark.timeout(600)

FIRST_LESSON = next(iter(PREDICTIONS))


@pytest.mark.parametrize("size", WIDTHS)
def test_the_first_lesson_by_keyboard_alone_with_live_steps_table_views_and_the_editors_colours(
        browser, server_factory, tmp_path: Path, size: str) -> None:
    with keyboard_session(browser, server_factory, tmp_path, size) as (page, keys, server):
        seen = walk_lessons(page, keys, server, size, [FIRST_LESSON])

        # The editor's theme: each text colour against each background it is drawn on, and the gutter.
        theme = page.evaluate("() => import('/static/vendor/codemirror.js').then((m) => m.EDITOR_COLOURS)")
        low = [(name, where, round(contrast(colour, background), 2))
               for name, colour in theme["text"].items() for where, background in theme["backgrounds"].items()
               if contrast(colour, background) < 4.5]
        gutter = theme["gutter"]
        low += [("line numbers", where, round(contrast(gutter["text"], gutter[where]), 2))
                for where in ("background", "activeLine") if contrast(gutter["text"], gutter[where]) < 4.5]
        assert low == [], low
        drawn = set(seen)
        assert len(drawn) >= 4 and all(contrast(colour, theme["backgrounds"]["activeLine"]) >= 4.5 for colour in drawn), drawn
