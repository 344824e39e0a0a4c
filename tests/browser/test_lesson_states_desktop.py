"""Every step and gate of the first third of the lessons at desktop width: the boxes, caption and controls on
screen together, no number over another, and axe-core and the overflow checks at every state
(lesson_walk.walk_every_state). The other thirds and the phone width are walked in files of their own, so that the
six walks run on several workers."""

from __future__ import annotations

from pathlib import Path

import pytest
from lesson_walk import walk_every_state

pytestmark = pytest.mark.timeout(300)


def test_every_step_and_gate_shows_its_boxes_caption_and_controls_and_no_number_overprints(
        open_page, server_factory, tmp_path: Path) -> None:
    walk_every_state(open_page, server_factory, tmp_path, "desktop", 0)
