"""Password hashing (argon2id) in a small pool of threads of its own, within a memory budget.

    passwords = PasswordPool()                        # argon2id at OWASP's minimum: 19 MiB, 2 passes, 1 lane
    digest = await passwords.hash("a long password")
    matched = await passwords.verify(digest, "a long password")

Every sign-in, join and new password costs one argon2id computation. The cost is OWASP's minimum for argon2id
(Password Storage Cheat Sheet: 19 MiB of memory, 2 passes, 1 lane), about 0.03 s of one core on the 2-core
machine of docs/performance.md. argon2-cffi's default (RFC 9106's low-memory profile: 64 MiB, 3 passes, 4
lanes) took 0.26 core-seconds a check there: a class of 400 signing in within a minute needed 100 core-seconds,
more than two cores have, and sign-ins failed (issue 31). A hash made with other parameters still checks (they
are part of the hash), and the account's next sign-in keeps the password again at this cost. Run in the
server's shared thread pool, 40 at once took 2.5 GB and every thread, and pages waited behind them (issue 27,
item 4). Here a computation first waits for a slot
in the event loop, costing no thread; as many run at once as the memory budget holds and the machine has
cores (at most `memory_budget // memory_cost`, at most os.cpu_count()), each in a thread of this pool's
own limiter, never one of the pages'. Up to `max_waiting` more wait, each at most `wait_seconds`; past
that, PasswordsBusy, which the web answers with 503 and Retry-After ("try again in a few seconds").
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Callable, TypeVar

import anyio
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from chainrule.number_text import count_text

Result = TypeVar("Result")

__all__ = ["PasswordPool", "PasswordsBusy", "production_hasher", "MEMORY_BUDGET", "MAX_WAITING", "WAIT_SECONDS", "RETRY_AFTER"]

TIME_COST, MEMORY_KIB, PARALLELISM = 2, 19 * 1024, 1  # argon2id's passes, memory and lanes (OWASP's minimum)
MEMORY_BUDGET = 256 * 1024 * 1024  # bytes of argon2 memory at once (13 hashes of 19 MiB; the cores bound it first)
MAX_WAITING = 400  # sign-ins waiting for a slot (a waiting one holds a coroutine, not memory or a thread)
WAIT_SECONDS = 30.0  # the longest a sign-in waits for its slot before "try again"
RETRY_AFTER = 5  # seconds, in the Retry-After of a busy answer


def production_hasher() -> PasswordHasher:
    """argon2id at the cost every account's password is kept with."""
    return PasswordHasher(time_cost=TIME_COST, memory_cost=MEMORY_KIB, parallelism=PARALLELISM)


class PasswordsBusy(Exception):
    """Every slot is taken and the queue is full (or the wait ran out): try again in `retry_after` seconds."""

    def __init__(self, retry_after: int = RETRY_AFTER) -> None:
        super().__init__(f"the server is busy checking passwords: try again in {count_text(retry_after, 'second')}")
        self.retry_after = retry_after


class PasswordPool:
    """argon2id hashing and checking, a few at a time, in threads apart from the server's shared pool."""

    def __init__(self, hasher: PasswordHasher | None = None, *, memory_budget: int = MEMORY_BUDGET,
                 max_waiting: int = MAX_WAITING, wait_seconds: float = WAIT_SECONDS) -> None:
        self.hasher = hasher or production_hasher()
        per_hash = self.hasher.memory_cost * 1024  # memory_cost is in KiB
        self.slots = max(1, min(os.cpu_count() or 1, memory_budget // per_hash))
        self.max_waiting = max_waiting
        self.wait_seconds = wait_seconds
        self.waiting = 0
        self._loop: object = None

    def _limiters(self) -> None:
        """Limiters belong to one event loop: made anew when another loop uses the pool (tests do)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self.waiting = loop, 0
            self._admitted = anyio.CapacityLimiter(self.slots)
            self._threads = anyio.CapacityLimiter(self.slots)  # the admitted ones' threads, apart from the pool's

    async def _run(self, work: Callable[..., Result], *args: Any) -> Result:
        self._limiters()
        if self._admitted.available_tokens == 0 and self.waiting >= self.max_waiting:
            raise PasswordsBusy()
        self.waiting += 1
        admitted = False
        try:
            with anyio.move_on_after(self.wait_seconds):
                await self._admitted.acquire()
                admitted = True
        finally:
            self.waiting -= 1
        if not admitted:
            raise PasswordsBusy()
        try:
            return await anyio.to_thread.run_sync(lambda: work(*args), limiter=self._threads)
        finally:
            self._admitted.release()

    async def hash(self, password: str) -> str:
        return await self._run(self.hasher.hash, password)

    async def verify(self, stored: str, password: str) -> bool:
        """True when ``password`` matches the hash ``stored``; False for a mismatch or a damaged hash."""
        return await self._run(self.matches, stored, password)

    def outdated(self, stored: str) -> bool:
        """True when ``stored`` was made at another cost than this pool's (it still checks; a sign-in renews it)."""
        try:
            return self.hasher.check_needs_rehash(stored)
        except (InvalidHashError, ValueError):
            return False

    def matches(self, stored: str, password: str) -> bool:
        try:
            return self.hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
