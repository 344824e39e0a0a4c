"""docs/performance.md's "A class under load" command (benchmarks/bench_class.py), on three learners: it runs end to
end against a real PostgreSQL, server and worker, and its figures say every learner's every run was graded, none
lost and no request failed. The benchmark had stopped working (it asked for the reference solutions before any
lesson's exercises were registered) and no test saw it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from chainrule import lessons

ROOT = Path(__file__).resolve().parents[1]
HANG_SECONDS = 240  # only a hang takes this long; the run takes seconds


@pytest.mark.timeout(HANG_SECONDS + 60)
def test_the_documented_class_benchmark_grades_every_run_of_a_small_class() -> None:
    learners = 3
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_class.py"), "--learners", str(learners),
                          "--workers", "1", "--think", "0.05", "--ramp", "0.5", "--cost-runs", "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    runs = learners * len(lessons.exercise_ids("backprop"))  # each learner sends each exercise's solution once
    assert re.search(rf"W=1: {learners} learners in .*\({runs} graded, 0 started twice\); errors 0; .*lost runs 0",
                     run.stdout), run.stdout
