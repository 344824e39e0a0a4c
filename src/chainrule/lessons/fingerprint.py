"""The lessons' content hash: what a class grades with, so that a run is never graded against other cases.

    lessons_hash()     # "3f2a…" (64 hex digits), the same for every process that loaded the same lessons

It covers every file that can change a grade or a check: each lesson on the path, in path order, with every
file of its folder (lesson.json, quiz.json, the prose, and the exercise folders: cases, starters, reference
solutions), and the grader's harnesses (grading/runtime). `chainrule serve --lessons DIR` records it in the
class database and stamps every queued run with it; `chainrule worker --lessons DIR` grades only the runs
stamped with its own (docs/classroom.md, "The class's own lessons").
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from chainrule.lessons.loader import lesson_cache, lesson_folder, lesson_ids

__all__ = ["lessons_hash", "short_hash"]

HARNESSES = Path(__file__).resolve().parent.parent / "grading" / "runtime"
SHORT = 12  # hex digits a message shows of a hash


def _files(folder: Path) -> list[Path]:
    """Every file under ``folder`` but hidden ones and Python's caches, in a fixed order."""
    return sorted(path for path in folder.rglob("*") if path.is_file()
                  and not any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(folder).parts))


@lesson_cache
def lessons_hash() -> str:
    """SHA-256 over the lessons on the path (ids, then each folder's files by relative path and content) and
    the grader's harnesses; computed once per process and again only when lessons are added."""
    digest = hashlib.sha256()
    roots = [(f"lesson {lesson_id}", lesson_folder(lesson_id)) for lesson_id in lesson_ids()]
    for name, root in [*roots, ("harnesses", HARNESSES)]:
        digest.update(f"{name}\0".encode())
        for path in _files(root):
            content = path.read_bytes()
            digest.update(f"{path.relative_to(root).as_posix()}\0{len(content)}\0".encode())
            digest.update(content)
    return digest.hexdigest()


def short_hash(full: str) -> str:
    """The first SHORT hex digits, as messages show a hash ('' for none)."""
    return full[:SHORT] if full else "(none)"
