"""The fenced blocks of a Markdown doc, as tests/test_docs.py and tests/test_classroom_guide.py read them."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\S*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(\S.*?)\s*-->$")
COMMAND_LANGUAGES = {"sh", "bash", "shell", "console"}
# The README's console example of training, run by default_moons_run as the README shows it (tests/test_docs.py
# reads its printed lines from there rather than training again).
README_TRAINING = "chainrule train moons --plot moons.png"


def docs_environment(folder) -> dict[str, str]:
    """The environment a doc's console example runs in (tests/test_docs.py): this environment's `chainrule`
    first on the PATH, a progress store in ``folder``, a plain 100-column terminal."""
    return {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
            "CHAINRULE_DATA_DIR": str(folder / "data"), "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}


COMMAND_WORDS = ("$ ", "chainrule ", "make ", "pip ", "pipx ", "uv ", "python", ".venv/", "bash ", "printf ", "rm ")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int            # line of the opening fence, 1-based
    language: str
    text: str
    not_run: str | None  # the reason, when the block is marked not to run

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def shows_a_command(self) -> bool:
        first = next((line.strip() for line in self.text.splitlines() if line.strip()), "")
        return self.language in COMMAND_LANGUAGES or (self.language in ("", "text") and first.startswith(COMMAND_WORDS))


def blocks(path: Path) -> list[Block]:
    found, lines = [], path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        before = next((lines[i].strip() for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        marker = NOT_RUN.match(before)
        found.append(Block(path, index + 1, opening.group(1), "\n".join(lines[index + 1:end]) + "\n",
                           marker.group(1) if marker else None))
        index = end + 1
    return found
