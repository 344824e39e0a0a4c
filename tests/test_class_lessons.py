"""A class's own lessons (issue 43, item 1): `chainrule lessons copy DIR` makes the copy to edit, `chainrule
serve --lessons DIR` and `chainrule worker --lessons DIR` grade with it, and the regrade flow of
docs/classroom.md works as written: edit a case in the class's folder, restart, regrade.

Every command is a process of its own, against SQLite (the server grades) and PostgreSQL (real workers). The
learner's code passes the built-in cases of neuron-grads but is wrong for an input far to the left (it drops
the first gradient there); the teacher's new case is such an input, so the real grader, not this test, says
that the verdict changes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

import local_http
from chainrule.grading import reference_source
from chainrule.progress import open_store
from class_process import REPO, create_class, free_port
from class_world import PASSWORD, csrf_of
from job_process import FAST_WORKER, WAIT_SECONDS, Process
from polling import until

EXERCISE, LESSON = "neuron-grads", "backprop"
CASES = Path(LESSON, "exercises", "1-neuron-grads", "exercise.json")
RIGHT = reference_source(EXERCISE, "python")
# Right for every built-in case (their first inputs are 2, -1.5, 0 and 150), wrong below -100.
LEFT_BLIND = RIGHT.replace("grad[0] = dn * x[0]", "grad[0] = dn * x[0] if x[0] > -100 else 0.0")
NEW_CASE = {"name": "neuron: far to the left", "x": [-200.0, 1.0], "w": [0.01, 0.5], "b": 0.1}
LESSONS_SAID = re.compile(r"lessons ([0-9a-f]{12})\)")

pytestmark = pytest.mark.timeout(900)


def chainrule(env: dict, *argv: str, code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "chainrule", *argv], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=WAIT_SECONDS)
    assert done.returncode == code, done.stdout + done.stderr
    return done


def lessons_copy(env: dict, folder: Path) -> Path:
    """The class's copy of the built-in lesson that holds the exercise: `chainrule lessons copy --lesson`, one
    lesson of all, since every start of `chainrule serve --lessons` or `chainrule worker --lessons` checks each
    lesson of its folder (about 1.7 s of CPU more for all the built-in ones than for one)."""
    chainrule(env, "lessons", "copy", str(folder), "--lesson", LESSON)
    return folder


def class_lessons(env: dict, root: Path) -> tuple[Path, Path]:
    """(the class's copy of the lesson, the same copy with the teacher's new case: the class's folder copied
    file for file, then edited)."""
    folder = lessons_copy(env, root / "class-lessons")
    edited = Path(shutil.copytree(folder, root / "edited-lessons"))
    add_case(edited)
    return folder, edited


def add_case(folder: Path) -> None:
    manifest = json.loads((folder / CASES).read_text())
    manifest["cases"].append(NEW_CASE)
    (folder / CASES).write_text(json.dumps(manifest, indent=2))


def clean_env(**settings: str) -> dict:
    """This process's environment without any CHAINRULE_ setting of its own, plus the test's ``settings``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("CHAINRULE_")}
    return env | {"PYTHONUNBUFFERED": "1", **settings}


def class_on_sqlite(env: dict, folder: Path) -> tuple[str, int, str, Process]:
    """(address, port, invite, served): the class Physics, and `chainrule serve --lessons folder` for it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    _, invite = create_class("Physics", base, env)
    return base, port, invite, serve(env, port, folder)


def serve(env: dict, port: int, folder: Path) -> Process:
    return Process(None, ["serve", "--port", str(port), "--workers", "1", "--lessons", str(folder)], "sign in at",
                   env=env)


def said_hash(process: Process) -> str:
    """The lessons' hash `chainrule serve` says it serves."""
    return LESSONS_SAID.search("".join(process.lines)).group(1)


def join(base: str, invite: str, name: str) -> httpx.Client:
    client = local_http.client(base_url=base, timeout=WAIT_SECONDS)
    page = client.get(invite)
    answer = client.post(invite, data={"csrf": csrf_of(page.text), "name": name, "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    return client


def submit(client: httpx.Client, source: str) -> httpx.Response:
    headers = {"X-CSRF-Token": client.cookies.get("chainrule_csrf", ""), "X-Chainrule-Run": uuid.uuid4().hex}
    return client.post("/api/grade", json={"exercise": EXERCISE, "language": "python", "source": source},
                       headers=headers)


def regrade_row(env: dict) -> list[str]:
    shown = chainrule(env, "class", "regrade", "Physics", EXERCISE).stdout
    assert "graded; 1 learner would change standing" in shown, shown
    return [line.split() for line in shown.splitlines() if line.startswith("Ada")][0]


def test_on_sqlite_an_edited_case_changes_the_verdict_after_a_restart_and_a_regrade(tmp_path):
    env = clean_env(CHAINRULE_DATA_DIR=str(tmp_path / "data"))
    folder = lessons_copy(env, tmp_path / "class-lessons")
    base, port, invite, web = class_on_sqlite(env, folder)
    try:
        ada = join(base, invite, "Ada")
        answer = submit(ada, LEFT_BLIND)
        assert answer.status_code == 200 and answer.json()["status"] == "pass", answer.text
    finally:
        web.stop()
    add_case(folder)  # the teacher's edit, in the class's folder
    refused = chainrule(env, "class", "roster", "Physics", code=1).stderr
    assert "have changed since `chainrule serve` started with them" in refused and "restart `chainrule serve`" in refused
    web = serve(env, port, folder)
    try:
        assert said_hash(web) in refused  # the hash the server recorded, named in the refusal
        assert regrade_row(env) == ["Ada", "passed", "fail", "yes"]
        chainrule(env, "class", "regrade", "Physics", "--apply", "1")
        roster = json.loads(chainrule(env, "class", "roster", "Physics", "--json").stdout)
        assert [row["exercises_passed"] for row in roster if row["name"] == "Ada"] == [0]
    finally:
        web.stop()


def test_on_postgresql_a_worker_with_other_lessons_leaves_the_run_and_a_right_worker_grades_it(
        postgres_url, tmp_path):
    env = clean_env(CHAINRULE_DATABASE=postgres_url, CHAINRULE_DATA_DIR=str(tmp_path / "d"))
    folder, edited = class_lessons(env, tmp_path)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    _, invite = create_class("Physics", base, env)
    web = serve(env, port, folder)
    workers = []
    try:
        served = said_hash(web)
        wrong = Process(None, ["worker", "--concurrency", "1", *FAST_WORKER, "--lessons", str(edited)], "is grading",
                        env=env)
        workers.append(wrong)
        ada = join(base, invite, "Ada")
        answer = submit(ada, LEFT_BLIND)
        assert answer.status_code == 202, answer.text
        job = answer.json()["job"]
        store = open_store(database=postgres_url, fuzzing=False)
        try:
            def row():
                return store.database.read(lambda conn: conn.execute(
                    "SELECT state, attempts, queue_job_id, worker FROM grading_jobs WHERE id = ?", (job,)).fetchone())

            first_turn = until(lambda: row().queue_job_id, "the run on the queue", WAIT_SECONDS)
            # The wrong worker took the run's turn, left the run and handed the turn on: the run still waits.
            until(lambda: row().queue_job_id not in (None, first_turn), "the turn handed on", WAIT_SECONDS)
            assert (row().state, row().attempts) == ("queued", 0)
            said = "".join(wrong.lines)
            assert f"a run waits to be graded with lessons {served}" in said and "--lessons DIR" in said, said
            right = Process(None, ["worker", "--concurrency", "1", *FAST_WORKER, "--lessons", str(folder)],
                            "is grading", env=env)
            workers.append(right)
            until(lambda: row().state == "graded", "the run graded by the right worker", WAIT_SECONDS)
            status = ada.get(f"/api/jobs/{job}").json()
            # Graded by the right worker only (a loaded machine may take it for dead once and start it again).
            assert status["result"]["status"] == "pass" and row().worker.endswith(f":{right.pid}")
        finally:
            store.close()
        for worker in workers:
            worker.stop()
        web.stop()
        # The teacher's edit: serve and the workers restarted with the edited folder, then the regrade.
        web = serve(env, port, edited)
        assert said_hash(web) != served and said_hash(web) in "".join(wrong.lines)  # the wrong worker named it
        workers.append(Process(None, ["worker", "--concurrency", "1", *FAST_WORKER, "--lessons", str(edited)],
                               "is grading", env=env))
        assert regrade_row(env) == ["Ada", "passed", "fail", "yes"]
    finally:
        for worker in workers:
            worker.stop()
        web.stop()


def test_on_sqlite_an_authors_own_lesson_is_served_after_the_built_ins_and_graded(tmp_path):
    """The other kind of class folder: an author's lesson (made by `chainrule lessons new`), not a copy of a
    built-in. `chainrule serve --lessons` puts it on the path after the built-in lessons, and the class's runs of
    its exercise are graded with the folder's own cases: the author's solution passes, the starter does not."""
    env = clean_env(CHAINRULE_DATA_DIR=str(tmp_path / "data"))
    folder = tmp_path / "class-lessons"
    chainrule(env, "lessons", "new", "vectors", "--title", "Vectors", str(folder))
    exercise = folder / "vectors" / "exercises" / "1-gradients"
    base, _, invite, web = class_on_sqlite(env, folder)
    try:
        ada = join(base, invite, "Ada")
        path = [lesson["id"] for lesson in ada.get("/api/path").json()["lessons"]]
        assert path[-1] == "vectors" and "backprop" in path and "build-the-engine" in path, path
        headers = {"X-CSRF-Token": ada.cookies.get("chainrule_csrf", "")}

        def run(source: str) -> dict:
            answer = ada.post("/api/grade", json={"exercise": "vectors-gradients", "language": "python",
                                                   "source": source}, headers=headers | {"X-Chainrule-Run": uuid.uuid4().hex})
            assert answer.status_code == 200, answer.text
            return answer.json()

        assert run((exercise / "solution.py").read_text())["status"] == "pass"
        assert run((exercise / "starter.py").read_text())["status"] == "fail"
    finally:
        web.stop()


def test_a_built_in_lesson_as_copied_is_not_checked_again_and_any_change_to_it_is(tmp_path, monkeypatch):
    """`chainrule serve --lessons` and `chainrule worker --lessons` check each lesson folder before they add it
    (lessons/validate.py), except a built-in lesson as `chainrule lessons copy` made it: the same name, the same
    files, byte for byte, which is the lesson a server without --lessons serves. A case added, a link, a file
    more: checked."""
    from chainrule.lessons import validate
    from chainrule.lessons.loader import DATA_DIR

    root = tmp_path / "class-lessons"
    for lesson in ("backprop", "computational-graphs", "slopes-and-the-chain-rule", "gradient-descent-linear-regression"):
        shutil.copytree(DATA_DIR / lesson, root / lesson)
    add_case(root)  # backprop: the teacher's new case
    (root / "slopes-and-the-chain-rule" / "notes.txt").symlink_to(root / "slopes-and-the-chain-rule" / "lesson.json")
    (root / "gradient-descent-linear-regression" / "notes.txt").write_text("a file more\n")
    checked: list[str] = []
    monkeypatch.setattr(validate, "check_lesson_folder", lambda folder, grade: checked.append(folder.name) or [])
    monkeypatch.setattr(validate, "add_lesson_dirs", lambda directories: [])  # this process's path stays as it is
    validate.add_checked_lesson_dirs([root])
    assert sorted(checked) == ["backprop", "gradient-descent-linear-regression", "slopes-and-the-chain-rule"]
