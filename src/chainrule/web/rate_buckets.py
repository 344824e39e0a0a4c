"""Token buckets by key, the store behind web/compute_rate.py's one rate (kept apart so app_state can name it).

It imports nothing of chainrule.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

__all__ = ["BURST", "PER_MINUTE", "MAX_BUCKETS", "ComputeRate"]

BURST = 60  # requests a learner may make at once (a minute of sliders and reruns at one a second)
PER_MINUTE = 60  # then this many a minute
MAX_BUCKETS = 10_000  # buckets kept in memory; past it, the full ones are forgotten (a full one is a fresh one)


class ComputeRate:
    """Token buckets by key: ``take(key)`` is 0.0 when admitted, else the seconds until a token is there."""

    def __init__(self, burst: int = BURST, per_minute: float = PER_MINUTE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = burst
        self.per_second = per_minute / 60.0
        self.clock = clock
        self.lock = threading.Lock()
        self.buckets: dict[Any, tuple[float, float]] = {}  # key -> (tokens, when they were counted)

    def _tokens(self, key: Any, now: float) -> float:
        tokens, then = self.buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - then) * self.per_second)

    def take(self, key: Any) -> float:
        with self.lock:
            now = self.clock()
            tokens = self._tokens(key, now)
            if tokens < 1.0:
                self.buckets[key] = (tokens, now)
                return (1.0 - tokens) / self.per_second
            self.buckets[key] = (tokens - 1.0, now)
            if len(self.buckets) > MAX_BUCKETS:
                self.buckets = {k: v for k, v in self.buckets.items() if self._tokens(k, now) < self.burst}
            return 0.0
