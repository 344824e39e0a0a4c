"""The Python blocks of the docs run, in order, in one namespace: a doc that rots fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["walkthrough.md", "engine.md", "README.md"])
def test_doc_code_blocks_run(name: str) -> None:
    blocks = python_blocks(ROOT / name if name == "README.md" else DOCS / name)
    assert len(blocks) >= (8 if name == "walkthrough.md" else 2), f"{name} lost its code"
    namespace: dict = {"__name__": f"docs.{name}"}
    for number, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"{name}#block{number}", "exec"), namespace)  # noqa: S102 (our own docs)
        except Exception as error:  # pragma: no cover - the message is the point
            pytest.fail(f"{name}, block {number} failed: {error!r}\n{block}")
