"""`chainrule exercises`, `chainrule start` and `chainrule check`, through the real CLI entry point."""

from __future__ import annotations

import json

import pytest

from chainrule.cli import main
from chainrule.grading import reference_source, starter_source

pytestmark = pytest.mark.timeout(120)


def test_exercises_lists_every_lesson_exercise_in_path_order(capsys):
    assert main(["exercises"]) == 0
    out = capsys.readouterr().out
    for exercise_id in ("neuron-grads", "local-gradients", "backward-order"):
        assert exercise_id in out
    assert main(["exercises", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    from chainrule import lessons

    on_the_path = [e for lesson in lessons.lesson_ids() for e in lessons.exercise_ids(lesson)]
    # The path's exercises first, in its order (a folder registered by another test of this process may follow).
    assert [e["id"] for e in listed][:len(on_the_path)] == on_the_path


def test_start_writes_the_starter_and_refuses_to_overwrite(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["start", "neuron-grads", "--lang", "ts"]) == 0
    written = tmp_path / "neuron-grads.ts"
    assert written.read_text() == starter_source("neuron-grads", "typescript")
    written.write_text("// my work")
    assert main(["start", "neuron-grads", "--lang", "ts"]) == 1
    assert "already exists" in capsys.readouterr().err
    assert written.read_text() == "// my work"
    assert main(["start", "neuron-grads", "--lang", "ts", "--force"]) == 0
    assert written.read_text() == starter_source("neuron-grads", "typescript")


def test_start_rejects_unknown_exercise_and_language(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["start", "nope"], ["start", "neuron-grads", "--lang", "rust"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2


def test_check_starter_fails_with_a_table_and_the_isolation_level(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["start", "local-gradients", "--lang", "js"]) == 0
    capsys.readouterr()
    assert main(["check", "local-gradients.js"]) == 1
    out = capsys.readouterr().out
    assert "local-gradients (javascript): FAILED" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("test"))
    assert header.split() == ["test", "verdict", "expected", "actual"]
    assert "reuse: small values" in out and "[4, 3]" in out  # the texts the page shows
    assert "isolation: " in out


@pytest.mark.parametrize("exercise_id,ext", [("neuron-grads", "py"), ("backward-order", "ts")])
def test_check_reference_passes_with_exercise_inferred(tmp_path, capsys, exercise_id, ext):
    language = {"py": "python", "ts": "typescript"}[ext]
    path = tmp_path / f"mine.{ext}"
    path.write_text(reference_source(exercise_id, language))
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{exercise_id} ({language}): PASSED" in out


def test_check_json_output_is_the_grading_result(tmp_path, capsys):
    path = tmp_path / "answer.py"
    path.write_text("def neuron_grads(x, w, b, out, grad):\n    d = 1 - out**2\n    return [d * x[0], d * x[1], d]\n")
    assert main(["check", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["version"] == 3 and result["status"] == "pass" and result["exercise"] == "neuron-grads"


def test_check_usage_errors_exit_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    odd = tmp_path / "answer.rb"
    odd.write_text("puts 1")
    assert main(["check", str(odd)]) == 2
    assert "cannot tell the language" in capsys.readouterr().err
    anonymous = tmp_path / "anon.py"
    anonymous.write_text("print('hello')\n")
    assert main(["check", str(anonymous)]) == 2
    assert "pass --exercise" in capsys.readouterr().err
    assert main(["check", str(anonymous), "--exercise", "neuron-grads"]) == 1


def test_check_of_a_directory_says_it_is_a_directory_and_that_check_takes_a_file(tmp_path, capsys):
    folder = tmp_path / "my-answers"
    folder.mkdir()
    (folder / "neuron-grads.py").write_text(reference_source("neuron-grads", "python"))
    assert main(["check", str(folder)]) == 2
    captured = capsys.readouterr()
    assert f"{folder} is a directory; check takes one file" in captured.err
    assert "no such file" not in captured.err
    assert captured.out == ""
