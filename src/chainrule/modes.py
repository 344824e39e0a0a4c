"""Graph-recording modes: `no_grad`, `enable_grad`, `detect_anomaly`, and the tracing hook compile uses.

Modes are per thread, as in PyTorch: `no_grad()` in one thread must not change the graphs another thread
builds. Reading a thread-local on every op would cost, so the engine keeps a global fast-path flag,
"plain": True while no thread has any mode active, and then an op checks nothing else. This module owns
the count of open mode blocks and tells the engine when the flag changes (`watch_plain`); a node made
while the flag is off is finished by `record`, which reads this thread's own modes.

Nothing here imports the engine: nodes are handled through their slots (`_a`, `_b`, `_op`, `data`).
"""

from __future__ import annotations

import linecache
import math
import os
import sys
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, Callable, Iterator

from chainrule import ops
from chainrule.kernels import data_of

__all__ = ["no_grad", "enable_grad", "is_grad_enabled", "detect_anomaly", "AnomalyError", "observe_nodes", "tracing"]

_thread = threading.local()  # .grad_enabled (default True), .anomaly (default None), .observers
_active_modes = 0  # mode blocks open in any thread
_state_lock = threading.Lock()
_plain_watchers: list[Callable[[bool], None]] = []


def watch_plain(watcher: Callable[[bool], None]) -> None:
    """Call watcher(plain) whenever "no thread has a mode open" changes (the engine's fast-path flag)."""
    _plain_watchers.append(watcher)


def _set_active(change: int) -> None:
    global _active_modes
    with _state_lock:
        _active_modes += change
        for watcher in _plain_watchers:
            watcher(_active_modes == 0)


@contextmanager
def _mode(**settings: Any) -> Iterator[None]:
    """Set this thread's mode attributes for the block; restore them afterwards, also on error."""
    previous = {name: getattr(_thread, name, None) for name in settings}
    _set_active(+1)
    for name, value in settings.items():
        setattr(_thread, name, value)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                _thread.__dict__.pop(name, None)  # back to the default
            else:
                setattr(_thread, name, value)
        _set_active(-1)


def is_grad_enabled() -> bool:
    """Whether this thread's ops record a graph."""
    return getattr(_thread, "grad_enabled", True)


def current_anomaly() -> "AnomalyMode | None":
    """This thread's open `detect_anomaly` block, if any."""
    return getattr(_thread, "anomaly", None)


@contextmanager
def no_grad() -> Iterator[None]:
    """Inside this block, this thread's ops compute values but record no graph (results are leaves)."""
    with _mode(grad_enabled=False):
        yield


@contextmanager
def enable_grad() -> Iterator[None]:
    """Record the graph again inside a `no_grad` block (this thread only)."""
    with _mode(grad_enabled=True):
        yield


# --- the hook of chainrule.compile's tracer -------------------------------------------------------------
# While any thread traces, every op node made in ANY thread is shown to the tracer (a worker thread the
# traced function starts must see placeholders too): `tracer.node(node, a, b, recording)` marks a node
# made from a placeholder as one (returns True) and refuses one made under no_grad; `tracer.numbers(v,
# what)` refuses engine functions that would compute with a placeholder's missing number.
_tracer: Any = None
_traces_active = 0


def current_tracer() -> Any:
    """The tracer of an open `tracing` block in any thread, or None."""
    return _tracer


@contextmanager
def tracing(tracer: Any) -> Iterator[None]:
    """Show every op node made inside the block (any thread) to `tracer`; this thread records graphs."""
    global _tracer, _traces_active
    with _state_lock:
        _traces_active += 1
        _tracer = tracer
    try:
        with _mode(grad_enabled=True):
            yield
    finally:
        with _state_lock:
            _traces_active -= 1
            if _traces_active == 0:
                _tracer = None


def transforms_running() -> int:
    """How many transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, hvp) this thread is inside: an inner
    one builds its results as Values in the graph whenever this is not 0, so that an outer one can
    differentiate through it, closures included (the levels torch.func and JAX keep)."""
    return getattr(_thread, "transform_depth", 0)


@contextmanager
def transform_level() -> Iterator[None]:
    """One transform's level for the block: the functions it runs see an outer transform running. No
    mode of its own (the engine's fast path stays on)."""
    depth = transforms_running()
    _thread.transform_depth = depth + 1
    try:
        yield
    finally:
        _thread.transform_depth = depth


@contextmanager
def observe_nodes(observer: Callable[[Any], None]) -> Iterator[None]:
    """Call observer(node) on every op node this thread makes inside the block, graph recording on
    (forward mode carries each node's tangent this way). Blocks nest: each open block observes, the
    outermost first, and the nodes an observer makes itself (a tangent computed on Values) are seen
    by the blocks outside it only, so a jvp of a jvp carries tangents of tangents."""
    outer = getattr(_thread, "observers", ())
    with _mode(grad_enabled=True, observers=outer + (observer,)):
        yield


def record(node: Any, a: Any, b: Any, op: ops.Op) -> None:
    """Finish a node made while some thread has a mode open: read this thread's own modes."""
    recording = is_grad_enabled()
    tracer = _tracer
    traced = tracer is not None and tracer.node(node, a, b, recording)
    if not recording:
        node._a = node._b = None
        node._op = None
        return
    node._a = a
    node._b = b
    node._op = op
    anomaly = current_anomaly()
    if anomaly is not None and not traced:  # a traced node has no number to check yet
        anomaly.record(node)
    observers = getattr(_thread, "observers", None)
    if observers:
        try:
            # Outermost first: an inner level's tangent is built from this node, whose outer tangents must
            # be known by then. What a level makes, only the levels outside it see.
            for level in range(len(observers)):
                _thread.observers = observers[:level]
                observers[level](node)
        finally:
            _thread.observers = observers


# --- detect_anomaly -----------------------------------------------------------------------------------


class AnomalyError(FloatingPointError):
    """A NaN or infinity appeared; the message names the op and where its node was created."""


# Frames in these files are the engine's own; a node's creation site is the first frame outside them.
_ENGINE_FILES = {os.path.abspath(__file__), os.path.abspath(ops.__file__),
                 *(os.path.join(os.path.dirname(os.path.abspath(__file__)), name) for name in ("engine.py", "kernels.py"))}


def _creation_site() -> str:
    """file:line of the first frame outside the engine: the user's line that made the node."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename) in _ENGINE_FILES:
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    filename, line = frame.f_code.co_filename, frame.f_lineno
    source = linecache.getline(filename, line).strip()
    return f"{filename}:{line}" + (f" ({source})" if source else "")


def _inputs_of(node: Any) -> tuple[Any, ...]:
    return () if node._a is None else (node._a,) if node._b is None else (node._a, node._b)


class AnomalyMode:
    """Remembers where each node was made, and checks every value and gradient for NaN and inf."""

    def __init__(self) -> None:
        self.sites: dict[int, tuple[Any, str]] = {}

    def record(self, node: Any) -> None:
        site = _creation_site()
        self.sites[id(node)] = (node, site)  # keeps node alive: ids stay unique while we look
        if not math.isfinite(node.data):
            inputs = ", ".join(f"{p.data:g}" for p in _inputs_of(node))
            raise AnomalyError(
                f"forward: {node._op.name}({inputs}) gave {node.data}; node created at {site}"
            )

    def site(self, node: Any) -> str:
        entry = self.sites.get(id(node))
        return entry[1] if entry else "<created outside detect_anomaly>"

    def check_pullback(self, node: Any, upstream: Any, passed: tuple[Any, ...]) -> None:
        """The backward sweep's per-node check: raise at the first non-finite contribution."""
        for k, contribution in enumerate(passed):
            if contribution is None:  # masked
                continue
            if not math.isfinite(data_of(contribution)):
                inputs = [p.data for p in _inputs_of(node)]
                raise AnomalyError(
                    f"backward: {node._op.name} passed {data_of(contribution)} to its input "
                    f"(local derivative {node._op.local(*inputs, node.data)[k]}, upstream gradient "
                    f"{data_of(upstream)}); node created at {self.site(node)}"
                )


@contextmanager
def detect_anomaly() -> Iterator[AnomalyMode]:
    """Raise `AnomalyError` at the first NaN or inf, forward or backward, naming op and file:line.

    Covers the ops of this thread inside the block, and `backward()` and `grad()` calls made inside it.
    """
    mode = AnomalyMode()
    with _mode(anomaly=mode):
        yield mode
