"""A server process keeps at most SERVER_ARENAS malloc arenas (commands/malloc_arenas.py), counted by glibc
itself: malloc_info() lists one <heap> per arena. Each thread that allocates gets an arena of its own until the
limit (8 per core by default), so eight busy threads make eight without the limit and two with it."""

from __future__ import annotations

import ctypes.util
import platform
import subprocess
import sys

import pytest

from chainrule.commands.malloc_arenas import SERVER_ARENAS

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="malloc arenas are glibc's")

COUNT_ARENAS = r"""
import ctypes, ctypes.util, re, sys, tempfile, threading
if sys.argv[1] == "limited":
    from chainrule.commands.malloc_arenas import limit_malloc_arenas
    assert limit_malloc_arenas()
start = threading.Barrier(8)
def busy():
    start.wait()  # all eight allocate at the same moment
    kept = [bytearray(2048) for _ in range(2000)]
    start.wait()  # and keep their memory until all have allocated
threads = [threading.Thread(target=busy) for _ in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
with tempfile.NamedTemporaryFile(suffix=".xml") as report:
    stream = libc.fopen(report.name.encode(), b"w")
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.malloc_info(0, stream)
    libc.fclose.argtypes = [ctypes.c_void_p]
    libc.fclose(stream)
    print(len(re.findall(r"<heap nr=", open(report.name).read())))
"""


def arenas(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", COUNT_ARENAS, mode], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_a_server_process_keeps_at_most_two_malloc_arenas():
    assert ctypes.util.find_library("c")
    assert arenas("default") > SERVER_ARENAS  # the threads did take arenas of their own
    assert arenas("limited") <= SERVER_ARENAS

