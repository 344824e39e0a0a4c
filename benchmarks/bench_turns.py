"""What fair turns cost the queue: a class's queue full (every learner at their bound of open runs), with a
history of graded runs, in a throwaway PostgreSQL cluster (tests/postgres_cluster.py).

    .venv/bin/python benchmarks/bench_turns.py [--learners 200] [--past 50] [--reads 50]

Prints the median time of RunJobs.position (the fair order a waiting page's place comes from, read afresh
each time here) and of RunJobs.start (a worker's queue job taking the run that is due), with and without
the index on (learner_id, started_ts) that tells when each learner was served last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from postgres_cluster import new_postgres_schema, throwaway_cluster  # noqa: E402


def measure(cluster: str, learners: int, past: int, reads: int, index: bool) -> tuple[float, float]:
    from chainrule.progress import open_store
    from chainrule.progress.run_jobs import MAX_OPEN_PER_LEARNER, RunJobs

    store = open_store(database=new_postgres_schema(cluster), fuzzing=False)
    try:
        jobs = RunJobs(store)

        def history(conn) -> None:
            for learner in range(1, learners + 1):
                for number in range(past):
                    conn.execute(
                        "INSERT INTO grading_jobs (learner_id, request_key, exercise_id, language, source, state, "
                        "submitted_ts, deadline_ts, started_ts) VALUES (?, ?, 'x', 'python', '', 'graded', 0, 1e12, ?)",
                        (learner, f"past-{number}", float(number * learners + learner)))
            if not index:
                conn.execute("DROP INDEX grading_jobs_by_learner_start")

        store.database.write(history)
        queued = [jobs.submit(learner, "x", "python", "", f"now-{number}")[0]
                  for number in range(MAX_OPEN_PER_LEARNER) for learner in range(1, learners + 1)]
        positions = []
        for job in queued[-reads:]:
            jobs._order = (float("-inf"), [])  # afresh: what one page's question costs when nothing is cached
            started = time.perf_counter()
            jobs.position(job)
            positions.append(time.perf_counter() - started)
        starts = []
        for turn in range(reads):
            started = time.perf_counter()
            jobs.start(1_000_000 + turn, "bench")
            starts.append(time.perf_counter() - started)
        return statistics.median(positions), statistics.median(starts)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--past", type=int, default=50, help="graded runs per learner already in the table")
    parser.add_argument("--reads", type=int, default=50)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with throwaway_cluster(fsync=True) as cluster:
        for index in (True, False):
            position, start = measure(cluster, args.learners, args.past, args.reads, index)
            print(f"{'with' if index else 'without'} the index: {args.learners * 3} queued runs of {args.learners} "
                  f"learners, {args.learners * args.past:,} past: position {position * 1000:.1f} ms, "
                  f"start {start * 1000:.1f} ms (medians of {args.reads})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
