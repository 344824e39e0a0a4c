"""Waiting for something a process does, by asking until it is so (never a sleep of a guessed length)."""

from __future__ import annotations

import time

# How often a page's wait_for_function asks its predicate, in ms: Playwright's default asks on every animation
# frame, which kept Chromium's renderer busy (0.4 s of its CPU per 5 s of waiting, against 0.03 s at 100 ms).
# Every wait_for_function in tests/ passes polling=PAGE_POLL_MS (tests/test_suite_helpers.py checks).
PAGE_POLL_MS = 100


def until(condition, what: str, seconds: float, every: float = 0.1):
    """Poll ``condition()`` until it gives something true, and give that; AssertionError naming ``what`` after
    ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"{what} did not get there in {seconds} s")
