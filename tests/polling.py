"""Waiting for something a process does, by asking until it is so (never a sleep of a guessed length)."""

from __future__ import annotations

import time


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
