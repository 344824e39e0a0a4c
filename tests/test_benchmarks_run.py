"""Benchmarks whose figures docs/performance.md shows, run end to end on the smallest input, so that a benchmark
that stops working fails here (no other test runs them; both had stopped working unseen):

* "A class under load" (benchmarks/bench_class.py) on three learners, against a real PostgreSQL, server and
  worker: every learner's every run graded, none lost, no request failed (it had asked for the reference
  solutions before any lesson's exercises were registered);
* "Lesson page" (benchmarks/bench_page.py), one load of each kind in Chromium's headless shell: every mark the page sets is
  read and the table printed (it waited for a lesson page where the server's sign-in link now leads to the path).

Times are printed, never asserted.
"""

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
def test_the_class_benchmark_grades_every_run_of_a_small_class() -> None:
    learners = 3
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_class.py"), "--learners", str(learners),
                          "--workers", "1", "--think", "0.05", "--ramp", "0.5", "--cost-runs", "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    runs = learners * len(lessons.exercise_ids("backprop"))  # each learner sends each exercise's solution once
    assert re.search(rf"W=1: {learners} learners in .*\({runs} graded, 0 started twice\); errors 0; .*lost runs 0",
                     run.stdout), run.stdout


@pytest.mark.timeout(HANG_SECONDS + 60)
def test_the_lesson_page_benchmark_reads_every_mark_and_prints_its_table() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_page.py"), "--runs", "1",
                          "--browser", "chromium-headless-shell"],
                         cwd=ROOT, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = re.findall(r"^(lesson ready \(cold\)|lesson complete \(cold\)|lesson ready \(warm\)|lesson complete "
                      r"\(warm\)|path page ready \(warm\)) +\d+ +\d+ +\d+ +[\d.]+x +[\d.]+x$", run.stdout, re.MULTILINE)
    assert len(rows) == 5, run.stdout
