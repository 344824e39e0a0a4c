"""`chainrule train moons`: the full demo reaches 100 %, its first steps equal PyTorch's, CLI errors exit 2."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from chainrule.cli import main
from chainrule.commands.train import DEFAULT_SEED
from chainrule.datasets import moons
from chainrule.nn import MLP


def strict_json(text: str) -> dict:
    """Parse as standard JSON: NaN, Infinity and -Infinity (Python's extensions) are refused."""

    def refuse(constant: str) -> float:
        raise ValueError(f"not standard JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def run_json(capsys, *args: str) -> dict:
    assert main(["train", "moons", "--json", *args]) == 0
    return strict_json(capsys.readouterr().out)


def test_strict_json_refuses_what_python_would_accept():
    with pytest.raises(ValueError, match="NaN"):
        strict_json('{"loss": NaN}')
    with pytest.raises(ValueError, match="Infinity"):
        strict_json('[-Infinity]')


def test_a_diverging_run_prints_standard_json_with_null_and_a_text_for_the_loss(capsys):
    """lr 1e308: the first update sends the weights to ~1e308, so the next forward pass overflows."""
    result = run_json(capsys, "--lr", "1e308", "--steps", "2", "--samples", "20", "--sizes", "4,1")
    first, second = result["curve"]
    assert first["loss"] > 0 and "loss_text" not in first  # finite: the weights were still small
    assert first["learning_rate"] == 1e308
    assert second["loss"] is None and second["loss_text"] in ("nan", "inf")
    assert result["final"]["loss"] is None and result["final"]["loss_text"] in ("nan", "inf")
    assert result["final"]["total"] == 20


def test_a_huge_learning_rate_is_printed_short_by_the_one_number_rule(capsys, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    assert main(["train", "moons", "--lr", "1e308", "--steps", "2", "--samples", "20", "--sizes", "4,1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].endswith("lr 1e308")  # chainrule.number_text.format_number, as the captions write it
    assert out[2].endswith("lr 5.5e307")  # 1e308 * (1 - 0.9 * 1 / 2)
    assert all(len(line) < 200 for line in out)


def test_full_demo_reaches_100_percent_with_the_documented_seed(default_moons_run):
    result = strict_json(json.dumps({k: v for k, v in default_moons_run.items() if k != "plot_file"}))
    assert result["config"]["seed"] == DEFAULT_SEED  # all defaults: 100 points, noise 0.1, MLP(2, [16, 16, 1])
    assert len(result["curve"]) == 100
    assert result["final"]["accuracy"] == 1.0 and result["final"]["correct"] == 100
    assert result["curve"][-1]["loss"] < result["curve"][0]["loss"] / 10
    assert [r["learning_rate"] for r in result["curve"][:2]] == pytest.approx([1.0, 0.991])
    assert result["curve"][-1]["learning_rate"] == pytest.approx(1.0 - 0.9 * 99 / 100)
    assert default_moons_run["plot_file"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_first_steps_equal_pytorch(capsys):
    torch = pytest.importorskip("torch")
    steps, seed, sizes = 4, 5, [8, 6, 1]
    result = run_json(capsys, "--steps", str(steps), "--seed", str(seed), "--sizes", "8,6,1", "--samples", "30")
    # The same start: weights from the same seeded initialisation, the same points.
    start = MLP(2, sizes, rng=random.Random(seed))
    points, labels = moons(30, 0.1, seed)
    layers = []
    for layer in start.layers:
        w = torch.tensor([[p.data for p in n.w] for n in layer.neurons], dtype=torch.float64, requires_grad=True)
        b = torch.tensor([n.b.data for n in layer.neurons], dtype=torch.float64, requires_grad=True)
        layers.append((w, b))
    x = torch.tensor(points, dtype=torch.float64)
    y = torch.tensor(labels, dtype=torch.float64)
    expected_losses, expected_accuracy = [], []
    for k in range(steps):
        h = x
        for i, (w, b) in enumerate(layers):
            h = h @ w.T + b
            if i < len(layers) - 1:
                h = torch.relu(h)
        score = h[:, 0]
        params = [t for pair in layers for t in pair]
        loss = torch.relu(1 - y * score).mean() + 1e-4 * sum((t * t).sum() for t in params)
        expected_losses.append(loss.item())
        expected_accuracy.append(((score > 0) == (y > 0)).double().mean().item())
        for t in params:
            t.grad = None
        loss.backward()
        with torch.no_grad():
            for t in params:
                t -= (1.0 - 0.9 * k / steps) * t.grad
    curve = result["curve"]
    assert [r["loss"] for r in curve] == pytest.approx(expected_losses, rel=1e-10)
    assert [r["accuracy"] for r in curve] == pytest.approx(expected_accuracy)


def test_plain_output_has_header_progress_lines_and_summary(capsys, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "0")  # rich: not a terminal, even where FORCE_COLOR is set
    assert main(["train", "moons", "--steps", "3", "--samples", "20", "--sizes", "4,1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("moons: 20 points (noise 0.1, seed 1); MLP(2, [4, 1])")
    assert [line.split()[1] for line in out[1:4]] == ["1/3", "2/3", "3/3"]
    assert out[-1].startswith("done in ") and "training accuracy" in out[-1]


def test_terminal_shows_a_progress_bar_with_loss_and_accuracy(capsys, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich treats stdout as a terminal
    assert main(["train", "moons", "--steps", "3", "--samples", "20", "--sizes", "4,1"]) == 0
    out = capsys.readouterr().out
    assert "training" in out and "3/3" in out and "loss 0." in out and "accuracy " in out
    assert "step 1/3" not in out  # the bar replaces the plain lines
    assert "done in " in out.rstrip().splitlines()[-1]  # after the cursor-show escape code


def test_zero_steps_is_allowed(capsys):
    result = run_json(capsys, "--steps", "0", "--samples", "10")
    assert result["curve"] == [] and result["final"]["total"] == 10


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sizes", "16,x,1"], "not a list of layer widths"),
        (["--sizes", "16,0,1"], "at least 1"),
        (["--sizes", "16,2"], "last layer must have width 1"),
        (["--steps", "-5"], "--steps must be a whole number >= 0"),
        (["--lr", "0"], "--lr must be a finite number > 0"),
        (["--noise", "nan"], "--noise must be a finite number >= 0"),
        (["--samples", "1"], "--samples must be a whole number >= 2"),
    ],
)
def test_bad_options_exit_2_with_a_clear_message(capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "moons", *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "path, message",
    [
        ("{tmp}/missing-dir/plot.png", "does not exist"),
        ("{tmp}", "is a directory"),
        ("{tmp}/plot.jpg", "must end in .png or .svg"),
        ("{tmp}/a-file/plot.png", "does not exist"),
    ],
)
def test_unwritable_plot_file_exits_2_before_training(capsys, tmp_path, path, message):
    (tmp_path / "a-file").write_text("not a directory")
    target = path.format(tmp=tmp_path)
    assert main(["train", "moons", "--steps", "1", "--samples", "10", "--plot", target]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_cli_process_exit_codes(tmp_path):
    ok = subprocess.run(
        [sys.executable, "-m", "chainrule", "train", "moons", "--steps", "1", "--samples", "10"],
        capture_output=True, text=True, timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "chainrule", "train", "moons", "--steps", "-1"],
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2 and "--steps" in bad.stderr
