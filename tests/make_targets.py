"""What `make TARGET` would run, read with `make -n` in a copy of the Makefile (test_install, test_time_budgets)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_dry_run(target: str, tmp_path: Path, stamps: tuple[str, ...]) -> list[str]:
    """The commands `make TARGET` would run in a checkout whose .venv has the given stamps (newer than pyproject)."""
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    os.utime(tmp_path / "pyproject.toml", (1_000_000_000, 1_000_000_000))
    for stamp in stamps:
        (tmp_path / ".venv" / stamp).touch()
    result = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, check=True)
    return result.stdout.splitlines()
