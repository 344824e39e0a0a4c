"""A regrade at scale: N learners' runs of one exercise graded again through the queue by W `chainrule worker`
processes, in a throwaway PostgreSQL cluster (tests/postgres_cluster.py, fsync on).

    .venv/bin/python benchmarks/bench_regrade.py [--submissions 1000] [--workers 2]

Each learner has one run of neuron-grads kept as a pass by older cases: half of them the reference solution,
half a version that forgets tanh's derivative (which the current cases fail). `chainrule class regrade`'s
steps (classes/regrade.py: start, grade, apply) run here against W workers started as processes. Printed:
the time from start to every run graded, runs per second, how many learners change standing (N / 2
expected), the time to apply, and next to it, for scale, the median time of one run graded in this process
(grade_now, no queue) times N / W.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from postgres_cluster import new_postgres_schema, throwaway_cluster  # noqa: E402

EXERCISE = "neuron-grads"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    import anyio

    from chainrule import lessons
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.graded_runs import QueuedRuns
    from chainrule.classes.regrade import Regrades
    from chainrule.grading import grade_now, reference_source
    from chainrule.progress import open_store

    lessons.register_exercises()
    right = reference_source(EXERCISE, "python")
    wrong = right.replace("dn = 1 - out**2", "dn = 1")
    with throwaway_cluster(fsync=True) as cluster:
        url = new_postgres_schema(cluster)
        store = open_store(database=url, fuzzing=False)
        accounts = Accounts(store)
        class_id = accounts.create_class("Bench").class_id
        at = store.now().isoformat()

        def learners(conn) -> list[int]:
            return [int(conn.execute("INSERT INTO accounts (class_id, role, name, created_at) VALUES (?, 'learner', ?, ?) "
                                     "RETURNING id", (class_id, f"learner {number:04d}", at)).fetchone()[0])
                    for number in range(args.submissions)]

        ids = store.database.write(learners)
        for number, learner in enumerate(ids):
            store.for_learner(learner).record_submission(EXERCISE, "python", right if number % 2 else wrong,
                                                         {"status": "pass"})
        env = dict(os.environ, CHAINRULE_DATABASE=url, PYTHONUNBUFFERED="1")
        env.pop("CHAINRULE_DATA_DIR", None)
        workers = [subprocess.Popen([sys.executable, "-m", "chainrule", "worker", "--concurrency", "1"], env=env,
                                    cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True) for _ in range(args.workers)]
        runs = QueuedRuns(store, url, deadline_seconds=6 * 3600)
        try:
            regrades = Regrades(store, accounts, runs)
            started = time.perf_counter()
            regrade_id = regrades.start(class_id, EXERCISE)
            table = anyio.run(regrades.grade, class_id, regrade_id)
            graded = time.perf_counter() - started
            started = time.perf_counter()
            regrades.apply(class_id, regrade_id)
            applied = time.perf_counter() - started
        finally:
            runs.close()
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.wait(timeout=120)
            store.close()
    alone = []
    for source in (right, wrong) * 5:
        begun = time.perf_counter()
        grade_now(EXERCISE, "python", source)
        alone.append(time.perf_counter() - begun)
    one = statistics.median(alone)
    print(f"{args.submissions} runs regraded on {args.workers} workers: {graded:.1f} s "
          f"({args.submissions / graded:.1f} runs/s); {table['changes']} learners change standing; "
          f"applied in {applied:.2f} s")
    print(f"one run graded in this process, no queue: {one * 1000:.0f} ms median; x {args.submissions} / "
          f"{args.workers} = {one * args.submissions / args.workers:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
