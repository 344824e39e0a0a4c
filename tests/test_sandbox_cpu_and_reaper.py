"""One run gets about one core, and nothing outlives a run even without bubblewrap and cgroups.

docs/security.md, "One core per run" and "Survivors without a pid namespace or a cgroup":

- a run that forks spinners, each in its own session (its own scheduler autogroup), gets no more CPU
  time per wall second than its cgroup's quota (measured as the children's CPU time over the wall
  time they spun, inside the run: a ratio, not a duration);
- with bubblewrap and cgroups both turned off, a child that calls setsid and re-executes itself with an
  empty environment (no marker left to find it by) is gone when the grading returns: the reaper
  (sandbox/reaper.py: the launcher as a child subreaper) kills every descendant.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys

import pytest

from chainrule.grading import default_limits, grade, isolation_report, reference_source
from chainrule.grading.sandbox import Limits, cgroups, probe, run, scratch_directory
from chainrule.grading.sandbox.isolation import Isolation
from reaper import run_in_a_session, spawn
from sandbox_attacks import marker, python_attack, survivors

pytestmark = pytest.mark.timeout(120)

SPINNERS = """
import os, time
SPINNERS, WINDOW = 6, 1.5
start = time.monotonic()
children = []
for _ in range(SPINNERS):
    pid = os.fork()
    if pid == 0:
        os.setsid()  # its own session, so its own autogroup: no sharing of one group's slice
        while time.monotonic() - start < WINDOW:
            pass
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
wall = time.monotonic() - start
times = os.times()
print("CPU", times.children_user + times.children_system, "WALL", wall)
"""


def cpu_per_wall_second(cores: float) -> float:
    with scratch_directory() as scratch:
        script = os.path.join(scratch, "spin.py")
        with open(script, "w") as f:
            f.write(SPINNERS)
        outcome = run([sys.executable, "-I", "-S", script], scratch, Limits(cpu_cores=cores, wall_seconds=20))
    found = re.search(rb"CPU ([\d.]+) WALL ([\d.]+)", outcome.stdout)
    assert found, (outcome.stdout, outcome.stderr)
    return float(found[1]) / float(found[2])


needs_cpu_limit = pytest.mark.skipif(
    isolation_report()["layers"].get("cpu_limit") is False or not isolation_report()["layers"]["cgroup"],
    reason="no CPU limit here: " + "; ".join(m["error"] for m in isolation_report()["missing"]
                                             if m["layer"] in ("cgroup", "cpu_limit")))


@needs_cpu_limit
@pytest.mark.parametrize("cores", [0.25, 1.0])
def test_forked_spinners_in_their_own_sessions_get_no_more_than_the_runs_cores(cores):
    ratio = cpu_per_wall_second(cores)
    # The quota is enforced per 100 ms period; allow a period's worth of slack over 1.5 s, and the
    # spinners' start and exit (a run without the limit gets up to every core of the machine).
    assert ratio <= cores * 1.25 + 0.05, f"{ratio:.2f} CPU seconds per wall second with a quota of {cores}"


@needs_cpu_limit
def test_each_runs_cgroup_gets_a_quota_of_one_core_by_default():
    backend = probe().cgroup
    assert cgroups.cpu_quota_us(default_limits("python")) == cgroups.CPU_PERIOD_US == 100_000
    group = backend.create(default_limits("python"))
    try:
        if backend.version == 2:
            assert (group.paths[0] / "cpu.max").read_text().split() == ["100000", "100000"]
        else:
            cpu = group.paths[2]
            assert (cpu / "cpu.cfs_quota_us").read_text().strip() == "100000"
            assert (cpu / "cpu.cfs_period_us").read_text().strip() == "100000"
    finally:
        group.remove()
    assert isolation_report()["layers"]["cpu_limit"] is True


WEIGHT_OF_A_GROUP_MADE_AT_NICE_10 = """
import os, sys
os.nice(10)
from chainrule.grading.sandbox import probe
from chainrule.grading import default_limits
backend = probe().cgroup
group = backend.create(default_limits("python"))
try:
    name = "cpu.weight" if backend.version == 2 else "cpu.shares"
    print((group.paths[0 if backend.version == 2 else 2] / name).read_text().strip())
finally:
    group.remove()
"""


@needs_cpu_limit
def test_a_runs_cgroup_weighs_as_much_as_its_grader_at_its_nice():
    """A process in a cgroup of its own is scheduled by the group's weight, not its nice: a niced worker's run
    must weigh as the kernel weighs nice 10 (110 of 1024; 11 of 100 in cgroup v2)."""
    made = subprocess.run([sys.executable, "-c", WEIGHT_OF_A_GROUP_MADE_AT_NICE_10], capture_output=True, text=True,
                          timeout=60)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() in ("110", "11")
    assert [cgroups.cpu_weight(nice) for nice in (0, 1, 5, 10, 19)] == [1024, 819, 336, 110, 15]  # kernel: 820, 335


def test_the_threads_that_grade_in_serve_run_below_the_pages_and_weigh_so():
    """A class in SQLite grades in `chainrule serve`: its grading threads run at GRADING_NICE (Linux keeps a nice
    per thread), so a run's cgroup weighs 110, as a worker's; the pages' threads keep theirs."""
    from chainrule.classes.graded_runs import InProcessRuns
    from chainrule.turns import GRADING_NICE

    before = os.getpriority(os.PRIO_PROCESS, 0)
    runs = InProcessRuns(lambda learner: None)
    try:
        assert runs.threads.submit(lambda: (os.getpriority(os.PRIO_PROCESS, 0), cgroups._grader_weight())).result() \
            == (GRADING_NICE, cgroups.cpu_weight(GRADING_NICE))
    finally:
        runs.threads.shutdown()
    assert os.getpriority(os.PRIO_PROCESS, 0) == before  # this thread, as the pages' threads: unchanged


NICE_GRADER_SPINS = r"""
import os, sys, time
os.sched_setaffinity(0, {0})
os.nice(10)
from chainrule.grading.sandbox import Limits, run, scratch_directory
SPIN = "import os, time\nos.setsid()\nend = time.monotonic() + 2.0\nwhile time.monotonic() < end:\n    pass\n" \
       "t = os.times()\nprint('CPU', t.user + t.system)\n"
with scratch_directory() as scratch:
    with open(os.path.join(scratch, "spin.py"), "w") as f:
        f.write(SPIN)
    outcome = run([sys.executable, "-I", "-S", os.path.join(scratch, "spin.py")], scratch, Limits(wall_seconds=20))
print(outcome.stdout.decode().strip(), outcome.stderr.decode()[-500:])
"""


@needs_cpu_limit
def test_a_niced_graders_run_yields_the_core_to_a_busy_server_even_in_a_session_of_its_own():
    """One core, a busy process at nice 0 in a session of its own (a web server), and a run graded at nice 10
    whose program calls setsid: the run gets about a tenth of the core (110 / (1024 + 110)); as an autogroup of
    its own at nice 0 it would get half."""
    server = spawn([sys.executable, "-c", "import os, time\nos.sched_setaffinity(0, {0})\n"
                    "end = time.monotonic() + 30\nwhile time.monotonic() < end:\n    pass\n"])
    try:
        graded = run_in_a_session([sys.executable, "-c", NICE_GRADER_SPINS], timeout=60)
    finally:
        server.kill()
        server.wait()
    found = re.search(r"CPU ([\d.]+)", graded.stdout)
    assert found, graded.stdout + graded.stderr
    share = float(found[1]) / 2.0
    assert share < 0.3, f"the niced run got {share:.0%} of the core beside a busy server"


@pytest.mark.skipif(not isolation_report()["layers"]["cgroup"], reason="no cgroup layer here")
def test_run_groups_a_killed_grader_left_are_swept_and_no_other():
    """A grader killed mid-run (SIGKILL, a host's OOM killer) cannot remove its run's groups: the next probe
    removes the empty ones older than any run, and leaves a young group and one with a process in it."""
    import time

    backend = probe().cgroup
    left, young, busy = (backend.create(default_limits("python")) for _ in range(3))
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        busy.admit([sleeper.pid])
        long_ago = time.time() - 2 * cgroups.LEFTOVER_SECONDS
        for path in left.paths + busy.paths:
            os.utime(path, (long_ago, long_ago))
        backend.sweep_leftovers()
        assert [path.exists() for path in left.paths + young.paths + busy.paths] == \
            [False] * len(left.paths) + [True] * (len(young.paths) + len(busy.paths))
    finally:
        sleeper.kill()
        sleeper.wait()
        for group in (left, young, busy):
            group.remove()


# ---------------------------------------------------------------- without bubblewrap and cgroups


@pytest.fixture
def no_namespace_no_cgroup(monkeypatch):
    """The degraded sandbox: bubblewrap and cgroups turned off by their switches, probed anew."""
    from chainrule.grading import sandbox

    monkeypatch.setenv("CHAINRULE_SANDBOX_NO_BWRAP", "1")
    monkeypatch.setenv("CHAINRULE_SANDBOX_NO_CGROUP", "1")
    sandbox._probe_cached.cache_clear()
    report = isolation_report()
    assert report["layers"]["bubblewrap"] is False and report["layers"]["cgroup"] is False
    yield report
    monkeypatch.undo()
    sandbox._probe_cached.cache_clear()


def kill_survivors(mark: str) -> list[int]:
    """The marked processes still alive, killed (so that a failing run leaves nothing behind)."""
    found = survivors(mark)
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return found


ESCAPE = """
if os.fork() == 0:
    os.setsid()  # out of the process group
    if os.fork() == 0:  # and re-parented once its parent leaves
        os.execve(sys.executable, ['python', '-c', 'import time; time.sleep(1000)  # %s'], {})  # no marker
    os._exit(0)
"""


@pytest.mark.parametrize("ending", ["returns", "times out"])
def test_a_setsid_child_with_an_empty_environment_does_not_outlive_the_run(no_namespace_no_cgroup, ending):
    mark = marker()
    body = ESCAPE % mark + ("time.sleep(1000)\n" if ending == "times out" else "")
    limits = dataclasses.replace(default_limits("python"), wall_seconds=3.0)
    try:
        result = grade("neuron-grads", "python", python_attack(mark, body), limits=limits)
        left = survivors(mark)  # at once: the reaper has swept before the grading returned
    finally:
        kill_survivors(mark)
    assert left == [], f"processes marked {mark} outlived the run"
    assert result["verdict"] == ("passed" if ending == "returns" else "timeout"), result["message"]
    assert "kept below a reaper" in no_namespace_no_cgroup["details"]["survivors"]


def test_the_degraded_sandbox_still_grades_and_reports_signals(no_namespace_no_cgroup):
    passed = grade("neuron-grads", "python", reference_source("neuron-grads", "python"))
    assert passed["verdict"] == "passed", passed["message"]
    killed = grade("neuron-grads", "python", python_attack(marker(), "os.kill(os.getpid(), 9)"))
    assert killed["verdict"] == "crashed" and "SIGKILL" in killed["message"], killed["message"]


def reaped(*program: str, seccomp: bytes | None = None, ids: tuple[int, int] | None = None):
    """Run `program` through the launcher below the reaper (no bubblewrap, no cgroup), with the filter
    and the switch of user when given; (returncode, stdout, stderr)."""
    from chainrule.grading.sandbox import layers

    isolation = Isolation(bubblewrap=None, cgroup=None, seccomp=seccomp, missing=(), identity=ids)
    with scratch_directory() as scratch:
        plan = layers.plan_run(isolation, Limits(), scratch, program, env={"PATH": "/usr/bin:/bin"})
        assert plan.reaped
        try:
            process = layers.start(plan)
            out, err = process.communicate(timeout=30)
        finally:
            plan.clean_up()
    return subprocess.CompletedProcess(program, process.returncode, out.decode(), err.decode())


def test_the_reapers_child_drops_to_the_sandbox_user_and_loads_the_filter_and_the_reaper_does_not():
    status = "grep -E '^(Uid|Seccomp|NoNewPrivs):' /proc/self/status; grep -E '^(Uid|Seccomp):' /proc/$PPID/status"
    filter_program = probe().seccomp
    ids = (65431, 65431) if os.geteuid() == 0 else None
    done = reaped("/bin/sh", "-c", status, seccomp=filter_program, ids=ids)
    lines = done.stdout.split("\n")
    assert done.returncode == 0, done.stderr
    if os.geteuid() == 0:
        assert lines[0].split()[1:] == ["65431"] * 4  # the program: the sandbox's user, every uid
        assert lines[3].split()[1] == "0"  # its parent, the reaper: still the grader's user
    if filter_program is not None:
        assert lines[1:3] == ["NoNewPrivs:\t1", "Seccomp:\t2"]  # the program: filtered
        assert lines[4] == "Seccomp:\t0"  # the reaper: not


@pytest.mark.parametrize("script,returncode", [("exit 3", 3), ("kill -9 $$", -9), ("kill -XCPU $$", -24)])
def test_the_reaper_ends_as_its_program_ended(script, returncode):
    assert reaped("/bin/sh", "-c", script).returncode == returncode


# ------------------------------------------------------------- the hang guard meets a run that is ending

# A program that says it is up, then ends when its stdin closes (an event the test causes, not a duration).
ENDS_ON_EOF = "import sys\nprint('up', flush=True)\nsys.stdin.read()\n"


def _guard_at_its_deadline(monkeypatch, readings: list[float], *, ends_at_the_guard: bool):
    """A real process that is up, and its hang guard, whose CPU readings of the run are `readings` in turn (the
    last one at the guard, when the process is told to end if `ends_at_the_guard`): (process, guard, limits)."""
    from types import SimpleNamespace

    from chainrule.grading.sandbox import runner, usage

    limits = dataclasses.replace(default_limits("python"), pipe_grace_seconds=60)  # the bound only catches a hang
    process = subprocess.Popen([sys.executable, "-c", ENDS_ON_EOF], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout.readline() == b"up\n"
    left = list(readings)

    def measure(pids) -> usage.Usage:
        if len(left) == 1 and ends_at_the_guard:
            process.stdin.close()  # it ends now, as the guard reads it
        return usage.Usage(ran=left.pop(0), waited=0.0)

    monkeypatch.setattr(usage, "measure", measure)
    guard = runner._Guard(SimpleNamespace(limits=limits, cgroup=None), process, started=0.0)
    guard.over_cpu(runner.CPU_CHECK_SECONDS)  # the readings before the guard
    return process, guard, limits


def test_a_run_that_is_ending_as_its_guard_comes_ends_by_itself_not_as_a_timeout(monkeypatch):
    """Killed by its CPU limit just as its hang guard came, a run's main process was gone while bubblewrap
    still reaped it: the guard read next to no CPU time, called the run not starved, and its verdict was the
    learner's timeout ("was not computing") instead of its CPU limit (test_grading_starved's endless loop, 1
    in 12 to 26 runs). Less CPU time at the guard than at the reading before means the run is ending: it is
    let end, and its end is its outcome."""
    from chainrule.grading.sandbox import runner

    process, guard, limits = _guard_at_its_deadline(monkeypatch, [0.99, 0.007], ends_at_the_guard=True)
    stdout, _, timed_out, _ = runner._read_capped(process, limits, 0.0, guard)  # the deadline has passed
    assert (timed_out, guard.ending, stdout) == (False, True, b"")
    assert process.wait() == 0


def test_a_run_that_is_not_ending_at_its_guard_is_still_stopped_there(monkeypatch):
    from chainrule.grading.sandbox import runner

    process, guard, limits = _guard_at_its_deadline(monkeypatch, [0.5, 0.6], ends_at_the_guard=False)
    try:
        _, _, timed_out, _ = runner._read_capped(process, limits, 0.0, guard)
        assert (timed_out, guard.ending, process.poll()) == (True, False, None)  # at once: not after a grace
    finally:
        process.kill()
        process.wait()
