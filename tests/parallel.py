"""What the suite needs to run on several pytest-xdist workers (`make test` starts one per core, plus one).

once_per_run: work the whole run does once, however many workers run it. A session fixture runs once per
worker process; for the expensive ones whose result is plain data, the first worker that needs it does the
work under a file lock and leaves the result in the run's shared temporary folder; the others wait for the
lock, then read it.

refuse_shared_node_ids: pytest-xdist schedules by node id, so two tests with one id would run as one.
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


def refuse_shared_node_ids(items) -> None:
    """Refuse two tests with one node id (tests/conftest.py calls this on every collection): pytest-xdist
    schedules by node id, and would run only one of them without a word."""
    seen: dict[str, int] = {}
    for item in items:
        seen[item.nodeid] = seen.get(item.nodeid, 0) + 1
    shared = {nodeid: count for nodeid, count in seen.items() if count > 1}
    if shared:
        listed = "; ".join(f"{nodeid} ({count} tests)" for nodeid, count in sorted(shared.items())[:5])
        raise pytest.UsageError(f"tests that share a node id (give each its own, e.g. with a parameter): {listed}")
