"""Nothing a learner does is lost: concurrent processes, SIGKILL, and locked / corrupt / read-only files.

All against real SQLite files and real OS processes. Read-only cases run the store in a child whose
capabilities cannot bypass file permissions (``setpriv`` drops CAP_DAC_OVERRIDE when the tests run as
root), so the kernel really refuses the writes.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from chainrule.progress import DATABASE_NAME, SCHEMA_VERSION, StoreError, open_store
from reaper import spawn

pytestmark = pytest.mark.timeout(180)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------ two processes at once


def _write_many(data_dir: str, worker: int, count: int, start, results) -> None:
    """Child process: wait for the start signal, then write ``count`` submissions as fast as it can."""
    store = open_store(data_dir)
    start.wait()
    done = 0
    for index in range(count):
        store.record_submission(f"exercise-{worker}", "python", f"{worker}:{index}", {"status": "pass"})
        done += 1
    store.close()
    results.put((worker, done))


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    open_store(tmp_path).close()  # create and migrate once, as the server does at start
    context = multiprocessing.get_context("fork")
    start, results = context.Event(), context.Queue()
    workers = [context.Process(target=_write_many, args=(str(tmp_path), worker, 200, start, results))
               for worker in (0, 1)]
    for process in workers:
        process.start()
    start.set()
    for process in workers:
        process.join(timeout=120)
        assert process.exitcode == 0
    assert sorted(results.get(timeout=5) for _ in workers) == [(0, 200), (1, 200)]

    conn = sqlite3.connect(str(tmp_path / DATABASE_NAME))
    try:
        sources = {row[0] for row in conn.execute("SELECT source FROM submissions")}
        assert conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 400
    finally:
        conn.close()
    assert sources == {f"{worker}:{index}" for worker in (0, 1) for index in range(200)}


def _open_and_write(data_dir: str, worker: int, start, results) -> None:
    start.wait()
    try:
        store = open_store(data_dir)
        store.save_prediction("backprop", f"worker-{worker}", float(worker), True)
        store.close()
        results.put((worker, "ok"))
    except BaseException as error:  # reported to the parent, which asserts on it
        results.put((worker, repr(error)))


def test_several_processes_creating_the_same_new_store_at_once_all_succeed(tmp_path):
    """Workers starting together on a fresh data directory: one creates and migrates, none fails."""
    context = multiprocessing.get_context("fork")
    start, results = context.Event(), context.Queue()
    workers = [context.Process(target=_open_and_write, args=(str(tmp_path), worker, start, results))
               for worker in range(4)]
    for process in workers:
        process.start()
    start.set()
    for process in workers:
        process.join(timeout=60)
    assert sorted(results.get(timeout=5) for _ in workers) == [(worker, "ok") for worker in range(4)]
    store = open_store(tmp_path)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert sorted(store.predictions("backprop")) == [f"worker-{worker}" for worker in range(4)]
    finally:
        store.close()


# ------------------------------------------------------------------ SIGKILL in the middle of a burst

WRITER = textwrap.dedent(
    """
    import sys, threading
    from chainrule.progress import open_store

    data_dir, clients, per_client = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = open_store(data_dir)
    lock = threading.Lock()

    def client(number):
        for index in range(per_client):
            answer = f"{number}-{index}"
            store.answer_question("backprop", f"q{number}", answer, index % 2 == 0)
            with lock:  # acknowledge only after the store call returned
                sys.stdout.write(f"ack {answer}\\n")
                sys.stdout.flush()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sys.stdout.write("finished\\n")
    sys.stdout.flush()
    """
)


def test_sigkill_during_a_burst_loses_no_acknowledged_write_direct_store(tmp_path):
    """Several client threads in one process write through the store; the process is SIGKILLed
    mid-burst; every write it acknowledged is found after a restart."""
    open_store(tmp_path).close()
    writer = subprocess.Popen(
        # Up to 4 x 2500 writes: long enough that it is surely still writing when the 100th
        # acknowledgement is read (the server test below does exactly 200 over HTTP).
        [sys.executable, "-c", WRITER, str(tmp_path), "4", "2500"],
        stdout=subprocess.PIPE, text=True, bufsize=1,
    )
    acknowledged: list[str] = []
    try:
        for line in writer.stdout:
            if line.startswith("ack "):
                acknowledged.append(line.split()[1])
            if len(acknowledged) >= 100:  # half of the 200 writes: kill it right now
                os.kill(writer.pid, signal.SIGKILL)
                break
    finally:
        if writer.poll() is None:
            os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
        writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL, "the writer finished before it could be killed"

    restarted = open_store(tmp_path)  # a new process would do exactly this: open, check, migrate
    try:
        stored = {row["answer"] for row in restarted.export_data()["quiz_answers"]}
        logs = restarted.export_data()["review_logs"]
    finally:
        restarted.close()
    assert set(acknowledged) <= stored
    assert len(stored) < 4 * 2500  # it really died mid-burst
    # Each answer and its review-card rating were written together, or not at all.
    assert {log["answer"] for log in logs} == stored


# ------------------------------------------------------------------ locked


def test_a_locked_database_gives_a_clear_error_and_loses_nothing(tmp_path):
    store = open_store(tmp_path, busy_timeout=0.3)
    store.save_prediction("backprop", "n", 0.8814, True)
    blocker = sqlite3.connect(str(tmp_path / DATABASE_NAME), isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")  # another program holds the write lock...
        with pytest.raises(StoreError) as caught:
            store.save_prediction("backprop", "o", 0.7071, True)
        error = caught.value
        assert error.kind == "locked"
        assert str(tmp_path / DATABASE_NAME) in str(error)
        assert "NOT saved" in str(error) and "--data-dir" in str(error)
        # WAL: reading still works while another program writes.
        assert set(store.predictions("backprop")) == {"n"}
    finally:
        blocker.execute("ROLLBACK")  # ...and lets go
        blocker.close()
    store.save_prediction("backprop", "o", 0.7071, True)
    assert set(store.predictions("backprop")) == {"n", "o"}
    store.close()


def test_a_locked_database_in_the_terminal_is_one_message_and_exit_code_1(tmp_path):
    store = open_store(tmp_path)
    store.save_prediction("backprop", "n", 0.8814, True)
    store.close()
    export = tmp_path / "in.json"
    export.write_text(json.dumps(_minimal_export()), encoding="utf-8")
    blocker = sqlite3.connect(str(tmp_path / DATABASE_NAME), isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        done = subprocess.run([sys.executable, "-m", "chainrule", "progress", "import", str(export),
                               "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert done.returncode == 1
    assert done.stderr.startswith("chainrule: error: The progress database ")
    assert "is locked by another program" in done.stderr and "Traceback" not in done.stderr
    store = open_store(tmp_path)
    try:
        assert set(store.predictions("backprop")) == {"n"}  # the refused import added nothing
    finally:
        store.close()


# ------------------------------------------------------------------ corrupt


def _store_with_data(data_dir: Path, rows: int = 5) -> None:
    store = open_store(data_dir)
    for index in range(rows):
        store.record_submission("neuron-grads", "python", "x" * 2000 + str(index), {"status": "pass"})
    store.close()


def test_garbage_over_the_whole_file_gives_a_clear_error_and_the_file_is_left_as_it_is(tmp_path):
    _store_with_data(tmp_path)
    database = tmp_path / DATABASE_NAME
    database.write_bytes(os.urandom(database.stat().st_size))
    before = digest(database)
    with pytest.raises(StoreError) as caught:
        open_store(tmp_path)
    assert caught.value.kind == "corrupt"
    message = str(caught.value)
    assert str(database) in message and "is damaged" in message and "Move it aside" in message
    # Never "fixed" by starting over: the damaged file is untouched and nothing was created instead.
    assert digest(database) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == [DATABASE_NAME]


def test_garbage_over_some_pages_is_caught_at_open(tmp_path):
    _store_with_data(tmp_path, rows=40)
    database = tmp_path / DATABASE_NAME
    page_size = 4096
    assert database.stat().st_size > 10 * page_size
    with open(database, "r+b") as stream:
        stream.seek(3 * page_size)  # keep the header page intact: the file still looks like SQLite
        stream.write(b"\xde\xad\xbe\xef" * (2 * page_size // 4))
    before = digest(database)
    with pytest.raises(StoreError) as caught:
        open_store(tmp_path)
    assert caught.value.kind == "corrupt"
    assert digest(database) == before


# ------------------------------------------------------------------ read-only


CHILD = textwrap.dedent(
    """
    import json, sys
    from chainrule.progress import StoreError, open_store
    try:
        store = open_store(sys.argv[1])
        store.save_prediction("backprop", "o", 0.7071, True)
        print(json.dumps({"saved": True}))
    except StoreError as error:
        print(json.dumps({"kind": error.kind, "message": str(error)}))
    """
)


def without_permission_override(command: list[str]) -> list[str]:
    """Run as this user but, if that is root, without the capabilities that ignore file modes."""
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot make a file read-only for root")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner,-linux_immutable", *command]


def _prepare(tmp_path: Path) -> Path:
    store = open_store(tmp_path)
    store.save_prediction("backprop", "n", 0.8814, True)
    store.close()
    return tmp_path / DATABASE_NAME


@pytest.mark.parametrize("what", ["file", "directory"])
def test_a_read_only_database_gives_a_clear_error_and_loses_nothing(tmp_path, what):
    database = _prepare(tmp_path)
    if what == "file":
        database.chmod(0o444)
    else:
        tmp_path.chmod(0o555)
    try:
        done = subprocess.run(without_permission_override([sys.executable, "-c", CHILD, str(tmp_path)]),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        outcome = json.loads(done.stdout)
        assert outcome.get("kind") == "read-only", outcome
        assert str(database) in outcome["message"]
        assert "writable" in outcome["message"] and "--data-dir" in outcome["message"]

        # In the terminal: one message, exit code 1, no traceback.
        export = tmp_path.parent / f"export-{what}.json"
        export.write_text(json.dumps(_minimal_export()), encoding="utf-8")
        cli = subprocess.run(
            without_permission_override([sys.executable, "-m", "chainrule", "progress", "import", str(export),
                                         "--data-dir", str(tmp_path)]),
            capture_output=True, text=True, timeout=60,
        )
        assert cli.returncode == 1
        assert cli.stderr.startswith("chainrule: error: ") and "Traceback" not in cli.stderr
        assert "writable" in cli.stderr
    finally:
        tmp_path.chmod(0o755)
        database.chmod(0o644)
    store = open_store(tmp_path)
    try:
        assert store.predictions("backprop") == {"n": store.predictions("backprop")["n"]}
        assert store.predictions("backprop")["n"]["value"] == 0.8814
    finally:
        store.close()


def _minimal_export() -> dict:
    return {
        "format": "chainrule.progress", "version": 1, "exported_at": "2026-03-01T09:30:00+00:00",
        "predictions": [{"lesson_id": "backprop", "key": "o", "value": 0.7071, "correct": True,
                         "at": "2026-03-01T09:30:00+00:00"}],
        "code": [], "submissions": [], "quiz_answers": [], "explanations": [], "cards": [], "review_logs": [],
    }


# ------------------------------------------------------------------ SIGKILL of the real lesson server


class LessonServer:
    """`chainrule lesson --no-browser --port 0 --data-dir D` in a subprocess; reads its URL and token."""

    def __init__(self, data_dir: Path) -> None:
        import queue
        import threading

        self.process = spawn(
            [sys.executable, "-m", "chainrule", "lesson", "--no-browser", "--port", "0", "--data-dir", str(data_dir)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
        )
        lines: "queue.Queue[str]" = queue.Queue()
        self.output: list[str] = []

        def pump() -> None:
            for line in self.process.stdout:
                lines.put(line)
            lines.put("")

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + 60
        self.url = None
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            self.output.append(line)
            if line == "":
                break
            if "?token=" in line:
                self.url = line.strip()
                break
        if self.url is None:
            self.stop()
            raise AssertionError("the lesson server did not print its address:\n" + "".join(self.output))
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(self.url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.token = parse_qs(parts.query)["token"][0]

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


NUMBER_QUESTIONS = ("product-gradient", "tanh-gradient", "sum-of-uses")


def first_answers(exported: dict) -> list[str]:
    """The first stored lesson answer of each question (quiz_answers are exported in order)."""
    first: dict[str, str] = {}
    for row in exported["quiz_answers"]:
        first.setdefault(row["question_id"], row["answer"])
    return list(first.values())


@pytest.mark.timeout(240)
def test_sigkill_of_the_lesson_server_loses_no_acknowledged_write(tmp_path):
    """Four clients post 200 quiz answers to the real server; it is SIGKILLed half way; after a
    restart every answer the server acknowledged (HTTP 200) is stored, with its review rating."""
    import threading

    import httpx

    import local_http

    server = LessonServer(tmp_path)
    acknowledged: list[str] = []
    failures: list[str] = []
    lock = threading.Lock()
    killed = threading.Event()

    def client(number: int) -> None:
        with local_http.client(base_url=server.base, headers={"X-Chainrule-Token": server.token}, timeout=30) as http:
            for index in range(50):
                answer = f"{number}.{index:04d}"  # a distinct number per write, so it can be found later
                question = NUMBER_QUESTIONS[(number + index) % len(NUMBER_QUESTIONS)]
                try:
                    response = http.post(f"/api/lessons/backprop/quiz/{question}", json={"answer": answer})
                except httpx.HTTPError:
                    if killed.is_set():
                        return  # the server is gone: this write was never acknowledged
                    raise
                with lock:
                    if response.status_code == 200 and "review" in response.json():
                        acknowledged.append(answer)
                    else:
                        failures.append(f"{response.status_code} {response.text[:200]}")
                    if len(acknowledged) >= 100 and not killed.is_set():
                        killed.set()
                        os.kill(server.process.pid, signal.SIGKILL)

    try:
        threads = [threading.Thread(target=client, args=(number,)) for number in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert failures == []
        assert killed.is_set(), "the burst finished before the server could be killed"
    finally:
        server.kill()
    assert server.process.returncode == -signal.SIGKILL

    # Restart the server on the same data directory: it starts, and serves what was saved.
    restarted = LessonServer(tmp_path)
    try:
        response = local_http.get(f"{restarted.base}/api/progress/backprop",
                             headers={"X-Chainrule-Token": restarted.token}, timeout=30)
        assert response.status_code == 200
        latest = {item["answer"] for item in response.json()["quiz"].values()}
        assert latest and latest <= set(acknowledged) | {f"{n}.{i:04d}" for n in range(4) for i in range(50)}
    finally:
        restarted.stop()

    store = open_store(tmp_path)
    try:
        exported = store.export_data()
    finally:
        store.close()
    stored = [row["answer"] for row in exported["quiz_answers"]]
    assert set(acknowledged) <= set(stored)
    print(f"acknowledged {len(acknowledged)}, stored {len(stored)}")
    assert len(stored) == len(set(stored)) < 200
    rated = [log["answer"] for log in exported["review_logs"] if log["kind"] == "quiz"]
    # The lesson rates only a question's first answer (later ones are practice), in the same
    # transaction as the answer: the ratings are exactly the first stored answer of each question.
    assert sorted(rated) == sorted(first_answers(exported))


@pytest.mark.timeout(240)
def test_two_lesson_servers_on_one_store_lose_nothing(tmp_path):
    """Two real server processes (two workers) share one data directory; clients write to both at
    once; every write each server acknowledged is stored, and none is refused as busy or locked."""
    import threading

    import local_http
    servers = [LessonServer(tmp_path), LessonServer(tmp_path)]
    acknowledged: list[str] = []
    failures: list[str] = []
    lock = threading.Lock()

    def client(number: int) -> None:
        server = servers[number % 2]
        with local_http.client(base_url=server.base, headers={"X-Chainrule-Token": server.token}, timeout=30) as http:
            for index in range(40):
                answer = f"{number}.{index:04d}"
                question = NUMBER_QUESTIONS[(number + index) % len(NUMBER_QUESTIONS)]
                response = http.post(f"/api/lessons/backprop/quiz/{question}", json={"answer": answer})
                code = http.put("/api/progress/code", json={
                    "exercise": "neuron-grads", "language": "python", "source": f"# {answer}\n"})
                with lock:
                    if response.status_code == 200 and code.status_code == 200:
                        acknowledged.append(answer)
                    else:
                        failures.append(f"{response.status_code} {code.status_code} {response.text[:200]}")

    try:
        threads = [threading.Thread(target=client, args=(number,)) for number in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=180)
    finally:
        for server in servers:
            server.stop()
    assert failures == []
    assert len(acknowledged) == 4 * 40

    store = open_store(tmp_path)
    try:
        exported = store.export_data()
    finally:
        store.close()
    stored = [row["answer"] for row in exported["quiz_answers"]]
    assert sorted(stored) == sorted(acknowledged)
    rated = [log["answer"] for log in exported["review_logs"] if log["kind"] == "quiz"]
    assert sorted(rated) == sorted(first_answers(exported))  # one rating per question, the first answer
