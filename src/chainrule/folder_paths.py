"""Paths that a lesson or exercise folder names stay inside that folder.

    inside_folder(folder, "sections/01-intro.md")  -> the resolved path of that file
    inside_folder(folder, "../../etc/os-release")   -> OutsideFolderError: ... leaves the folder ...

A folder is written by an author and may come from anywhere (`--lessons DIR`). Its JSON names other
files (prose, exercise folders, starters, solutions); were such a name absolute, climbing out with
"..", or a symbolic link pointing elsewhere, the lesson page or the grader would serve any file this
user can read (/etc/passwd as lesson prose). Every loader and `lessons check` resolve names here.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["OutsideFolderError", "inside_folder", "resolved_folder"]


class OutsideFolderError(ValueError):
    """A name in a folder's files points outside the folder; the message says which name and why."""


def inside_folder(folder: str | os.PathLike[str], relative: str, *, root: str | None = None) -> Path:
    """`folder / relative` with every symbolic link resolved, when it stays inside `folder` (itself
    resolved); OutsideFolderError otherwise. Whether the file exists is not checked here. ``root``: the
    folder already resolved (resolved_folder), when several names of one folder are checked in a row."""
    if not isinstance(relative, str) or not relative.strip():
        raise OutsideFolderError(f"{relative!r} is not a file name inside the folder {folder}")
    if "\x00" in relative:
        raise OutsideFolderError(f"{relative!r} holds a NUL character, which no file name may hold")
    if os.path.isabs(relative):
        raise OutsideFolderError(f"{relative!r} is an absolute path: name a file inside the folder {folder}, "
                                 "relative to it")
    resolved = Path(resolved_folder(folder) if root is None else root)
    target = (resolved / relative).resolve()
    if target != resolved and resolved not in target.parents:
        climbs = ".." in Path(relative).parts
        why = "climbs out of it with '..'" if climbs else "is a symbolic link that leads out of it"
        raise OutsideFolderError(f"{relative!r} leaves the folder {folder}: it {why} (to {target}); "
                                 "lesson files must be inside the lesson's folder")
    return target


def resolved_folder(folder: str | os.PathLike[str]) -> str:
    """The folder with every symbolic link resolved, as inside_folder compares with it."""
    return os.path.realpath(folder)
