"""`chainrule lessons check` names each failing case of a reference solution, with the expected and
the actual values (issue 21 item 9); expected numbers by hand: d tanh(u)/du = 1 - tanh(u)^2."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path


def test_a_failing_reference_solution_names_its_case_and_values(tmp_path: Path) -> None:
    made = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "new", "demo", "--title", "Demo", "lessons"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    solution = next((tmp_path / "lessons" / "demo" / "exercises").glob("*/solution.py"))
    text = solution.read_text()
    right = "grads[a] += (1 - values[here] ** 2) * grads[here]"
    assert right in text
    solution.write_text(text.replace(right, "grads[a] += values[here] * grads[here]"))  # tanh's slope forgotten
    done = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "check", "lessons/demo"],
                          cwd=tmp_path, capture_output=True, text=True)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "case 'a tanh at the end'" in output and "case 'a value used twice'" not in output
    # leaves 0.5, 1.5: u = 0.75, o = tanh(u); d o/d x0 = (1 - o^2) * 1.5 (expected) vs o * 1.5 (actual).
    o = math.tanh(0.75)
    assert f"expected [{round((1 - o * o) * 1.5, 9)}" in output and f"got [{round(o * 1.5, 9)}" in output
