"""A class under load: N simulated learners do a lesson against `chainrule serve` + PostgreSQL + W workers.

    .venv/bin/python benchmarks/bench_class.py [--learners 200] [--workers 1 2] [--think 2] [--ramp 30]

Everything runs on this machine, on loopback: a throwaway PostgreSQL cluster (fsync on, a Unix socket;
tests/postgres_cluster.py), `chainrule class create`, one `chainrule serve` process, W `chainrule worker
--concurrency 1` processes, and the learners: one asyncio client (httpx) per learner, with its own
cookies, doing what a person does with pauses between steps (``--think`` seconds on average): open the
lesson page (the HTML, the lesson, their progress), answer the predictions, save code and run the tests
of each of the three exercises (following each run until graded, as jobs.js does), answer the quiz.
The learners start spread over ``--ramp`` seconds.

It reports, per W: the API's p50/p95 (every request, the grading wait excluded), the queue wait (a run
sent until a worker starts it, from the database), the grading throughput while the class worked,
errors and lost runs (runs accepted but not graded once). Then the queue's cost: K runs queued at once
and graded by one worker process, against grade() called K times in this process.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from chainrule import lessons  # noqa: E402
from chainrule.grading import reference_source  # noqa: E402
from local_http import async_client  # noqa: E402
from postgres_cluster import new_postgres_schema, throwaway_cluster  # noqa: E402

lessons.register_exercises()  # the learners send each exercise's reference solution

LESSON = "backprop"
PASSWORD = "a long enough password"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(argv: list[str], env: dict, ready: str | None) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "chainrule", *argv], env=env, cwd=REPO, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    seen: list[str] = []
    if ready is not None:
        for line in process.stdout:
            seen.append(line)
            if ready in line:
                break
        else:
            raise SystemExit(f"chainrule {' '.join(argv)} did not start: {''.join(seen)[-2000:]}")
    # Read the rest as it comes (the last lines kept): a full pipe would stop the process mid-benchmark.
    process.last_lines = collections.deque(maxlen=50)  # type: ignore[attr-defined]
    threading.Thread(target=process.last_lines.extend, args=(process.stdout,), daemon=True).start()  # type: ignore[attr-defined]
    return process


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


class Learner:
    def __init__(self, client, name: str, stats: dict) -> None:
        self.client, self.name, self.stats = client, name, stats
        self.jobs: list[int] = []

    async def call(self, method: str, url: str, **kwargs):
        headers = kwargs.pop("headers", {})
        if method != "GET":
            headers["X-CSRF-Token"] = self.client.cookies.get("chainrule_csrf", "")
        started = time.perf_counter()
        try:
            answer = await self.client.request(method, url, headers=headers, **kwargs)
        except Exception as error:  # a refused or dropped connection is an error the learner would see
            self.stats["errors"].append(f"{method} {url}: {type(error).__name__}")
            return None
        self.stats["api_ms"].append((time.perf_counter() - started) * 1000)
        if answer.status_code >= 400:
            self.stats["errors"].append(f"{method} {url}: {answer.status_code} {answer.text[:120]}")
            return None
        return answer

    async def join(self, invite: str) -> None:
        page = await self.client.get(invite)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        answer = await self.client.post(invite, data={"csrf": csrf, "name": self.name, "password": PASSWORD})
        if answer.status_code != 303:
            raise SystemExit(f"{self.name} could not join: {answer.status_code} {answer.text[:200]}")

    async def think(self, mean: float) -> None:
        await asyncio.sleep(random.uniform(0.5, 1.5) * mean)

    async def lesson(self, think: float) -> None:
        await self.call("GET", f"/lessons/{LESSON}")
        await self.call("GET", f"/api/lessons/{LESSON}")
        await self.call("GET", f"/api/progress/{LESSON}")
        for key in lessons.prediction_keys(LESSON):
            await self.think(think)
            await self.call("PUT", f"/api/progress/{LESSON}/predictions/{key}", json={"value": 1.0})
        for exercise in lessons.exercise_ids(LESSON):
            source = reference_source(exercise, "python")
            await self.think(think)
            await self.call("PUT", "/api/progress/code", json={"exercise": exercise, "language": "python",
                                                               "source": source})
            await self.think(think)
            await self.run(exercise, source)
        for question in lessons.question_ids(LESSON):
            await self.think(think)
            options = lessons.quiz_question(LESSON, question).get("options") or ["1"]
            await self.call("POST", f"/api/lessons/{LESSON}/quiz/{question}", json={"answer": random.choice(options)})

    async def run(self, exercise: str, source: str) -> None:
        ticket = await self.call("POST", "/api/grade", headers={"X-Chainrule-Run": uuid.uuid4().hex},
                                 json={"exercise": exercise, "language": "python", "source": source})
        if ticket is None:
            return
        status = ticket.json()
        if "job" not in status:
            self.stats["refused"] += 1
            return
        self.jobs.append(status["job"])
        sent = time.perf_counter()
        while status.get("state") in ("queued", "running"):
            await asyncio.sleep(status.get("poll_after", 1.0))
            answer = await self.call("GET", f"/api/jobs/{status['job']}")
            if answer is not None:
                status = answer.json()
        self.stats["run_to_result_s"].append(time.perf_counter() - sent)


async def class_works(base: str, invite: str, count: int, think: float, ramp: float) -> dict:
    import httpx

    stats: dict = {"api_ms": [], "errors": [], "refused": 0, "run_to_result_s": []}
    limits = httpx.Limits(max_connections=2)
    # One TLS context for every learner (tests/local_http.py): a context per client would cost the machine under
    # test about 35 ms of CPU each, 14 s for 400 learners.
    clients = [async_client(base_url=base, timeout=60, limits=limits) for _ in range(count)]
    learners = [Learner(client, f"learner{index:04d}", stats) for index, client in enumerate(clients)]
    try:
        joining = asyncio.Semaphore(4)

        async def join(learner: Learner) -> None:
            async with joining:
                await learner.join(invite)

        await asyncio.gather(*(join(learner) for learner in learners))
        stats["api_ms"].clear()  # joining (argon2 hashing) is not part of a lesson

        async def one(learner: Learner, delay: float) -> None:
            await asyncio.sleep(delay)
            await learner.lesson(think)

        started = time.perf_counter()
        await asyncio.gather(*(one(learner, ramp * index / count) for index, learner in enumerate(learners)))
        stats["seconds"] = time.perf_counter() - started
        stats["jobs"] = [job for learner in learners for job in learner.jobs]
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))
    return stats


def database_figures(url: str, jobs: list[int]) -> dict:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT id, state, submitted_ts, started_ts, finished_ts, attempts FROM grading_jobs").fetchall()
        submissions = conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    by_id = {row[0]: row for row in rows}
    graded = [row for row in rows if row[1] == "graded"]
    lost = [job for job in jobs if job not in by_id or by_id[job][1] != "graded"]
    waits = [row[3] - row[2] for row in graded]
    span = (max(row[4] for row in graded) - min(row[3] for row in graded)) if graded else float("nan")
    return {"graded": len(graded), "submissions": submissions, "lost": len(lost) + abs(submissions - len(graded)),
            "queue_wait_p50": percentile(waits, 0.5), "queue_wait_p95": percentile(waits, 0.95),
            "throughput": len(graded) / span if graded else float("nan"),
            "restarted": sum(1 for row in graded if row[5] > 1)}


def queue_cost(cluster: str, runs: int, rounds: int) -> dict:
    """What the queue costs: rounds of K runs queued at once and graded by one worker process, each next to
    K runs of grade() called one after another in this process (rounds interleaved, as the machine's load
    drifts); the medians of the rates and of the per-round ratio."""
    from chainrule.classes.graded_runs import QueuedRuns, Submission
    from chainrule.progress import open_store

    url = new_postgres_schema(cluster)
    store = open_store(database=url)
    grader = QueuedRuns(store, url, max_open=runs)
    exercises = lessons.exercise_ids(LESSON)
    sources = [(exercises[index % len(exercises)], reference_source(exercises[index % len(exercises)], "python"))
               for index in range(runs)]
    worker = start(["worker", "--concurrency", "1"], dict(os.environ, CHAINRULE_DATABASE=url, PYTHONUNBUFFERED="1"),
                   "is grading")
    alone, queued, pair = [], [], []

    def batch(label: str) -> float:
        jobs = [grader.submit_now(Submission(1, exercise, "python", source, f"{label}-{index}")).body["job"]
                for index, (exercise, source) in enumerate(sources)]
        return batch_rate(store, jobs)

    second = None
    try:
        for round_number in range(rounds):
            alone.append(grade_alone(sources))
            queued.append(batch(f"one-{round_number}"))
        # The same batches with a second worker process: what W = 2 grades when the queue is full.
        second = start(["worker", "--concurrency", "1"], dict(os.environ, CHAINRULE_DATABASE=url,
                                                              PYTHONUNBUFFERED="1"), "is grading")
        load = os.getloadavg()[0]
        pair = [batch(f"two-{round_number}") for round_number in range(rounds)]
    finally:
        for process in (worker, second):
            if process is not None:
                stop(process)
        grader.close()
        store.close()
    return {"worker": statistics.median(queued), "alone": statistics.median(alone),
            "ratio": statistics.median(w / a for w, a in zip(queued, alone)), "two": statistics.median(pair),
            "load": load}


def batch_rate(store, jobs: list[int]) -> float:
    """Runs per second a worker graded these jobs at (from the first start to the last finish)."""
    marks = ",".join("?" * len(jobs))

    def progress(conn):
        return conn.execute(f"SELECT COUNT(*), MIN(started_ts), MAX(finished_ts) FROM grading_jobs WHERE id IN ({marks}) "
                            "AND state = 'graded'", jobs).fetchone()

    while True:
        done, first, last = store.database.read(progress)
        if done == len(jobs):
            return len(jobs) / (last - first)
        time.sleep(0.05)


GRADE_ALONE = """
import sys, time
from chainrule import lessons
from chainrule.grading import grade, reference_source
lessons.register_exercises()
exercises = lessons.exercise_ids(sys.argv[1])
sources = [(exercises[i % len(exercises)], reference_source(exercises[i % len(exercises)], "python"))
           for i in range(int(sys.argv[2]))]
grade(sources[0][0], "python", sources[0][1])
started = time.perf_counter()
for exercise, source in sources:
    grade(exercise, "python", source)
print(len(sources) / (time.perf_counter() - started))
"""


def grade_alone(sources: list[tuple[str, str]]) -> float:
    """Runs per second of grade() called one after another (warmed by one run first), in a process of its
    own as small as a worker's: a sandbox starts slower from a large process such as this load generator."""
    done = subprocess.run([sys.executable, "-c", GRADE_ALONE, LESSON, str(len(sources))], cwd=REPO,
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--think", type=float, default=2.0, help="mean seconds a learner pauses between steps")
    parser.add_argument("--ramp", type=float, default=30.0, help="seconds over which the learners arrive")
    parser.add_argument("--cost-runs", type=int, default=30, help="runs per round for the queue's cost (0: skip)")
    parser.add_argument("--cost-rounds", type=int, default=5, help="rounds for the queue's cost")
    args = parser.parse_args(argv)

    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} cores", flush=True)
    with throwaway_cluster(max_connections=300, fsync=True) as cluster:
        for workers in args.workers:
            url = new_postgres_schema(cluster)
            env = dict(os.environ, CHAINRULE_DATABASE=url, PYTHONUNBUFFERED="1")
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            made = subprocess.run([sys.executable, "-m", "chainrule", "class", "create", "Bench", "--url", base],
                                  env=env, cwd=REPO, capture_output=True, text=True, check=True)
            invite = re.findall(rf"{re.escape(base)}/join/\S+", made.stdout)[0]
            web = start(["serve", "--port", str(port)], env, "sign in at")
            pool = [start(["worker", "--concurrency", "1"], env, "is grading") for _ in range(workers)]
            try:
                stats = asyncio.run(class_works(base, invite, args.learners, args.think, args.ramp))
            finally:
                for process in [*pool, web]:
                    stop(process)
            figures = database_figures(url, stats["jobs"])
            api = stats["api_ms"]
            print(f"W={workers}: {args.learners} learners in {stats['seconds']:.0f} s; API p50 "
                  f"{percentile(api, 0.5):.0f} ms, p95 {percentile(api, 0.95):.0f} ms over {len(api)} requests; "
                  f"queue wait p50 {figures['queue_wait_p50']:.1f} s, p95 {figures['queue_wait_p95']:.1f} s; "
                  f"grading {figures['throughput']:.2f} runs/s ({figures['graded']} graded, "
                  f"{figures['restarted']} started twice); errors {len(stats['errors'])}; "
                  f"refused (bound per learner) {stats['refused']}; lost runs {figures['lost']}", flush=True)
            met = percentile(api, 0.95) < 250 and not stats["errors"] and not figures["lost"]
            print(f"    goal (p95 API < 250 ms, 0 errors, 0 lost runs) with {args.learners} learners: "
                  f"{'met' if met else 'NOT met'}", flush=True)
            for error in stats["errors"][:5]:
                print(f"    error: {error}")
        if args.cost_runs:
            cost = queue_cost(cluster, args.cost_runs, args.cost_rounds)
            print(f"queue cost: one worker process {cost['worker']:.2f} runs/s, grade() alone {cost['alone']:.2f} "
                  f"runs/s (medians of {args.cost_rounds} rounds of {args.cost_runs}; worker/alone per round, "
                  f"median {cost['ratio']:.2f})", flush=True)
            print(f"a full queue: W=1 {cost['worker']:.2f} runs/s, W=2 {cost['two']:.2f} runs/s (ratio "
                  f"{cost['two'] / cost['worker']:.2f}; load average {cost['load']:.2f} on {os.cpu_count()} cores "
                  "when the second worker started)", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
