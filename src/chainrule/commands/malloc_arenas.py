"""Fewer malloc arenas for a server process: memory that a crowd of requests took comes back.

glibc gives each thread that allocates its own arena, up to 8 per core, and frees memory back to an arena, not
to the system: a web process whose 40 request threads (and the password and grading threads) each served a
crowd keeps every arena at the size of its busiest moment. With 400 learners at once (docs/performance.md,
`benchmarks/bench_class_browsers.py`) each web process peaked at 450-510 MB; with two arenas, at 180-200 MB,
and the requests were no slower. This is glibc's `M_ARENA_MAX` (the MALLOC_ARENA_MAX variable), set from
inside the process before its threads start, since the variable is read only when a program starts.
"""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["SERVER_ARENAS", "limit_malloc_arenas"]

SERVER_ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def limit_malloc_arenas(count: int = SERVER_ARENAS) -> bool:
    """At most ``count`` malloc arenas for this process (and the processes it forks). True if the C library
    took it (glibc); False elsewhere (musl, macOS, Windows: nothing to do)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(_M_ARENA_MAX, int(count)) == 1
