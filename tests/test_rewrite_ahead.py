"""The controller rewrites the test modules' asserts before the workers start, and the workers use what it
wrote (tests/rewrite_ahead.py): a real pytest with one pytest-xdist worker on a folder of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

CONFTEST = """
import json, os
from pathlib import Path
import pytest
from rewrite_ahead import cached_form, rewrite_ahead

@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput"):  # a worker: the controller wrote ahead
        return
    written = rewrite_ahead(session.config)
    probe = Path(session.config.rootpath, "test_probe.py")
    cached = cached_form(probe).stat() if cached_form(probe).exists() else None
    Path(session.config.rootpath, "ahead.json").write_text(json.dumps({
        "written": [path.name for path in written],
        "cached": cached and [cached.st_ino, cached.st_mtime_ns]}))
"""

PROBE = "def test_probe():\n    seen = [1, 2]\n    assert len(seen) == 3\n"


def run_pytest(folder: Path, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}  # not this worker's
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as `make test` runs it: bytecode is kept
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only pytest-xdist: the others installed here cost seconds a run
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist", "-p", "no:cacheprovider", "-q",
                           *options], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    return done, json.loads((folder / "ahead.json").read_text())


def test_the_workers_read_the_asserts_the_controller_rewrote(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_probe.py").write_text(PROBE)
    probe = tmp_path / "test_probe.py"

    done, ahead = run_pytest(tmp_path, "-n", "1")
    assert "test_probe.py" in ahead["written"], ahead
    # The worker's assert is the rewritten one (its values are shown) ...
    assert "assert 2 == 3" in done.stdout, done.stdout + done.stderr
    # ... read from the controller's file: a worker that rewrote it would have replaced that file.
    from rewrite_ahead import cached_form

    after = cached_form(probe).stat()
    assert [after.st_ino, after.st_mtime_ns] == ahead["cached"]

    # Written once: the next run finds it; a run without workers writes nothing ahead.
    assert run_pytest(tmp_path, "-n", "1")[1]["written"] == []
    probe.write_text(PROBE.replace("== 3", "== 4"))
    assert run_pytest(tmp_path, "-n", "0")[1]["written"] == []
