"""The README's speed claim is the engine table of docs/performance.md, not a number of its own.

The table comes from `benchmarks/bench_engine.py` (a clean process per engine); no test times anything.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def engine_section() -> str:
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    return text[text.index("## Engine"):text.index("\n## ", text.index("## Engine") + 1)]


def test_the_readme_states_the_range_of_the_measured_ratios_against_micrograd() -> None:
    """The README's three ranges against micrograd hold every ratio docs/performance.md measured: the quiet
    run's table and the table of ranges over runs (chain, sum of products, training step, in that order)."""
    section = engine_section()
    assert "benchmarks/bench_engine.py" in section and "clean process" in section
    quiet = [float(r) for r in re.findall(r"\| ([0-9.]+)x faster \| [0-9.]+x faster \|", section)]
    assert len(quiet) == 3, "the engine table has three workloads, each with a ratio against micrograd"
    ranges = [(float(lo), float(hi)) for lo, hi in
              re.findall(r"\| ([0-9.]+)-([0-9.]+)x faster \| [0-9.]+-[0-9.]+x faster \|", section)]
    assert len(ranges) == 3, "the table of ranges over runs has the same three workloads"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    claim = re.search(r"([0-9]+)-([0-9]+)x faster than micrograd on a tanh chain, ([0-9]+)-([0-9]+)x on a sum of "
                      r"products and ([0-9]+)-([0-9]+)x on a training step", readme)
    assert claim, "the README's first paragraph states the speed against micrograd, per workload"
    stated = [(int(claim.group(i)), int(claim.group(i + 1))) for i in (1, 3, 5)]
    for (low, high), measured, (run_low, run_high) in zip(stated, quiet, ranges):
        assert low <= min(measured, run_low) and max(measured, run_high) <= high, (stated, quiet, ranges)
