"""CPU burners that keep every core of this machine busy, for tests and benchmarks of grading on a busy server
(and scripts/with_burners.py, which runs any command beside them).

    with burners(per_core=2) as started:      # 2 spinning processes per core this process may use
        ...

Each burner is a `python -c` loop that spins, in a session of its own (setsid), so Linux's autogroup makes each
one a scheduling group of its own, as unrelated programs on a shared machine are: they are not lumped together
into one group that would weigh as one process. They are killed, by their own pids, when the block ends, and
each asks the kernel to kill it when the process that started it dies (prctl PR_SET_PDEATHSIG), so a killed
test worker or script leaves none spinning. The kernel follows the thread that started a burner: start them
from a thread that outlives them (the main thread, as every user here does).
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator

from reaper import spawn

# argv[1] is the pid of the process that started the burner: if it died before the death signal was asked
# for, the burner was already handed to another parent and ends at once.
BURNER = """import os, signal, sys
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass  # not Linux: the burner lives until it is killed
if os.getppid() != int(sys.argv[1]):
    os._exit(0)
while True:
    pass
"""


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@contextmanager
def burners(per_core: int = 2) -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    try:
        for _ in range(per_core * cores()):
            started.append(spawn([sys.executable, "-c", BURNER, str(os.getpid())], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL))
        yield started
    finally:
        for burner in started:
            burner.kill()
        for burner in started:
            burner.wait()
