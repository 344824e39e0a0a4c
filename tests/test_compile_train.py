"""`chainrule train moons --compiled`: the same learning curve as the eager engine's, and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from chainrule.cli import main
from chainrule.commands.train import DemoConfig, MoonsDemo


def run_json(capsys, *args: str) -> dict:
    assert main(["train", "moons", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_compiled_learning_curve_equals_the_eager_one(capsys, default_moons_run):
    """The full default demo, 100 steps: every loss and accuracy equal to 1e-9, the same final model.
    The eager run is the session's one (conftest.default_moons_run)."""
    compiled = run_json(capsys, "--compiled")
    eager_curve = default_moons_run["curve"]
    assert compiled["config"]["compiled"] is True and default_moons_run["config"]["compiled"] is False
    assert {**compiled["config"], "compiled": False} == default_moons_run["config"]
    assert len(compiled["curve"]) == len(eager_curve) == 100
    for ours, theirs in zip(compiled["curve"], eager_curve):
        assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-9, abs=0.0)
        assert ours["accuracy"] == theirs["accuracy"]
        assert ours["learning_rate"] == theirs["learning_rate"]
    assert compiled["final"]["loss"] == pytest.approx(default_moons_run["final"]["loss"], rel=1e-9)
    assert compiled["final"]["correct"] == 100


def test_the_python_api_trains_the_same_parameters_as_the_eager_engine():
    config = dict(samples=30, seed=4, sizes=[8, 6, 1], activation="tanh", steps=12)
    eager, compiled = MoonsDemo(DemoConfig(**config)), MoonsDemo(DemoConfig(**config, compiled=True))
    for k in range(12):
        eager.step(k)
        compiled.step(k)
    for p, q in zip(eager.model.parameters(), compiled.model.parameters()):
        assert q.data == pytest.approx(p.data, rel=1e-9, abs=1e-12)
        assert q.grad == pytest.approx(p.grad, rel=1e-9, abs=1e-12)


def test_compiled_without_numpy_is_a_usage_error_that_says_what_to_install():
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from chainrule.cli import main\n"
        "sys.exit(main(['train', 'moons', '--compiled', '--steps', '2', '--samples', '10']))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "chainrule train: error: chainrule.compile needs NumPy" in result.stderr
    assert "pip install numpy" in result.stderr
