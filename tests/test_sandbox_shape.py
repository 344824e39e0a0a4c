"""The sandbox's shape: one ordered list of layers, each applied by its own module, from one plan, and no
Python between fork and exec in the grader (a threaded server).

- a grading in each configuration (every layer; no bubblewrap; neither bubblewrap nor a cgroup) runs no
  Python in a forked child of the grader: os.register_at_fork's child hook, which runs whenever Python
  code runs after a fork (a preexec_fn, os.fork), never fires;
- no source file passes a preexec_fn;
- what applies a layer (setrlimit, setresuid, cgroup.procs, the filter, the subreaper, bwrap's options,
  setpriv) is written in that layer's module only, and every module with a `prepare` is in LAYERS;
- for every combination of layers, what the grader does while the run waits, the launcher's steps and
  bubblewrap's options come in LAYERS' order;
- a step that fails in the launcher, or a bwrap that makes no sandbox, is the run's start error, and
  nothing is executed after it.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chainrule.grading.sandbox import launcher, layers
from chainrule.grading.sandbox.isolation import OPTIONAL_LAYERS, Isolation, probe
from chainrule.grading.sandbox.limits import Limits

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "chainrule"
SANDBOX = PACKAGE / "grading" / "sandbox"
LAYER_NAMES = [layer.__name__.rsplit(".", 1)[-1] for layer in layers.LAYERS]

GRADE_IN_EACH_CONFIGURATION = """
import os, sys
marks = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.register_at_fork(after_in_child=lambda: os.write(marks, b"!"))
from chainrule.lessons import register_exercises
from chainrule.grading import grade, reference_source
from chainrule.grading import sandbox
register_exercises()
for switches in ((), ("BWRAP",), ("BWRAP", "CGROUP")):
    for layer in ("BWRAP", "CGROUP"):
        os.environ.pop(f"CHAINRULE_SANDBOX_NO_{layer}", None)
    for layer in switches:
        os.environ[f"CHAINRULE_SANDBOX_NO_{layer}"] = "1"
    sandbox._probe_cached.cache_clear()
    result = grade("neuron-grads", "python", reference_source("neuron-grads", "python"))
    layers = result["isolation"]["layers"]
    print(result["verdict"], [name for name in ("bubblewrap", "cgroup") if not layers[name]])
"""


def test_no_python_runs_between_fork_and_exec_in_the_grader(tmp_path):
    marks = tmp_path / "python-after-fork"
    marks.write_bytes(b"")
    done = subprocess.run([sys.executable, "-c", GRADE_IN_EACH_CONFIGURATION, str(marks)], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["passed []", "passed ['bubblewrap']", "passed ['bubblewrap', 'cgroup']"]
    assert marks.read_bytes() == b"", "Python code ran in a forked child of the grader"


def sources() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "runtime" not in p.parts]


def test_no_source_passes_a_preexec_fn():
    offenders = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "preexec_fn":
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


# What applies each layer, and the one module it may be written in.
APPLIED_BY = {
    r"\bsetrlimit\(|\bprlimit\(": "rlimits",
    r"\bset(res)?[ug]id\(|\bsetgroups\(|--reuid": "identity",
    r"cgroup\.procs": "cgroups",
    r"PR_SET_SECCOMP\b|--seccomp": "seccomp",
    r"PR_SET_CHILD_SUBREAPER\b|\bos\.fork\(": "reaper",
    r"--unshare|--die-with-parent|--block-fd": "bubblewrap",
    r"--ro-bind|--tmpfs|--remount-ro": "mounts",
}


# The class server's own process, not a run's sandbox: it raises its own open-files limit for its connections
# (web/connections.py) and forks its web processes (commands/serve_processes.py). A run's limits and processes
# are the layers' alone.
SERVERS_OWN = {(PACKAGE / "web" / "connections.py", "rlimits"), (PACKAGE / "commands" / "serve_processes.py", "reaper")}


def test_each_layer_is_applied_by_its_own_module_only():
    offenders = []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        for pattern, owner in APPLIED_BY.items():
            if re.search(pattern, text) and path != SANDBOX / f"{owner}.py" and (path, owner) not in SERVERS_OWN:
                offenders.append(f"{path.relative_to(PACKAGE)} does what the {owner} layer does ({pattern})")
    assert offenders == []


def test_every_module_that_prepares_a_layer_is_in_the_ordered_list():
    preparing = {path.stem for path in SANDBOX.glob("*.py")
                 if any(isinstance(node, ast.FunctionDef) and node.name == "prepare"
                        for node in ast.parse(path.read_text(encoding="utf-8")).body)}
    assert preparing == set(LAYER_NAMES)
    assert LAYER_NAMES == ["cgroups", "rlimits", "reaper", "bubblewrap", "mounts", "seccomp", "identity"]


class FakeGroup:
    def admit(self, pids: list[int]) -> None: ...
    def kill_all(self, deadline: float) -> None: ...
    def remove(self) -> None: ...


class FakeBackend:
    def create(self, limits: Limits) -> FakeGroup:
        return FakeGroup()


COMBINATIONS = [set(c) for n in range(5) for c in itertools.combinations(OPTIONAL_LAYERS, n)
                if os.geteuid() == 0 or "identity" not in c]  # switching users needs root


@pytest.mark.parametrize("present", COMBINATIONS, ids=lambda present: "+".join(sorted(present)) or "none")
def test_each_combination_of_layers_is_applied_in_the_lists_order(present, tmp_path):
    isolation = Isolation(
        bubblewrap="/usr/bin/bwrap" if "bubblewrap" in present else None,
        cgroup=FakeBackend() if "cgroup" in present else None,
        seccomp=b"\0" * 8 if "seccomp" in present else None,
        missing=(),
        identity=(65431, 65431) if "identity" in present else None,
    )
    plan = layers.plan_run(isolation, Limits(), str(tmp_path), [sys.executable, "-c", "pass"])
    try:
        steps = [name for name, _ in plan.steps]
        assert steps == sorted(steps, key=LAYER_NAMES.index)
        bwrap = "bubblewrap" in present
        linux = sys.platform.startswith("linux")
        expected = (["rlimits"] if not linux else []) + (["reaper"] if not bwrap and "cgroup" not in present and linux
                                                         else [])
        expected += [name for name in ("seccomp", "identity") if name in present and not bwrap]
        assert steps == expected
        # While the first processes wait: the cgroup takes them in, then their limits are lowered (prlimit).
        assert len(plan.on_start) == ("cgroup" in present) + linux
        if bwrap:
            assert plan.command() == plan.bwrap + ["--"] + plan.inside + [os.path.realpath(sys.executable), "-c", "pass"]
            options = plan.bwrap
            first_mount = options.index("--ro-bind")
            last_mount = max(i for i, option in enumerate(options) if option == "--remount-ro")
            assert max(i for i, option in enumerate(options) if option.startswith("--unshare")) < first_mount
            assert "--block-fd" in options and "--info-fd" in options  # bwrap waits for the grader itself
            if "seccomp" in present:
                assert options.index("--seccomp") > last_mount
            assert bool(plan.inside) == ("identity" in present)
        else:
            sync_fd, launcher_steps, program = launcher.parse(plan.command(3)[4:])  # as the launcher reads it
            assert sync_fd == 3 and [(name, tuple(args)) for name, args in launcher_steps] == plan.steps
            assert program == [sys.executable, "-c", "pass"] and plan.bwrap == plan.inside == []
    finally:
        plan.clean_up()


def test_a_step_that_fails_is_a_start_error_and_nothing_is_executed(tmp_path):
    isolation = Isolation(bubblewrap=None, cgroup=None, seccomp=None, missing=())
    witness = tmp_path / "executed"
    plan = layers.plan_run(isolation, Limits(), str(tmp_path), ["/bin/sh", "-c", f"touch {witness}"])
    plan.step("seccomp", 987654)  # a filter file the launcher does not have
    try:
        with pytest.raises(layers.StartError, match=r"^the seccomp layer could not be applied: .*Bad file descriptor"):
            layers.start(plan)
    finally:
        plan.clean_up()
    assert not witness.exists()


def test_a_bwrap_that_makes_no_sandbox_is_a_start_error(tmp_path):
    bwrap = probe().bubblewrap
    if bwrap is None:
        pytest.skip("no bubblewrap here")
    isolation = Isolation(bubblewrap=bwrap, cgroup=None, seccomp=None, missing=())
    plan = layers.plan_run(isolation, Limits(), str(tmp_path), [sys.executable, "-c", "pass"])
    plan.bwrap.append("--no-such-option")
    try:
        with pytest.raises(layers.StartError, match="bwrap could not make the sandbox: .*no-such-option"):
            layers.start(plan)
    finally:
        plan.clean_up()
