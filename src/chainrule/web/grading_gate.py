"""Gradings wait for their turn in the event loop, not in the thread pool that serves the pages.

    gate = GradingGate(*grading.concurrency())
    result = await gate.run(grade, exercise, language, source)   # None: busy, answer at once

A plain `def` route runs in the server's shared pool of 40 threads. Were `post_grade` one, every
grading waiting for the grader's gate (3 x cores of them: the running ones and the queue) would hold
a thread, and on a machine with 14 cores or more a burst of gradings would leave no thread for a
page, which would then wait for a grading to end. Here a grading first waits for a slot in the
event loop (costing no thread); once admitted, it runs in a thread of its own limiter, never one of
the pool's. As many are admitted as the grader runs at once, as many may wait as its queue holds,
and a grading past that is answered "busy" at once.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

import anyio

__all__ = ["GradingGate"]


class GradingGate:
    """Admits `slots` gradings at once (each in its own thread) and lets `queue` more wait, each for
    at most `wait_seconds`."""

    def __init__(self, slots: int, queue: int, wait_seconds: float) -> None:
        self.slots = slots
        self.queue = queue
        self.waiting = 0
        self.wait_seconds = wait_seconds
        self._loop: object = None

    @property
    def running(self) -> int:
        """How many gradings hold a slot now."""
        return 0 if self._loop is None else int(self.admitted.borrowed_tokens)

    def _limiters(self) -> None:
        """Limiters belong to one event loop: made anew when the app is served by another (tests do)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self.waiting = loop, 0
            self.admitted = anyio.CapacityLimiter(self.slots)
            self.threads = anyio.CapacityLimiter(self.slots)  # admitted gradings' own threads, apart from the pool

    async def run(self, function: Callable[..., Any], *args: Any,
                  still_wanted: Callable[[], Awaitable[bool]] | None = None) -> Any:
        """function(*args) in a thread once a slot is free; None (without waiting) when the slots are
        taken and the queue is full, after waiting wait_seconds for a slot, or when `still_wanted()`
        says, once admitted, that nobody waits for the answer any more (the page was closed)."""
        self._limiters()
        if self.admitted.available_tokens == 0 and self.waiting >= self.queue:
            return None
        self.waiting += 1
        admitted = False
        try:
            with anyio.move_on_after(self.wait_seconds):
                await self.admitted.acquire()
                admitted = True
        finally:
            self.waiting -= 1
        if not admitted:
            return None
        try:
            if still_wanted is not None and not await still_wanted():
                return None
            return await anyio.to_thread.run_sync(lambda: function(*args), limiter=self.threads)
        finally:
            self.admitted.release()
