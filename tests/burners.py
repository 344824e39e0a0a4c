"""CPU burners that keep every core of this machine busy, for tests and benchmarks of grading on a busy server.

    with burners(per_core=2) as started:      # 2 spinning processes per core this process may use
        ...

Each burner is `python -c "while True: pass"` in a session of its own (setsid), so Linux's autogroup makes each
one a scheduling group of its own, as unrelated programs on a shared machine are: they are not lumped together
into one group that would weigh as one process. They are killed, by their own pids, when the block ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator

BURNER = "while True: pass"


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@contextmanager
def burners(per_core: int = 2) -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    try:
        for _ in range(per_core * cores()):
            started.append(subprocess.Popen([sys.executable, "-c", BURNER], start_new_session=True,
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        yield started
    finally:
        for burner in started:
            burner.kill()
        for burner in started:
            burner.wait()
