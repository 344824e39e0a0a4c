"""Lessons as folders: `chainrule lessons new`, `check`, the listing and `chainrule lesson --lessons`.

Every command shown in docs/authoring.md runs here, as written, in a scratch folder; the server one
is started for real and asked for its path.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import local_http
from lti_world import cli
from reaper import spawn

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "authoring.md"
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)
INLINE = re.compile(r"`(chainrule lessons?\s[^`]*)`")
URL = re.compile(r"(http://127\.0\.0\.1:(\d+)/\S*token=([\w-]+))")


def chainrule(*args: str, cwd: Path, data_dir: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if data_dir is not None:
        env["CHAINRULE_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "chainrule", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def documented_commands() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    lines = [line.strip() for block in SH_BLOCK.findall(text) for line in block.splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    commands += [span for span in INLINE.findall(text) if span not in commands]
    return commands


def serve_and_read_path(args: list[str], cwd: Path, data_dir: Path) -> dict:
    """Start `chainrule lesson ARGS` for real, read /api/path with the printed token, stop it."""
    command = [sys.executable, "-m", "chainrule", *args, "--no-browser", "--port", "0", "--data-dir", str(data_dir)]
    process = spawn(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        for line in process.stdout:
            lines.append(line)
            if URL.search(line):
                found.set()
        found.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert found.wait(60) and any(URL.search(line) for line in lines), "".join(lines)
        url, port, token = next(URL.search(line) for line in lines if URL.search(line)).groups()
        with local_http.client(base_url=f"http://127.0.0.1:{port}", headers={"X-Chainrule-Token": token}) as client:
            path = client.get("/api/path").json()
            lesson = client.get(f"/api/lessons/{path['lessons'][-1]['id']}")
            assert lesson.status_code == 200, lesson.text
            return path
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_every_command_in_the_authoring_doc_runs(tmp_path: Path) -> None:
    commands = documented_commands()
    assert len(commands) >= 5, commands
    data_dir = tmp_path / "progress"
    for command in commands:
        args = shlex.split(command)
        assert args[0] == "chainrule"
        if args[1] == "lesson":  # the server: started, asked for its path, stopped
            path = serve_and_read_path(args[1:], tmp_path, data_dir)
            assert [entry["id"] for entry in path["lessons"]] == [
                "slopes-and-the-chain-rule", "many-inputs-and-the-gradient", "computational-graphs", "backprop",
                "gradient-descent-linear-regression", "a-network-learns", "softmax-and-cross-entropy", "forward-and-reverse-mode", "build-the-engine",
                "vectors"]
            assert path["lessons"][-1]["title"] == "Vectors and dot products"
            assert path["lessons"][-1]["href"] == "/lessons/vectors"
            continue
        run = chainrule(*args[1:], cwd=tmp_path, data_dir=data_dir)
        assert run.returncode == 0, f"{command}\n{run.stdout}\n{run.stderr}"
        if args[1:3] == ["lessons", "check"]:
            assert "lesson vectors: ok" in run.stdout
        if args[1:] == ["lessons", "--lessons", "my-lessons"]:
            assert "Vectors and dot products (from --lessons)" in run.stdout
            assert "id vectors, about 20 minutes: not started" in run.stdout


def scaffold(tmp_path: Path) -> Path:
    run = chainrule("lessons", "new", "demo", "--title", 'A "quoted" title', "lessons", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return tmp_path / "lessons" / "demo"


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    """One lesson folder made by `chainrule lessons new` for the module: each broken-lesson case below breaks a
    copy of it (a process fewer per case; test_a_scaffolded_lesson_is_complete_and_valid checks the command)."""
    return scaffold(tmp_path_factory.mktemp("scaffolded"))


@pytest.fixture
def registry_kept():
    """The exercise registry as it was before the test: `chainrule lessons check` run in this process registers
    the checked lesson's exercises (as a process of its own does, for its life), and each case's copy of the
    scaffold is another folder with the same ids."""
    from chainrule.grading import EXERCISES

    kept = dict(EXERCISES)
    yield
    EXERCISES.clear()
    EXERCISES.update(kept)


def test_a_scaffolded_lesson_is_complete_and_valid(tmp_path: Path) -> None:
    folder = scaffold(tmp_path)
    lesson = json.loads((folder / "lesson.json").read_text())
    assert lesson["title"] == 'A "quoted" title'
    assert sorted(p.name for p in (folder / "sections").iterdir()) == [
        "01-why.md", "02-key-parts.md", "03-see-it-work.md", "04-predict.md", "05-try-it.md",
        "06-check-yourself.md", "07-explain.md", "08-recap.md"]
    exercise = folder / "exercises" / "1-gradients"
    assert {p.name for p in exercise.iterdir()} >= {
        "exercise.json", "exercise.md", "starter.py", "starter.js", "starter.ts", "solution.py", "solution.js", "solution.ts"}
    run = chainrule("lessons", "check", "lessons/demo", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "lesson demo: ok"


def edit(folder: Path, name: str, old: str, new: str) -> None:
    text = folder.joinpath(name).read_text()
    assert old in text, f"{old!r} is not in {name}"
    folder.joinpath(name).write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("break_it,located", [
    (lambda f: f.joinpath("sections/03-see-it-work.md").write_text("Here is {{example.z.data}}.\n"),
     r"sections/03-see-it-work\.md:1: the placeholder \{\{example\.z\.data\}\} does not resolve"),
    (lambda f: f.joinpath("lesson.json").write_text(f.joinpath("lesson.json").read_text().replace('"minutes": 20,', '"minutes": 20')),
     r"lesson\.json:6: not valid JSON: Expecting ',' delimiter"),
    (lambda f: f.joinpath("quiz.json").write_text(f.joinpath("quiz.json").read_text().replace('"answer": -1', '"answer": -2')),
     r"quiz\.json:4: question 'sum-gradient': the answer is -2, but the engine computes -1\.0"),
    (lambda f: f.joinpath("lesson.json").write_text(f.joinpath("lesson.json").read_text().replace('"a": {"grad": -1}', '"a": {"grad": 5}')),
     r"lesson\.json:16: checked number example\.a\.grad is 5, but the engine computes -1\.0"),
    (lambda f: f.joinpath("exercises/1-gradients/starter.js").write_text(f.joinpath("exercises/1-gradients/solution.js").read_text()),
     r"exercises/1-gradients/starter\.js: exercise 'demo-gradients': the starter already passes every test in javascript"),
    (lambda f: f.joinpath("exercises/1-gradients/solution.py").write_text("def gradients(nodes, leaves):\n    return [1.0]\n"),
     r"exercises/1-gradients/solution\.py: exercise 'demo-gradients': the reference solution does not pass in python"),
    (lambda f: f.joinpath("exercises/1-gradients/exercise.json").write_text(
        f.joinpath("exercises/1-gradients/exercise.json").read_text().replace('"graph-grads"', '"graph-gradz"')),
     r"exercises/1-gradients/exercise\.json:7: unknown case kind 'graph-gradz'"),
    (lambda f: f.joinpath("lesson.json").write_text(f.joinpath("lesson.json").read_text().replace(
        "sum: {{example.b.data}}", "sum: {{example.bb.data}}")),
     r"lesson\.json:33: prediction 'da': the placeholder \{\{example\.bb\.data\}\} does not resolve"),
    (lambda f: f.joinpath("lesson.json").write_text(f.joinpath("lesson.json").read_text().replace('"node_label": "y"', '"node_label": "q"')),
     r"lesson\.json:\d+: prediction 'y': node_label must be a value of graph 'example'"),
    # Hints, fresh-number rules and diagnoses that cannot be used are refused, never dropped.
    (lambda f: edit(f, "exercises/1-gradients/exercise.json", '"First compute', '"First {{example.zz.data}} compute'),
     r"exercises/1-gradients/exercise\.json:\d+: hints\[0\]: the placeholder \{\{example\.zz\.data\}\} does not resolve"),
    (lambda f: edit(f, "exercises/1-gradients/exercise.json", '"hints": [', '"unused": 1, "hints": ['),
     r"exercises/1-gradients/exercise\.json:\d+: unknown field\(s\) 'unused'"),
    (lambda f: f.joinpath("exercises/1-gradients/exercise.json").write_text(json.dumps(
        json.loads(f.joinpath("exercises/1-gradients/exercise.json").read_text()) | {"hints": "read the lesson"}, indent=1)),
     r"exercises/1-gradients/exercise\.json:\d+: hints must be a list of non-empty markdown strings"),
    (lambda f: edit(f, "exercises/1-gradients/exercise.json", '"overwrite":', '"overwritten":'),
     r"exercises/1-gradients/exercise\.json:\d+: diagnoses names the mistake 'overwritten', which the case kind "
     r"'graph-grads' cannot recognise; its mistakes are: not-a-number, not-finite, .*overwrite"),
    (lambda f: edit(f, "exercises/1-gradients/exercise.json", 'grads[a] += ...', 'grads[{a}] += ...'),
     r"exercises/1-gradients/exercise\.json:\d+: diagnoses\['overwrite'\] uses \{a\}; the fields this mistake fills are: none"),
    (lambda f: edit(f, "quiz.json", '"b": {"from": -5', '"zz": {"from": -5'),
     r"quiz\.json:\d+: question 'sum-gradient': fresh\.draw\.zz: the prompt shows no \{\{zz\}\}"),
    (lambda f: edit(f, "quiz.json", '"step": 1, "skip": [0]}\n', '"step": 1, "skip": [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5]}\n'),
     r"quiz\.json:\d+: question 'sum-gradient': fresh\.draw\.b: fresh numbers: 'b' has nothing left to draw from"),
    (lambda f: edit(f, "lesson.json", '{"folder": "exercises/1-gradients"}', '{"folder": "exercises/1-gradients", "hints": ["x"]}'),
     r"lesson\.json:\d+: an exercise entry must be \{\"folder\": \"exercises/NAME\"\}, not .*hints belong in the "
     r"exercise folder's exercise\.json"),
])
def test_a_broken_lesson_is_rejected_with_a_located_message(tmp_path: Path, scaffolded: Path, break_it,
                                                            located: str, monkeypatch, registry_kept) -> None:
    folder = tmp_path / "lessons" / "demo"
    shutil.copytree(scaffolded, folder)
    break_it(folder)
    # The commands run in this process (lti_world.cli: the CLI's own main, its exit code and two streams), in the
    # lesson's folder: a process of their own would load every built-in lesson again for each case (about a
    # core-second each); test_every_command_in_the_authoring_doc_runs runs both commands as processes.
    monkeypatch.chdir(tmp_path)
    # Only a starter or a solution needs the sandbox to show its problem; the rest is found without grading
    # (test_a_scaffolded_lesson_is_complete_and_valid grades the scaffold's files). Read from the pattern's file
    # name (`located` is a regular expression: exercise.json is written exercise\.json there).
    graded = re.match(r"exercises/[^:]+/(starter|solution)\\\.", located) is not None
    code, printed, errors = cli("lessons", "check", "lessons", *([] if graded else ["--no-grading"]), env={})
    assert code == 1, printed + errors
    assert re.search(located, printed), printed
    assert printed.splitlines()[-1] == "lesson demo: 1 problem" and errors == "", printed  # one stream, problems first
    if graded:
        return  # a solution or starter problem needs grading; the server's quick check does not grade
    # The server refuses to start with it, naming the same problem (a server that started instead would hold this
    # test until its timeout).
    code, _, errors = cli("lesson", "--lessons", "lessons", "--no-browser", "--port", "0",
                          env={"CHAINRULE_DATA_DIR": str(tmp_path / "progress")})
    assert code == 2 and re.search(located.split(":")[0], errors), errors


def test_lessons_new_refuses_a_bad_id_and_an_existing_folder(tmp_path: Path, monkeypatch) -> None:
    scaffold(tmp_path)
    monkeypatch.chdir(tmp_path)  # the refusals in this process (lti_world.cli), the scaffold's a process's
    code, _, errors = cli("lessons", "new", "Not An Id", "--title", "x", "lessons", env={})
    assert code == 2 and "lower-case letters" in errors
    code, _, errors = cli("lessons", "new", "demo", "--title", "x", "lessons", env={})
    assert code == 2 and "exists already" in errors
    code, _, errors = cli("lessons", "check", "nowhere", env={})
    assert code == 2 and "no such folder" in errors


def test_the_listing_shows_each_lessons_progress(tmp_path: Path) -> None:
    from chainrule.progress import open_store

    progress = {"CHAINRULE_DATA_DIR": str(tmp_path / "progress")}
    code, fresh, _ = cli("lessons", env=progress)  # in this process (lti_world.cli)
    assert code == 0
    assert fresh.count(": not started") == 9
    assert not (tmp_path / "progress").exists()  # listing never creates a store
    store = open_store(tmp_path / "progress")
    try:
        store.save_prediction("computational-graphs", "p", -3.0, True)
        store.save_prediction("computational-graphs", "n", -0.5, True)
        store.answer_question("gradient-descent-linear-regression", "one-step", "0.9", True)
    finally:
        store.close()
    listed = cli("lessons", env=progress)[1]
    blocks = listed.split("\n  ")
    assert "2 of 5 predictions made" in next(b for b in blocks if "id computational-graphs" in b)
    assert "1 of " in next(b for b in blocks if "id gradient-descent-linear-regression" in b)
    assert "not started" in next(b for b in blocks if "id backprop" in b)


def test_review_asks_the_questions_of_lessons_added_with_lessons(tmp_path: Path) -> None:
    from datetime import datetime, timedelta, timezone

    from chainrule.progress import open_store

    folder = scaffold(tmp_path)
    question = json.loads((folder / "quiz.json").read_text())["questions"][0]
    data_dir = tmp_path / "progress"
    past = datetime.now(timezone.utc) - timedelta(days=5)
    store = open_store(data_dir, clock=lambda: past, fuzzing=False)
    store.answer_question("demo", question["id"], "wrong", False)  # due again by now
    store.close()

    def review(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "chainrule", "review", "--data-dir", str(data_dir), *extra],
                              cwd=tmp_path, input="q\n", capture_output=True, text=True, timeout=120)

    without = review()
    assert "its lesson 'demo' is not loaded; if you added that lesson, run `chainrule review --lessons DIR`" in without.stdout
    added = review("--lessons", "lessons")
    assert added.returncode == 0, added.stderr
    assert "no longer in the lesson" not in added.stdout
    assert question["prompt"].split("{{")[0] in added.stdout  # its own prompt, numbers filled in
    broken = review("--lessons", "nowhere")
    assert broken.returncode == 2 and "--lessons" in broken.stderr
