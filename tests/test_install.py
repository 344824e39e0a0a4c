"""How chainrule is installed: what `make lesson` and `make test` install, what a plain `pip install .` brings,
and what grading says when the system lacks a library the sandbox uses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from make_targets import make_dry_run

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_pyseccomp_is_a_runtime_dependency_on_linux_only():
    (entry,) = [r for r in PROJECT["dependencies"] if r.lower().startswith("pyseccomp")]
    assert entry.replace('"', "'").endswith("sys_platform == 'linux'"), entry


def pip_installs(commands: list[str]) -> list[str]:
    return [c.split("install", 1)[1].split()[-1] for c in commands if "pip install" in c and "--upgrade pip" not in c]


@pytest.mark.parametrize(("target", "stamps", "installs"), [
    ("lesson", (), ["."]),                                         # fresh: chainrule alone
    ("test", (), ["'.[test]'"]),                                  # fresh: everything
    ("test", (".installed-lesson",), ["'.[test]'"]),              # lesson first, then test: add the test tools
    ("lesson", (".installed-lesson", ".installed-test"), []),     # test first, then lesson: nothing to add
    ("test", (".installed-lesson", ".installed-test"), []),
])
def test_make_installs_what_each_target_needs(tmp_path, target, stamps, installs):
    commands = make_dry_run(target, tmp_path, stamps)
    assert pip_installs(commands) == installs, commands


def test_a_full_install_also_marks_the_lesson_installed():
    rule = re.search(r"^\$\(TEST_STAMP\):.*?(?=^\S)", (ROOT / "Makefile").read_text(), re.MULTILINE | re.DOTALL)
    assert rule and "$(LESSON_STAMP)" in rule.group(0).split("pip install", 1)[1]


@pytest.mark.skipif(sys.platform != "linux", reason="grading needs Linux namespaces")
def test_a_missing_libseccomp_is_reported_and_grading_goes_on(tmp_path):
    """pyseccomp loads the system's libseccomp when imported; without it grading must say so, not crash."""
    from chainrule.grading import starter_source

    starter = tmp_path / "neuron-grads.py"
    starter.write_text(starter_source("neuron-grads", "python"), encoding="utf-8")
    code = (
        "import ctypes.util, sys\n"
        "real = ctypes.util.find_library\n"
        "ctypes.util.find_library = lambda name: None if name == 'seccomp' else real(name)\n"
        "from chainrule.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, "check", str(starter), "--json"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 1, result.stderr  # the starter is graded, and fails as a starter should
    graded = json.loads(result.stdout)
    assert graded["status"] == "fail" and graded["tests"]
    (seccomp,) = [m for m in graded["isolation"]["missing"] if m["layer"] == "seccomp"]
    assert "libseccomp" in seccomp["error"] and "install" in seccomp["error"], seccomp


@pytest.mark.parametrize(("files", "cores"), [
    ({}, None),                                                        # no cgroup files: nproc
    ({"cpu.max": "max 100000\n"}, None),                               # v2 without a quota
    ({"cpu.max": "50000 100000\n"}, 1),                                # v2, half a core: one
    ({"cpu.max": "150000 100000\n"}, 2),                               # v2, 1.5 cores: two
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),  # v1 without a quota
    ({"cpu/cpu.cfs_quota_us": "100000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),  # v1, one core
])
def test_make_test_starts_one_worker_more_than_the_cores_it_may_use(tmp_path: Path, files: dict, cores) -> None:
    """scripts/test-workers.sh: nproc, lowered to a cgroup CPU quota (which nproc does not see), plus one; at
    most 8."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    run = subprocess.run(["bash", str(ROOT / "scripts" / "test-workers.sh")], capture_output=True, text=True,
                         env=dict(os.environ, CGROUP_ROOT=str(tmp_path)), check=True)
    usable = len(os.sched_getaffinity(0)) if cores is None else min(cores, len(os.sched_getaffinity(0)))
    assert run.stdout == f"{min(usable + 1, 8)}\n" and run.stderr == ""
