"""Every step and gate of the second fifth of the lessons at desktop width: the boxes, caption and controls on
screen together, no number over another, and axe-core and the overflow checks at every state
(lesson_walk.walk_every_state). The other fifths and the phone width are walked in files of their own, so that the
ten walks run on several workers."""

import pytest
from lesson_walk import walk_test

pytestmark = pytest.mark.timeout(300)

test_every_step_and_gate_shows_its_boxes_caption_and_controls_and_no_number_overprints = walk_test("desktop", 1)
