"""Building the sandbox is the server's time, never the learner's (docs/grading.md, "A busy machine").

On a busy machine bwrap's namespaces, mounts and the cgroup can take seconds to make. The hang guard's
clock starts when the program is let go, so a reference solution behind a slow sandbox still passes; the
sandbox's own bound is every guard window the run could be given (Limits.longest_wall_seconds).
A slow build is made deterministic by holding the start back for longer than the guard.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

from chainrule.grading import default_limits, grade, reference_source
from chainrule.grading.sandbox import Limits, layers

pytestmark = pytest.mark.timeout(120)

EXERCISE = "backward-order"
GUARD_SECONDS = 2.0


@pytest.fixture
def slow_sandbox(monkeypatch):
    """Every run's sandbox takes half a guard longer to build than the whole guard."""
    usual = layers.start

    def slow_start(plan, *args, **kwargs):
        time.sleep(GUARD_SECONDS * 1.5)  # the machine's delay being simulated, not a wait for an event
        return usual(plan, *args, **kwargs)

    monkeypatch.setattr(layers, "start", slow_start)


def test_a_reference_solution_passes_behind_a_sandbox_slower_than_its_guard(slow_sandbox):
    limits = dataclasses.replace(default_limits("python"), wall_seconds=GUARD_SECONDS)
    result = grade(EXERCISE, "python", reference_source(EXERCISE, "python"), limits=limits)
    assert result["verdict"] == "passed", result["message"]


def test_the_sandbox_may_take_as_long_as_every_window_a_starved_run_gets():
    assert Limits(wall_seconds=3.0, starved_windows=4).longest_wall_seconds == 12.0
    assert Limits(wall_seconds=3.0, starved_windows=0).longest_wall_seconds == 3.0
