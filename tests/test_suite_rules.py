"""The rules that let `make test` spread the suite over worker processes (pytest-xdist)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from parallel import refuse_shared_node_ids

TESTS = Path(__file__).resolve().parent


def test_two_tests_with_one_node_id_are_refused_by_name() -> None:
    items = [SimpleNamespace(nodeid=nodeid) for nodeid in ("a.py::t", "a.py::u", "b.py::t[x]", "a.py::t")]
    with pytest.raises(pytest.UsageError, match=r"a\.py::t \(2 tests\)"):
        refuse_shared_node_ids(items)
    refuse_shared_node_ids(items[:3])  # distinct ids pass


def test_work_done_once_per_run_is_done_by_one_of_three_worker_processes(tmp_path: Path) -> None:
    """Three processes (as three workers of one run) ask at once: one makes the folder, all three read it."""
    run = tmp_path / "run"
    run.mkdir()
    worker = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        sys.path.insert(0, {str(TESTS)!r})
        from parallel import once_per_run

        class Factory:  # what once_per_run uses of pytest's tmp_path_factory
            def getbasetemp(self):
                return Path({str(run)!r}) / ("popen-" + sys.argv[1])

        def make(folder):
            with open(Path({str(tmp_path)!r}) / "made", "a") as log:
                log.write(sys.argv[1] + "\\n")
            time.sleep(0.5)  # long enough for the others to be waiting on the lock
            (folder / "result").write_text("42")

        print((once_per_run(Factory(), "answer", make) / "result").read_text())
    """)
    processes = [subprocess.Popen([sys.executable, "-c", worker, name], stdout=subprocess.PIPE, text=True,
                                  env=dict(os.environ, PYTEST_XDIST_WORKER=name)) for name in ("gw0", "gw1", "gw2")]
    outputs = [process.communicate(timeout=60)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0]
    assert outputs == ["42\n"] * 3
    assert len((tmp_path / "made").read_text().split()) == 1  # made once, by whichever came first
