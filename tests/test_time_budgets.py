"""The suite's own cost, kept in view: the per-file CPU-time budget (tests/time_budgets.py, a pytest plugin;
its budgets in tests/time_budgets.toml) run on tiny suites of its own, and `make test-fast`'s list of files
(docs/architecture.md, "Running a fast subset of the tests")."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from make_targets import make_dry_run

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

# Each test spends a known amount of CPU time: half a second in the test process, or in a child process it
# waits for (the plugin counts both). A loop on the process's own CPU clock, so the amount is the same on a
# quiet and on a busy machine; only the wall time it takes differs.
SPIN = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end:\n    pass\n"
TINY_SUITE = {
    "test_here.py": "def test_spins_in_this_process():\n" + "".join(f"    {line}\n" for line in SPIN.splitlines()),
    "test_child.py": ("import subprocess, sys\n\n\ndef test_spins_in_a_child_process():\n"
                      f"    subprocess.run([sys.executable, '-c', {SPIN!r}], check=True)\n"),
    "test_cheap.py": "def test_costs_nothing():\n    assert True\n",
}


def run_tiny_suite(tmp_path: Path, budgets: str, *options: str) -> subprocess.CompletedProcess:
    """pytest with the plugin over TINY_SUITE in a folder of its own (its own rootdir, none of this suite's
    settings), with the budgets file given."""
    for name, source in TINY_SUITE.items():
        (tmp_path / name).write_text(source, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "budgets.toml").write_text(budgets, encoding="utf-8")
    # Only the plugins it needs: the many this environment installs would make each run take seconds.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "time_budgets", "--time-budgets", "budgets.toml",
                           "-p", "no:cacheprovider", *options], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


WORKERS = [pytest.param(["-p", "no:xdist"], id="one-process"), pytest.param(["-p", "xdist", "-n", "2"], id="two-xdist-workers")]


@pytest.mark.parametrize("workers", WORKERS)
def test_a_file_over_its_cpu_budget_fails_the_run_and_is_named_with_its_time_and_budget(tmp_path, workers) -> None:
    run = run_tiny_suite(tmp_path, 'default = 60\n[files]\n"test_child.py" = 0.2\n', *workers)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "3 passed" in run.stdout, run.stdout  # every test passed: the budget alone fails the run
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("OVER BUDGET")]
    spent = re.fullmatch(r"OVER BUDGET: test_child\.py took ([\d.]+) s of CPU time, over its budget of 0\.2 s "
                         r"\(budgets\.toml\)", line)
    # The child's half second counts (measured in the child, reported by the worker, added up by the controller).
    assert spent and float(spent.group(1)) >= 0.5, line


# A session-wide fixture (as the one Chromium, a PostgreSQL cluster) ends after a worker's last test; the work
# it does then (half a second of CPU in the process it started, asked for at its end and waited for) is the
# session's, not the last file's.
SESSION_WIDE = ("import subprocess, sys\nimport pytest\n\n\n@pytest.fixture(scope='session', autouse=True)\n"
                "def browser_like():\n    started = subprocess.Popen([sys.executable, '-c', 'import sys\\nsys.stdin.read()\\n' + "
                + repr(SPIN) + "], stdin=subprocess.PIPE)\n    yield\n    started.communicate(b'')\n")

# A test that starts a process it never waits for: the child forks a grandchild, which spins and then closes
# the pipe the test reads; the child ends at once. The grandchild is reaped by whoever adopts it, not by the
# test (as Chromium's renderers, or a server started in a session of its own): getrusage never counts it.
ORPHAN = ("import os, subprocess, sys\n\n\ndef test_spins_in_a_process_it_never_waits_for():\n"
          "    code = 'import os, time\\nif os.fork() == 0:\\n' + ''.join('    ' + line + '\\n' for line in "
          f"{SPIN!r}.splitlines()) + '    print(1)\\nos._exit(0)\\n'\n"
          "    run = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE, check=True)\n"
          "    assert run.stdout == b'1\\n'\n")
# Named to run first in one process (files run in name order), so that the last there is test_here.py: where no
# cgroup counts the grandchild, the orphan's file costs next to nothing, and the session's half second on it
# would stay under its budget.
ORPHAN_FILE = "test_adopted.py"

# Every budget below is under its file's own CPU time plus the session-wide fixture's half second (the orphan's
# where a cgroup counts its grandchild), so that half second put on any file (the one that ran last) would fail
# the run.
PASSING_BUDGETS = f'default = 0.4\n[files]\n"test_child.py" = 0.9\n"test_here.py" = 0.9\n"{ORPHAN_FILE}" = 0.9\n'


@pytest.fixture(scope="module", params=WORKERS)
def passing_run(request, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    """One run of the tiny suite with the orphan's file and the session-wide fixture added, within every
    budget, and its --time-report: the three tests below read each their own part of it (the summary's rows
    and budgets; the session's CPU kept off the files; the orphan's grandchild charged to its file), where
    each ran the same suite once more for its part."""
    folder = tmp_path_factory.mktemp("passing")
    (folder / "conftest.py").write_text(SESSION_WIDE, encoding="utf-8")
    (folder / ORPHAN_FILE).write_text(ORPHAN, encoding="utf-8")
    run = run_tiny_suite(folder, PASSING_BUDGETS, "--time-report", "times.json", *request.param)
    assert run.returncode == 0 and "OVER BUDGET" not in run.stdout, run.stdout + run.stderr
    return run, json.loads((folder / "times.json").read_text(encoding="utf-8"))


def test_files_within_their_budgets_pass_and_the_summary_shows_where_the_time_went(passing_run) -> None:
    run, _ = passing_run
    rows = {match.group(4): (float(match.group(2)), float(match.group(3))) for match in re.finditer(
        r"^ *([\d.]+) s wall +([\d.]+) s CPU  of +([\d.]+) s +1 tests  (test_\w+\.py)$", run.stdout, re.MULTILINE)}
    assert set(rows) == {*TINY_SUITE, ORPHAN_FILE}, run.stdout
    assert rows["test_here.py"][0] >= 0.5 and rows["test_child.py"][0] >= 0.5, rows
    assert rows["test_cheap.py"][1] == 0.4 and rows["test_here.py"][1] == 0.9, rows  # each file's own budget


def test_what_the_session_wide_fixtures_do_at_their_end_is_not_charged_to_the_file_that_ran_last(passing_run) -> None:
    """The fixture's half second at its end is shown as the session's, not put on the last file's budget (the
    run passed: PASSING_BUDGETS)."""
    run, report = passing_run
    assert report["session_cpu"] >= 0.5 and set(report["files"]) == {*TINY_SUITE, ORPHAN_FILE}, report
    assert "(the session-wide fixtures, ended after each worker's last test)" in run.stdout, run.stdout


def test_a_process_a_test_starts_and_never_waits_for_is_charged_to_its_file(passing_run) -> None:
    run, report = passing_run
    if report["counted"] != ["cgroup"]:
        pytest.skip(f"this machine gives the tests no cpuacct group of their own ({report['counted']})")
    assert report["files"][ORPHAN_FILE]["cpu"] >= 0.5, report
    assert "time per test file (CPU: every process the tests started, alive or ended)" in run.stdout, run.stdout


def test_the_cpu_by_process_script_charges_a_command_s_spin_to_its_kind_of_process(tmp_path) -> None:
    """benchmarks/cpu_by_process.py (docs/performance.md), over a command that spins half a second of CPU."""
    if not any(" cgroup " in line and "cpuacct" in line for line in Path("/proc/self/mountinfo").read_text().splitlines()) \
            or os.geteuid() != 0:
        pytest.skip("the script needs a cgroup v1 cpuacct hierarchy and root")
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cpu_by_process.py"), "--every", "0.05", "--",
                          sys.executable, "-c", SPIN], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    total, *rows = run.stdout.splitlines()
    found = re.fullmatch(r" *([\d.]+) s CPU in all \(the group's counter\); the rows below hold ([\d.]+) s", total)
    assert found and float(found.group(1)) >= 0.5 and float(found.group(2)) >= 0.4, run.stdout
    kinds = {line.split(" s  ", 1)[1]: float(line.split()[0]) for line in rows}
    assert kinds[Path(sys.executable).name] >= 0.4, run.stdout  # named by its command line


def test_a_budgets_file_that_is_not_one_says_what_it_should_hold(tmp_path) -> None:
    run = run_tiny_suite(tmp_path, '[files]\n"test_here.py" = "fast"\n')
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.stdout + run.stderr
    assert 'a time budgets file holds `default = SECONDS` and a [files] table of "tests/FILE.py" = SECONDS' \
        in run.stderr, run.stderr


def test_the_suites_budgets_name_files_that_exist() -> None:
    budgets = tomllib.loads((TESTS / "time_budgets.toml").read_text(encoding="utf-8"))
    assert budgets["default"] > 0
    assert [name for name in budgets["files"] if not (ROOT / name).is_file()] == []


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_test_fast_runs_the_engine_grading_and_store_files_on_every_worker(tmp_path) -> None:
    commands = make_dry_run("test-fast", tmp_path, (".installed-lesson", ".installed-test"))
    (command,) = [c for c in commands if " -m pytest " in c]
    files = [word for word in command.split() if word.startswith("tests/")]
    assert files and [name for name in files if not (ROOT / name).is_file()] == [], command
    assert {"tests/test_engine_behaviour.py", "tests/test_grading.py", "tests/test_progress_store.py"} <= set(files)
    assert " -n " in command and "--dist loadfile" in command, command


def test_every_run_ends_with_the_fifteen_slowest_tests() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert "--durations=15" in options["addopts"].split(), options["addopts"]
