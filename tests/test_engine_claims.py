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
    section = engine_section()
    assert "benchmarks/bench_engine.py" in section and "clean process" in section
    ratios = [float(r) for r in re.findall(r"\| ([0-9.]+)x faster \| [0-9.]+x faster \|", section)]
    assert len(ratios) == 3, "the engine table has three workloads, each with a ratio against micrograd"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    claim = re.search(r"([0-9.]+)-([0-9.]+)x faster than micrograd", readme)
    assert claim, "the README's first paragraph states the speed against micrograd"
    assert (claim.group(1), claim.group(2)) == (f"{min(ratios):.1f}", f"{max(ratios):.1f}")
