"""`chainrule lessons new`: write a complete, valid lesson folder from the template next to this module.

The template (lessons/template/) is a small lesson of its own: every section, a graph, two
predictions, a quiz, and an exercise in Python, JavaScript and TypeScript. Its files say __ID__ and
__TITLE__ where the new lesson's id and title go.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from chainrule.text_safety import control_characters

__all__ = ["TEMPLATE_DIR", "ScaffoldError", "write_lesson"]

TEMPLATE_DIR = Path(__file__).with_name("template")
LESSON_ID = re.compile(r"[a-z][a-z0-9-]{0,39}")


class ScaffoldError(ValueError):
    """The lesson cannot be written: a bad id or title, or the folder exists already."""


def write_lesson(lesson_id: str, title: str, directory: Path) -> Path:
    """Write directory/lesson_id from the template; return the new folder."""
    # At most 30 characters here: the template's exercise id adds "-gradients" and must stay within 40.
    if not LESSON_ID.fullmatch(lesson_id) or len(lesson_id) > 30:
        raise ScaffoldError(f"the id {lesson_id!r} must be 1 to 30 lower-case letters, digits and dashes, "
                            "starting with a letter (it names the folder and the lesson's address)")
    title = " ".join(title.split())
    if control_characters(title):
        shown = ", ".join(control_characters(title))
        raise ScaffoldError(f"the title must be plain text, without control characters ({shown})")
    if not title or len(title) > 120:
        raise ScaffoldError("the title must be 1 to 120 characters")
    target = Path(directory) / lesson_id
    if target.exists():
        raise ScaffoldError(f"{target} exists already; choose another id or folder")
    shutil.copytree(TEMPLATE_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in sorted(target.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        # In JSON the title goes inside a string, so its quotes and backslashes are escaped.
        shown = json.dumps(title)[1:-1] if path.suffix == ".json" else title
        path.write_text(text.replace("__ID__", lesson_id).replace("__TITLE__", shown), encoding="utf-8")
    return target
