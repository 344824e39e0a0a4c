"""`chainrule progress export|import|info` as a learner runs them: real processes, exit codes, messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from chainrule.progress import open_store

pytestmark = pytest.mark.timeout(120)


def chainrule(*args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chainrule", *args],
        capture_output=True, text=True, timeout=60, input=stdin,
        env={**os.environ, **(env or {})},
    )


def fill(data_dir: Path) -> None:
    moment = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)
    store = open_store(data_dir, clock=lambda: moment, fuzzing=False)
    store.save_prediction("backprop", "n", 0.8814, True)
    store.record_submission("neuron-grads", "python", "src ∂", {"status": "pass", "tests": []})
    store.answer_question("backprop", "product-gradient", "6", True)
    store.save_explanation("backprop", "mine", ["seed"])
    store.close()


def document_without_time(path: Path) -> dict:
    document = json.loads(path.read_text(encoding="utf-8"))
    document.pop("exported_at")
    return document


def test_export_import_export_through_the_cli_round_trips(tmp_path):
    fill(tmp_path / "a")
    first = tmp_path / "first.json"
    done = chainrule("progress", "export", str(first), "--data-dir", str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr
    assert "Exported your progress to" in done.stdout

    done = chainrule("progress", "import", str(first), "--data-dir", str(tmp_path / "b"))
    assert done.returncode == 0, done.stderr
    assert "1 predictions" in done.stdout and "1 submissions" in done.stdout

    second = tmp_path / "second.json"
    # This time the data directory comes from the environment variable.
    done = chainrule("progress", "export", str(second), env={"CHAINRULE_DATA_DIR": str(tmp_path / "b")})
    assert done.returncode == 0, done.stderr
    assert document_without_time(second) == document_without_time(first)
    assert document_without_time(first)["predictions"][0]["value"] == 0.8814


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "is not valid JSON (line 1, column 2"),
        ('{"format": "chainrule.progress", "version": 7}', "this chainrule reads up to 2"),
        ("[1, 2]", "must be a JSON object"),
        (None, "cannot read"),
    ],
)
def test_import_of_a_bad_file_exits_1_with_the_reason_and_changes_nothing(tmp_path, content, says):
    fill(tmp_path / "store")
    before = tmp_path / "before.json"
    assert chainrule("progress", "export", str(before), "--data-dir", str(tmp_path / "store")).returncode == 0
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")

    done = chainrule("progress", "import", str(bad), "--data-dir", str(tmp_path / "store"))
    assert done.returncode == 1
    assert says in done.stderr
    assert done.stderr.startswith("chainrule: error: ")
    assert "Traceback" not in done.stderr

    after = tmp_path / "after.json"
    assert chainrule("progress", "export", str(after), "--data-dir", str(tmp_path / "store")).returncode == 0
    assert document_without_time(after) == document_without_time(before)


def test_export_to_standard_output_and_info(tmp_path):
    fill(tmp_path)
    done = chainrule("progress", "export", "-", "--data-dir", str(tmp_path))
    assert done.returncode == 0
    assert json.loads(done.stdout)["quiz_answers"][0]["question_id"] == "product-gradient"
    done = chainrule("progress", "info", "--data-dir", str(tmp_path))
    assert done.returncode == 0
    assert str(tmp_path / "progress.sqlite3") in done.stdout
    assert "quiz answers: 1" in done.stdout


def test_a_store_problem_in_the_terminal_is_one_message_and_exit_code_1(tmp_path):
    fill(tmp_path)
    database = tmp_path / "progress.sqlite3"
    database.write_bytes(b"this is not a database, just bytes" * 200)
    for command in (["progress", "info"], ["progress", "export", str(tmp_path / "x.json")], ["review"]):
        done = chainrule(*command, "--data-dir", str(tmp_path), stdin="q\n")
        assert done.returncode == 1, command
        assert "Traceback" not in done.stderr
        assert "is damaged" in done.stderr and str(database) in done.stderr
        assert "Move it aside" in done.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    "command",
    [["progress", "info"], ["progress", "export", "OUT"], ["progress", "export", "-"], ["review"]],
    ids=["info", "export-file", "export-stdout", "review"],
)
def test_reading_commands_refuse_a_data_dir_without_a_database_and_create_nothing(tmp_path, command):
    """A mistyped --data-dir is reported, not silently turned into a new empty store showing zeros."""
    fill(tmp_path / "real")
    typo = tmp_path / "raal"
    out = tmp_path / "out.json"
    command = [str(out) if part == "OUT" else part for part in command]
    done = chainrule(*command, "--data-dir", str(typo), stdin="q\n")
    assert done.returncode == 1
    assert done.stderr == (
        f"chainrule: error: no progress database at {typo / 'progress.sqlite3'}: "
        "nothing has been saved there yet (check --data-dir)\n"
    )
    assert done.stdout == ""
    assert not typo.exists()
    assert not out.exists()


def test_reading_commands_refuse_an_existing_directory_without_a_database(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for command in (["progress", "info"], ["review"]):
        done = chainrule(*command, env={"CHAINRULE_DATA_DIR": str(empty)}, stdin="q\n")
        assert done.returncode == 1, command
        assert "no progress database at" in done.stderr and "Traceback" not in done.stderr
    assert list(empty.iterdir()) == []


def test_import_still_creates_the_store_it_imports_into(tmp_path):
    fill(tmp_path / "source")
    backup = tmp_path / "backup.json"
    assert chainrule("progress", "export", str(backup), "--data-dir", str(tmp_path / "source")).returncode == 0
    fresh = tmp_path / "new" / "place"
    done = chainrule("progress", "import", str(backup), "--data-dir", str(fresh))
    assert done.returncode == 0, done.stderr
    assert (fresh / "progress.sqlite3").is_file()
    done = chainrule("progress", "info", "--data-dir", str(fresh))
    assert done.returncode == 0, done.stderr
    assert "predictions: 1" in done.stdout
