"""Whose graded run goes next: the one admission policy for graded runs, in process and queued.

    order = fair_order(waiting, last_served)          # the queue of class mode's workers (progress/run_jobs.py)
    gate = Admission(slots=2, queue=4)                # a process's own sandboxes (grading/grader.py's GATE)
    ticket = gate.enter(owner, bound=3)               # a thread waits its turn here ...
    ticket = await gate.enter_async(owner, bound=3)   # ... or a request, in the event loop (no thread held)
    if ticket in (BUSY, BOUND): ...                   # refused at once, or after waiting too long
    gate.leave(ticket)

The rules, the same for a run graded in this process and for one queued for `chainrule worker`:
- one learner has at most ``bound`` runs open (waiting or running), MAX_OPEN_PER_LEARNER unless the
  server says otherwise; one more is refused at once (BOUND), not queued;
- a run past the free slots and a full waiting room is refused at once (BUSY);
- when a slot frees, learners take turns: the learner served longest ago goes first (one never served
  before anyone), each learner's own runs oldest first. Round robin by learner, not first come: ten runs
  of one learner do not make a classmate's one run wait behind all ten;
- runs are graded at nice GRADING_NICE, below the pages of the server beside them (a run's cgroup weighs as
  its grader's nice: grading/sandbox/cgroups.py).

An owner of None (the one learner of `chainrule lesson`, `chainrule check`, a worker's own runs) has no
bound, and its runs go first come first served. This module imports nothing of chainrule: grading,
progress and classes all read it.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Hashable, Iterable, Mapping, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["MAX_OPEN_PER_LEARNER", "GRADING_NICE", "BUSY", "BOUND", "Admission", "Ticket", "fair_order"]

MAX_OPEN_PER_LEARNER = 3
GRADING_NICE = 10  # the CPU priority runs are graded at beside pages (a worker's default; serve's grading threads)
BUSY = "busy"    # every slot runs and the waiting room is full (or the wait was too long)
BOUND = "bound"  # this learner already has their open runs

Key = TypeVar("Key")


def fair_order(waiting: Iterable[tuple[Key, Hashable]], last_served: Mapping[Hashable, float]) -> list[Key]:
    """The order in which ``waiting`` runs ((key, owner) pairs, oldest first) are served, if no more came:
    round robin over their owners, the owner served longest ago (``last_served``, larger is later; absent:
    never) first, ties by the owner's oldest run; each owner's runs oldest first, one per round."""
    by_owner: dict[Hashable, list[Key]] = {}
    for key, owner in waiting:
        by_owner.setdefault(owner, []).append(key)
    arrival = {owner: index for index, owner in enumerate(by_owner)}
    owners = sorted(by_owner, key=lambda owner: (owner in last_served, last_served.get(owner, 0.0), arrival[owner]))
    return [keys[turn] for turn in range(max(map(len, by_owner.values()), default=0))
            for owner in owners if turn < len(keys := by_owner[owner])]


@dataclass(eq=False)
class Ticket:
    """One run's turn: waiting until ``admitted``, then holding a slot until Admission.leave."""

    owner: Hashable
    wake: Callable[[], bool]
    admitted: bool = False


class Admission:
    """At most ``slots`` runs at once, ``queue`` more waiting (each at most ``wait_seconds``), per-learner
    bounds, and fair turns (module docstring). Thread-safe; waiting works from threads and event loops alike."""

    def __init__(self, slots: int, queue: int, wait_seconds: float = 60.0) -> None:
        if slots < 1 or queue < 0:
            raise ValueError("an admission needs at least one slot and a waiting room of 0 or more")
        self.slots, self.queue, self.wait_seconds = int(slots), int(queue), float(wait_seconds)
        self.running = 0
        self.peak = 0  # the most runs ever running at once (for tests and the benchmark)
        self._waiting: list[Ticket] = []
        self._open: Counter[Hashable] = Counter()
        self._served: dict[Hashable, int] = {}
        self._admissions = itertools.count()
        self._lock = threading.Lock()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def open_runs(self, owner: Hashable) -> int:
        """How many runs ``owner`` has waiting or running here."""
        with self._lock:
            return self._open[owner]

    # ---------------------------------------------------------------- waiting for a turn

    def enter(self, owner: Hashable = None, *, bound: int | None = None) -> Ticket | str:
        """A thread's turn: the admitted Ticket, or BUSY / BOUND."""
        arrived = threading.Event()

        def wake() -> bool:
            arrived.set()
            return True

        ticket = self._ask(owner, bound, wake)
        if isinstance(ticket, str) or ticket.admitted:
            return ticket
        arrived.wait(self.wait_seconds)
        return self._outcome(ticket)

    async def enter_async(self, owner: Hashable = None, *, bound: int | None = None) -> Ticket | str:
        """enter() for a coroutine: it waits in the event loop, holding no thread."""
        import asyncio  # here: importing this module must not need asyncio (the package imports on any system)

        loop = asyncio.get_running_loop()
        arrived = loop.create_future()

        def wake() -> bool:
            try:
                loop.call_soon_threadsafe(_settle, arrived)
                return True
            except RuntimeError:  # that event loop has closed: nobody waits for this turn any more
                return False

        ticket = self._ask(owner, bound, wake)
        if isinstance(ticket, str) or ticket.admitted:
            return ticket
        try:
            await asyncio.wait_for(asyncio.shield(arrived), self.wait_seconds)
        except asyncio.TimeoutError:
            pass
        except asyncio.CancelledError:  # the request went away while waiting
            if not self._withdraw(ticket):
                self.leave(ticket)
            raise
        return self._outcome(ticket)

    def leave(self, ticket: Ticket) -> None:
        """The run is over: its slot goes to the next fair turn."""
        with self._lock:
            if not ticket.admitted:
                return
            ticket.admitted = False
            self.running -= 1
            self._close(ticket.owner)
            self._admit_waiting()

    def _outcome(self, ticket: Ticket) -> Ticket | str:
        """After waiting: the admitted ticket, or BUSY (it waited too long, or its owner's runs were taken back)."""
        if self._withdraw(ticket) or not ticket.admitted:
            return BUSY
        return ticket

    def withdraw_owner(self, owner: Hashable) -> int:
        """Take back every waiting run of ``owner`` (an account removed): each of them gets BUSY."""
        with self._lock:
            theirs = [ticket for ticket in self._waiting if ticket.owner == owner]
        return sum(self._withdraw(ticket) and ticket.wake() for ticket in theirs)

    # ---------------------------------------------------------------- the policy

    def _ask(self, owner: Hashable, bound: int | None, wake: Callable[[], bool]) -> Ticket | str:
        with self._lock:
            if owner is not None and bound is not None and self._open[owner] >= bound:
                return BOUND
            if self.running >= self.slots and len(self._waiting) >= self.queue:
                return BUSY
            ticket = Ticket(owner, wake)
            self._open[owner] += 1
            if self.running < self.slots:
                self._admit(ticket)
            else:
                self._waiting.append(ticket)
            return ticket

    def _admit(self, ticket: Ticket) -> None:
        ticket.admitted = True
        self.running += 1
        self.peak = max(self.peak, self.running)
        self._served[ticket.owner] = next(self._admissions)

    def _admit_waiting(self) -> None:
        while self.running < self.slots and self._waiting:
            order = fair_order(((ticket, ticket.owner) for ticket in self._waiting), self._served)
            ticket = order[0]
            self._waiting.remove(ticket)
            self._admit(ticket)
            if not ticket.wake():  # its waiter is gone: the slot goes on to the next
                ticket.admitted = False
                self.running -= 1
                self._close(ticket.owner)

    def _withdraw(self, ticket: Ticket) -> bool:
        """Take a waiting ticket out; False if it was admitted meanwhile (then it holds a slot)."""
        with self._lock:
            if ticket.admitted or ticket not in self._waiting:
                return False
            self._waiting.remove(ticket)
            self._close(ticket.owner)
            return True

    def _close(self, owner: Hashable) -> None:
        self._open[owner] -= 1
        if self._open[owner] <= 0:
            del self._open[owner]


def _settle(arrived: asyncio.Future[bool]) -> None:
    """Resolve a waiter's future in its event loop, unless it is already done (cancelled)."""
    if not arrived.done():
        arrived.set_result(True)
