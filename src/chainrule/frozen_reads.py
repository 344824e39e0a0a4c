"""While chainrule.compile traces a function: the reads whose result the compiled graph would freeze, a
random draw and a clock read, each refused at the line of the user's code that made it.

A compiled graph is recorded once and replayed for every call, so a number drawn or read while tracing
would be the same number at every call. Three kinds of code draw, and each is seen a different way:

- Python code (the `random` module, `secrets`, `random.Random`): the profiler's call events.
- Built-in functions (`os.urandom`, `time.time`, `random.random`): the profiler's C call events.
- NumPy's generators (a `Generator`, a `RandomState`, the `numpy.random.*` functions): compiled code the
  profiler does not see, so their state is compared before and after every line of the user's code that
  runs while tracing. Watched: NumPy's global generator, and every generator the user's code reaches by
  name: a global, a local or closure variable, an argument, or an attribute of one (``self.rng``,
  ``np.random``), also through a bound method (``draw = rng.random``).

"The user's code" is every file outside chainrule and outside the Python installation (the standard
library, site-packages): a draw inside a library is named at the user's line that called the library.
"""

from __future__ import annotations

import ctypes
import os
import random
import sys
import sysconfig
import threading
import weakref
from pathlib import Path
from types import CodeType, FrameType, MethodType, ModuleType
from typing import Any, Callable

__all__ = ["FrozenReads", "user_frame", "site_text", "creation_site"]

_PACKAGE = str(Path(__file__).resolve().parent) + os.sep
_LIBRARY = tuple(sorted({str(Path(sysconfig.get_paths()[key]).resolve()) + os.sep
                         for key in ("stdlib", "platstdlib", "purelib", "platlib")}))
_RANDOM_FILE = str(Path(random.__file__).resolve())
_kinds: dict[str, str] = {}  # a code file's kind, "own", "library" or "user", by its name as Python gives it


def _kind(filename: str) -> str:
    kind = _kinds.get(filename)
    if kind is None:
        # chainrule first: installed, it is inside site-packages too
        resolved = str(Path(filename).resolve()) if not filename.startswith("<") else filename
        kind = ("own" if resolved.startswith(_PACKAGE) else
                "library" if filename.startswith("<frozen") or resolved.startswith(_LIBRARY) else "user")
        _kinds[filename] = kind
    return kind


def user_frame(frame: FrameType | None) -> FrameType | None:
    """The innermost frame of the user's code from `frame` outwards; else the innermost one outside chainrule
    (library code called by chainrule itself); else None."""
    outside = None
    while frame is not None:
        kind = _kind(frame.f_code.co_filename)
        if kind == "user":
            return frame
        if kind == "library" and outside is None:
            outside = frame
        frame = frame.f_back
    return outside


def site_text(filename: str, line: int) -> str:
    """file:line and the source of that line, as every refusal names it."""
    import linecache

    source = linecache.getline(filename, line).strip()
    return f"{filename}:{line}" + (f" ({source})" if source else "")


def _importing(frame: FrameType | None) -> bool:
    """Whether the code runs inside an import (a module seeding its own generator as it loads)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


# --- what draws or reads the clock ---------------------------------------------------------------------------

_CLOCKS = {("time", name) for name in (
    "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
    "process_time_ns", "thread_time", "thread_time_ns")}
_DATETIME_CLOCKS = {"now", "utcnow", "today"}
_ENTROPY = {(os.name, "urandom"), (os.name, "getrandom")}
_READING_MODULES = {module for module, _ in _CLOCKS | _ENTROPY}


_RANDOM_TYPES: dict[type, bool] = {}  # a type: whether it is random.Random or a subclass


def _builtin_read(function: Any) -> tuple[str, bool] | None:
    """(what, is a clock) for a built-in function that draws or reads the clock, else None. Runs at every
    call of a built-in while tracing, so the common answer (a list's append, math.tanh) is found fast."""
    owner: Any = getattr(function, "__self__", None)
    kind = type(owner)
    if kind is ModuleType:
        if owner.__name__ not in _READING_MODULES:  # builtins, math: most calls end here
            return None
        key = (owner.__name__, function.__name__)
        if key in _ENTROPY:
            return f"drawing random bytes (os.{key[1]}())", False
        if key in _CLOCKS:
            return f"reading the clock (time.{key[1]}())", True
        return None
    if kind is type:
        if owner.__module__ == "datetime" and function.__name__ in _DATETIME_CLOCKS:
            return f"reading the clock ({owner.__name__}.{function.__name__}())", True
        return None
    random_type = _RANDOM_TYPES.get(kind)
    if random_type is None:
        random_type = _RANDOM_TYPES[kind] = issubclass(kind, random.Random)
    return (f"drawing a random number ({function.__name__}())", False) if random_type else None


def creation_site(frame: FrameType) -> tuple[str, int]:
    """(file, line) of the first frame outside chainrule from `frame` outwards: where a node was made. Runs
    for every node made while tracing, so it only skips chainrule's frames (a library's line is kept)."""
    while _kinds.get(frame.f_code.co_filename) == "own" and frame.f_back is not None:
        frame = frame.f_back
    if _kind(frame.f_code.co_filename) == "own" and frame.f_back is not None:  # first time this file is met
        return creation_site(frame)
    return frame.f_code.co_filename, frame.f_lineno


class _Generator:
    """A NumPy bit generator being watched: a cheap fingerprint of its state, and how the refusal names it."""

    __slots__ = ("bits", "name", "fingerprint", "last")

    def __init__(self, bits: Any, name: str) -> None:
        self.bits, self.name = bits, name
        address = None
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is not None and type(bits) is numpy_random.MT19937:
            address = bits.ctypes.state_address  # 624 words and a position: its `.state` costs 70 us to build
        self.fingerprint: Callable[[], Any] = (
            (lambda: bits.state) if address is None else (lambda: ctypes.string_at(address, 624 * 4 + 4)))
        self.last = self.fingerprint()

    def drew(self) -> bool:
        now = self.fingerprint()
        if now == self.last:
            return False
        self.last = now
        return True


def _numpy_generator(value: Any) -> tuple[Any, str] | None:
    """(the bit generator, a name) when `value` is a NumPy generator or bit generator, else None."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is None:
        return None
    if isinstance(value, numpy_random.Generator):
        return value.bit_generator, "a NumPy Generator"
    if isinstance(value, numpy_random.RandomState):
        if value is getattr(numpy_random.mtrand, "_rand", None):
            return value._bit_generator, "numpy.random (its global generator)"  # type: ignore[union-attr]
        return value._bit_generator, "a NumPy RandomState"
    if isinstance(value, numpy_random.BitGenerator):
        return value, f"a NumPy {type(value).__name__}"
    return None


# --- the threads a trace starts ----------------------------------------------------------------------------

_THREAD_START = threading.Thread.start.__code__


class _NewThreads:
    """The hooks every new thread starts with while any watch is open (threading.setprofile and settrace are
    for the whole process). A thread that a watched thread started takes its watch's hooks at its first event;
    any other thread takes the hooks it would have had, and is never slowed or refused again."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: list[FrozenReads] = []
        self.adopted: weakref.WeakKeyDictionary[threading.Thread, FrozenReads] = weakref.WeakKeyDictionary()
        self.previous_profile: Any = None
        self.previous_trace: Any = None

    def add(self, watch: "FrozenReads") -> None:
        with self.lock:
            if not self.open:  # the first watch: the process's own hooks, put back when the last one closes
                self.previous_profile, self.previous_trace = threading.getprofile(), threading.gettrace()
                threading.setprofile(self.on_profile)
                threading.settrace(self.on_trace)
            self.open.append(watch)

    def remove(self, watch: "FrozenReads") -> None:
        with self.lock:
            self.open.remove(watch)  # watches in several threads may close in any order
            if not self.open:
                threading.setprofile(self.previous_profile)
                threading.settrace(self.previous_trace)

    def adopt(self, thread: threading.Thread, watch: "FrozenReads") -> None:
        with self.lock:
            self.adopted[thread] = watch

    def watch_of_this_thread(self) -> "FrozenReads | None":
        """The open watch that adopted this thread, if any (a closed one lets its threads go)."""
        with self.lock:
            watch = self.adopted.get(threading.current_thread())
            return watch if watch is not None and not watch.closed and watch in self.open else None

    def on_profile(self, frame: FrameType, event: Any, arg: Any) -> None:
        watch = self.watch_of_this_thread()
        hook = watch.on_profile if watch is not None else self.previous_profile
        sys.setprofile(hook)
        if hook is not None:
            hook(frame, event, arg)

    def on_trace(self, frame: FrameType, event: Any, arg: Any) -> Any:
        watch = self.watch_of_this_thread()
        hook = watch.on_call if watch is not None and watch.lines else self.previous_trace
        sys.settrace(hook)
        return hook(frame, event, arg) if hook is not None else None


_NEW_THREADS = _NewThreads()


# --- the watch ---------------------------------------------------------------------------------------------


class FrozenReads:
    """`with FrozenReads(refuse, lines):` while a trace runs, in this thread and the threads it starts (and
    the threads those start); a thread any other code starts meanwhile, such as a server's worker for another
    request, is left alone. (NumPy's global generator is the exception: its state is all there is to see, so a
    draw from it in any thread while the trace runs is taken for the trace's.)
    `refuse(what, site)` records a refusal and returns the error, which is raised where the read happened
    (recorded, it fails the compile even if the function catches it).

    The profiler alone (``lines=False``) refuses the random module and the built-ins at their line, watches
    the generators each of the user's functions reaches when it is called, and compares their states when
    the block ends: `drew` then names a generator that drew, and `unsure` says a function reached a
    generator only after it was called (a local assigned from an expression), so its draws could not be
    seen. Either way the caller traces once more with ``lines=True``, where the user's code also runs
    line by line and every line is checked: slower (a Python call per line and per call), so it runs only
    then, and names the line.
    """

    def __init__(self, refuse: Callable[[str, str], BaseException], lines: bool) -> None:
        self.refuse, self.lines = refuse, lines
        self.generators: dict[int, _Generator] = {}
        # Objects already searched for the names of one code (kept alive with those names, so ids stay unique).
        self.examined: dict[tuple[int, int], tuple[Any, tuple[str, ...]]] = {}
        self.last = threading.local()  # per thread: (file, line) of the user's line that ran last
        numpy_random = sys.modules.get("numpy.random")
        self.generator_types: tuple[type, ...] = () if numpy_random is None else (
            numpy_random.Generator, numpy_random.RandomState, numpy_random.BitGenerator)
        self.drew: str | None = None
        self.unsure = False
        self.globals_searched: set[CodeType] = set()
        self.closed = False  # the block has ended: a thread it started that lives on lets its hooks go

    def __enter__(self) -> "FrozenReads":
        self.previous_profile, self.previous_trace = sys.getprofile(), sys.gettrace()
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is not None:
            self.watch(numpy_random.mtrand._rand)  # the numpy.random.* functions draw from it
        _NEW_THREADS.add(self)
        sys.setprofile(self.on_profile)
        if self.lines:
            sys.settrace(self.on_call)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closed = True
        sys.setprofile(self.previous_profile)
        if self.lines:
            sys.settrace(self.previous_trace)
        _NEW_THREADS.remove(self)
        for generator in self.generators.values():
            if generator.drew():
                self.drew = self.drew or generator.name
        if self.lines and self.drew is not None and exc[0] is None:  # after the user's last line
            site = getattr(self.last, "site", None)
            raise self.refuse(f"drawing a random number from {self.drew}",
                              site_text(*site) if site else "a line of the traced function")

    # The profiler: Python code of the random module, built-in functions that draw or read the clock, and
    # the generators each of the user's functions reaches.
    def on_profile(self, frame: FrameType, event: Any, arg: Any) -> None:
        if self.closed:  # a thread the trace started that lives on: it takes the hooks it would have had
            _NEW_THREADS.on_profile(frame, event, arg)
            return
        if self.previous_profile is not None:
            self.previous_profile(frame, event, arg)
        if event == "c_call":
            read = _builtin_read(arg)
            if read is not None:
                what, clock = read
                kind = _kind(frame.f_code.co_filename)
                # A clock read inside a library (logging stamps its records) does not reach the graph.
                if kind == "user" or (kind == "library" and not clock and not _importing(frame)):
                    self.refused(what, frame)
        elif event == "call":
            filename = frame.f_code.co_filename
            if frame.f_code is _THREAD_START:  # a thread this code starts is the trace's too
                _NEW_THREADS.adopt(frame.f_locals["self"], self)
            elif filename == _RANDOM_FILE:
                caller = frame.f_back
                if caller is not None and caller.f_code.co_filename != _RANDOM_FILE \
                        and _kind(caller.f_code.co_filename) != "own" and not _importing(caller):
                    self.refused(f"drawing a random number ({frame.f_code.co_name}())", caller)
            elif not self.lines and _kinds.get(filename) != "own" and _kind(filename) == "user":
                self.search(frame)
        elif event == "return" and not self.lines and _kinds.get(frame.f_code.co_filename) == "user":
            known = len(self.generators)
            self.search(frame)  # the locals it assigned: a generator among them drew unseen, if it drew
            self.unsure = self.unsure or len(self.generators) > known

    def refused(self, what: str, frame: FrameType) -> None:
        site = user_frame(frame) or frame
        raise self.refuse(what, site_text(site.f_code.co_filename, site.f_lineno))

    # The line tracer (lines=True): only the user's frames are traced line by line; every line is checked.
    def on_call(self, frame: FrameType, event: Any, arg: Any) -> Any:
        if self.closed:
            return _NEW_THREADS.on_trace(frame, event, arg)
        outer = self.previous_trace(frame, event, arg) if self.previous_trace is not None else None
        if _kinds.get(frame.f_code.co_filename) == "own" or _kind(frame.f_code.co_filename) != "user":
            return outer
        return self.tracer(frame, outer)

    def tracer(self, frame: FrameType, outer: Any) -> Callable[..., Any]:
        def on_event(frame: FrameType, event: str, arg: Any) -> Any:
            nonlocal outer
            if outer is not None:
                outer = outer(frame, event, arg)
            if self.closed:  # a frame of a thread that outlived the trace
                return outer
            if event == "line":
                self.check()  # what the line before drew
                self.search(frame)
                self.last.site = (frame.f_code.co_filename, frame.f_lineno)
            elif event == "return":
                self.check()
                caller = user_frame(frame.f_back)
                if caller is not None:
                    self.last.site = (caller.f_code.co_filename, caller.f_lineno)
            return on_event

        return on_event

    def check(self) -> None:
        for generator in self.generators.values():
            if generator.drew():
                site = getattr(self.last, "site", None)
                where = site_text(*site) if site else "a line of the traced function"
                raise self.refuse(f"drawing a random number from {generator.name}", where)

    def watch(self, value: Any) -> None:
        found = _numpy_generator(value)
        if found is not None and id(found[0]) not in self.generators:
            self.generators[id(found[0])] = _Generator(*found)

    def search(self, frame: FrameType) -> None:
        """Watch the generators this frame's code reaches by name (its locals, globals and their attributes);
        a code's globals once per trace (they are the module's, and change rarely)."""
        code = frame.f_code
        names = code.co_names
        for value in frame.f_locals.values():
            self.search_value(value, names, 0)
        if code not in self.globals_searched:
            self.globals_searched.add(code)
            found = frame.f_globals
            for name in names:
                if name in found:
                    self.search_value(found[name], names, 0)

    def search_value(self, value: Any, names: tuple[str, ...], depth: int) -> None:
        if type(value) is MethodType:  # draw = rng.random
            value = value.__self__
        key = (id(value), id(names))
        if key in self.examined:
            return
        if isinstance(value, self.generator_types):
            self.watch(value)
            return
        if type(value).__dictoffset__ == 0 or depth == 2:  # no attributes to follow (a Value, a number)
            return
        self.examined[key] = (value, names)
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            for name in names:  # only the attributes this code names: self.rng, np.random
                if name in attributes:
                    self.search_value(attributes[name], names, depth + 1)

