"""The house rules of the code's shape, checked on the source so that a change that breaks one fails here.

- the engine (engine.py, ops.py, modes.py, forward.py) imports nothing else of the project;
- grading knows nothing of the web or of progress storage;
- SQL lives in progress/ only (no sqlite3 anywhere else, so none in web routes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "chainrule"


def project_imports(path: Path) -> set[str]:
    """Every chainrule module a file imports, at any depth of the file (function-level too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("chainrule"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("chainrule"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def python_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*.py") if "exercise_files" not in p.parts and "runtime" not in p.parts]


ENGINE = ("engine", "ops", "modes", "forward")


@pytest.mark.parametrize("name", ENGINE)
def test_the_engine_imports_nothing_else_of_the_project(name: str) -> None:
    # `from chainrule import ops` reads as the modules "chainrule" and "chainrule.ops": both fine.
    outside = {i for i in project_imports(PACKAGE / f"{name}.py")
               if i != "chainrule" and not i.startswith(tuple(f"chainrule.{m}" for m in ENGINE))}
    assert outside == set()


def test_grading_knows_nothing_of_the_web_or_progress() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(i for i in project_imports(path)
                                               if i.startswith(("chainrule.web", "chainrule.progress", "chainrule.lessons")))
        for path in python_files(PACKAGE / "grading")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_sql_lives_in_progress_only() -> None:
    offenders = []
    for path in python_files(PACKAGE):
        if "progress" in path.relative_to(PACKAGE).parts:
            continue
        text = path.read_text(encoding="utf-8")
        if "sqlite3" in text or ".execute(" in text:
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []
