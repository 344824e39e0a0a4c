"""What one `chainrule serve` process keeps per learner: peak RSS while N learners work, and where it grows.

    .venv/bin/python benchmarks/bench_memory.py [--learners 200] [--database] [--trace]

A real `chainrule serve --workers 1` (the class in SQLite, or with --database in a throwaway PostgreSQL
cluster, where runs are only queued: no worker), N learners as httpx clients, each: joins with a password,
signs out and in again, opens the lesson page and its API, saves predictions and code, runs the tests once
(SQLite: graded in the process; PostgreSQL: queued) and polls it, answers the quiz. Between rounds of
learners it prints the process's resident size (VmRSS) and peak (VmHWM) from /proc.

--trace turns tracemalloc on in the server once it started and takes a snapshot after each round (SIGUSR2, through a
sitecustomize the script writes to a temporary folder; the server's own code is unchanged); it prints the
allocation sites that grew most between the first and the last round.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from chainrule import lessons  # noqa: E402
from chainrule.grading import reference_source  # noqa: E402
from class_process import PASSWORD, ClassServer, csrf_of  # noqa: E402
from postgres_cluster import new_postgres_schema, throwaway_cluster  # noqa: E402

lessons.register_exercises()

LESSON = "backprop"
SITE = '''
import os, signal, tracemalloc
if os.environ.get("CHAINRULE_BENCH_SNAPSHOTS"):
    def _dump(signum, frame):  # the first signal starts tracing (after the server started), each next one dumps
        if not tracemalloc.is_tracing():
            tracemalloc.start(10)
            return
        folder = os.environ["CHAINRULE_BENCH_SNAPSHOTS"]
        count = len(os.listdir(folder))
        tracemalloc.take_snapshot().dump(os.path.join(folder, f"{count:03d}.snapshot"))
    signal.signal(signal.SIGUSR2, _dump)
'''


def learner_works(server: ClassServer, name: str, queued: bool) -> None:
    client = server.join(name)
    try:
        page = client.get("/")
        client.post("/sign-out", data={"csrf": csrf_of(page.text)} if 'name="csrf"' in page.text else {},
                    headers={"X-CSRF-Token": client.cookies.get("chainrule_csrf", "")})
        client.cookies.clear()
        signed = server.sign_in(client, name, PASSWORD)
        assert signed.status_code == 303, signed.text[:200]
        headers = {"X-CSRF-Token": client.cookies.get("chainrule_csrf", "")}
        client.get(f"/lessons/{LESSON}")
        client.get(f"/api/lessons/{LESSON}")
        client.get(f"/api/progress/{LESSON}")
        for key in lessons.prediction_keys(LESSON):
            client.put(f"/api/progress/{LESSON}/predictions/{key}", json={"value": 1.0}, headers=headers)
        exercise = lessons.exercise_ids(LESSON)[0]
        source = reference_source(exercise, "python")
        client.put("/api/progress/code", json={"exercise": exercise, "language": "python", "source": source},
                   headers=headers)
        ticket = client.post("/api/grade", json={"exercise": exercise, "language": "python", "source": source},
                             headers={**headers, "X-Chainrule-Run": uuid.uuid4().hex}).json()
        if "job" in ticket:
            for _ in range(3 if queued else 60):
                status = client.get(f"/api/jobs/{ticket['job']}").json()
                if status.get("state") not in ("queued", "running"):
                    break
                time.sleep(0.5)
        for question in lessons.question_ids(LESSON):
            options = lessons.quiz_question(LESSON, question).get("options") or ["1"]
            client.post(f"/api/lessons/{LESSON}/quiz/{question}", json={"answer": options[0]}, headers=headers)
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--parallel", type=int, default=8, help="learners working at once")
    parser.add_argument("--database", action="store_true", help="the class in PostgreSQL (runs only queued)")
    parser.add_argument("--trace", action="store_true", help="tracemalloc snapshots; print what grew most")
    args = parser.parse_args(argv)
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores", flush=True)
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chainrule-mem-")))
        snapshots = folder / "snapshots"
        if args.trace:
            site = folder / "site"
            site.mkdir()
            (site / "sitecustomize.py").write_text(SITE)
            snapshots.mkdir()
            os.environ["PYTHONPATH"] = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
            os.environ["CHAINRULE_BENCH_SNAPSHOTS"] = str(snapshots)
        database = None
        if args.database:
            database = new_postgres_schema(stack.enter_context(throwaway_cluster(max_connections=100)))
        server = ClassServer.start(folder, database=database)
        stack.callback(server.stop)
        print(f"serve started: RSS {server._status_kib('VmRSS') / 1024:.0f} MB", flush=True)
        if args.trace:
            os.kill(server.process.pid, 12)  # SIGUSR2: start tracing
        per_round = args.learners // args.rounds
        done = 0
        with ThreadPoolExecutor(args.parallel) as pool:
            for _round in range(args.rounds):
                names = [f"learner{done + index:05d}" for index in range(per_round)]
                list(pool.map(lambda name: learner_works(server, name, database is not None), names))
                done += per_round
                if args.trace:
                    os.kill(server.process.pid, 12)  # SIGUSR2
                    time.sleep(3)
                print(f"{done} learners: RSS {server._status_kib('VmRSS') / 1024:.0f} MB, peak "
                      f"{server.peak_memory() / 1024:.0f} MB", flush=True)
        if args.trace:
            import tracemalloc

            files = sorted(snapshots.iterdir())
            first, last = tracemalloc.Snapshot.load(str(files[0])), tracemalloc.Snapshot.load(str(files[-1]))
            print(f"grew most between {per_round} and {done} learners (tracemalloc, by line):")
            for stat in last.compare_to(first, "traceback")[:12]:
                print(f"  {stat.size_diff / 1024:+.0f} KiB in {stat.count_diff:+d} blocks")
                for line in stat.traceback.format()[-8:]:
                    print("     ", line)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
