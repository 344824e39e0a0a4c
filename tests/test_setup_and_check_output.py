"""Setting up and checking, as an author or a learner meets it: `make lesson ARGS="..."` passes options on;
`chainrule review` without `--lessons` says how to bring in an added lesson's question; `lessons check`
writes every path one way, counts a TypeScript error and the errors that follow from it once, and prints
problems and summary on one stream (standard output, as docs/authoring.md says)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from chainrule.commands.review_session import run_review
from chainrule.lessons.scaffold import write_lesson
from chainrule.lessons.validate import check_lesson_folder
from chainrule.progress import open_store

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.timeout(300)


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_lesson_passes_args_to_chainrule_lesson(tmp_path):
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    for name in ("Makefile", "pyproject.toml"):
        (tmp_path / name).write_bytes((ROOT / name).read_bytes())
    os.utime(tmp_path / "pyproject.toml", (1_000_000_000, 1_000_000_000))
    (tmp_path / ".venv" / ".installed-lesson").touch()
    commands = subprocess.run(["make", "-n", "lesson", "ARGS=--no-browser --port 8800 --data-dir /tmp/x"],
                              cwd=tmp_path, capture_output=True, text=True, check=True).stdout.splitlines()
    # (Under `make test` the outer make's flags make this one say which directory it enters and leaves.)
    assert [c.strip() for c in commands if "chainrule lesson" in c] == [
        ".venv/bin/chainrule lesson --no-browser --port 8800 --data-dir /tmp/x"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert 'make lesson ARGS="--no-browser --port 8800"' in readme


def test_review_without_lessons_says_how_to_bring_in_an_added_lessons_question(tmp_path):
    folder = write_lesson("added-review", "Added", tmp_path / "mine")
    past = datetime.now(timezone.utc) - timedelta(days=10)
    store = open_store(tmp_path / "data", clock=lambda: past)
    store.answer_question(folder.name, "sum-gradient", "-1", True)
    store.close()
    store = open_store(tmp_path / "data")
    out = io.StringIO()
    run_review(store, io.StringIO("q\n"), out)
    store.close()
    text = out.getvalue()
    assert "no longer in the lesson" not in text
    assert "its lesson 'added-review' is not loaded" in text
    assert "`chainrule review --lessons DIR`" in text


@pytest.fixture(scope="module")
def broken_lesson(tmp_path_factory):
    """A lesson folder under a scratch working directory, with one problem in lesson.json and a TypeScript
    solution whose one wrong type makes TypeScript report more errors after it."""
    cwd = tmp_path_factory.mktemp("author")
    folder = write_lesson("vec", "Vectors", cwd / "mine")
    lesson = folder / "lesson.json"
    lesson.write_text(lesson.read_text().replace('"minutes": 20,', '"minutes": "twenty",'))
    solution = folder / "exercises" / "1-gradients" / "solution.ts"
    solution.write_text(solution.read_text().replace("const values = [...leaves];", "const values: string[] = [...leaves];"))
    return cwd, folder


def test_lessons_check_prints_problems_and_summary_on_standard_output_with_paths_one_way(broken_lesson):
    cwd, folder = broken_lesson
    result = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "check", "mine/vec", "--no-grading"],
                            cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[-1] == "lesson vec: 1 problem"
    assert lines[0].startswith("mine/vec/lesson.json:")
    # From a directory the lesson is not in, every path is absolute.
    elsewhere = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "check", str(folder), "--no-grading"],
                               cwd=ROOT, capture_output=True, text=True)
    assert elsewhere.stdout.splitlines()[0].startswith(f"{folder.resolve()}/lesson.json:")


def test_lessons_check_counts_a_type_error_and_those_that_follow_from_it_once(broken_lesson, grade_once, monkeypatch):
    cwd, folder = broken_lesson
    monkeypatch.chdir(cwd)
    problems = check_lesson_folder(folder, grade_with=grade_once)
    [typed] = [p for p in problems if "solution.ts" in p]
    assert typed.startswith("mine/vec/exercises/1-gradients/solution.ts: ")  # relative like lesson.json's
    assert "TypeScript finds a type error at line 5, column 9: Type 'number[]' is not assignable to type 'string[]'" in typed
    assert "type errors TypeScript reports after it may all follow from this one" in typed
    assert "in your file" not in typed and "line 7" not in typed  # the cascade is not listed as the author's
