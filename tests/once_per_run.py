"""Work the whole test run does once, however many pytest-xdist workers run it (`make test` starts one per
core, plus one).

A session fixture runs once per worker process. For the expensive ones whose result is plain data, the first
worker that needs it does the work under a file lock and leaves the result in the run's shared temporary
folder; the other workers wait for the lock, then read it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest
from filelock import FileLock


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder shared by every worker of this run (pytest's own temporary folder for a run without workers)."""
    base = tmp_path_factory.getbasetemp()
    # Under pytest-xdist each worker's temporary folder is <the run's folder>/popen-gwN.
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder <run folder>/<name>, filled by make(folder) in the first worker that asks for it."""
    folder = run_folder(tmp_path_factory) / name
    done = folder / ".done"
    with FileLock(str(folder) + ".lock"):
        if not done.is_file():
            folder.mkdir(exist_ok=True)
            make(folder)
            done.touch()
    return folder
