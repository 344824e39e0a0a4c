"""A class under load, learners behaving like browsers: the curve of learners a school's server holds.

    .venv/bin/python benchmarks/bench_class_browsers.py [--curve 100 200 400] [--web 2] [--workers 2]
        [--think 3] [--ramp 45] [--exercises 3] [--endless N] [--sqlite | --separate]

Everything runs on this machine, on loopback: a throwaway PostgreSQL cluster (fsync on; tests/postgres_cluster.py),
`chainrule class create`, one `chainrule serve --workers WEB` (WEB web processes on one port) and one
`chainrule worker --concurrency WORKERS`. With --separate, WEB `chainrule serve --workers 1` on ports of their
own (a learner keeps to one, as behind a proxy) and WORKERS `chainrule worker --concurrency 1`, all reaching
PostgreSQL by TCP with the role's password, as from separate hosts. With --sqlite, the default class: SQLite
and one `chainrule serve` that grades the runs itself.

The learners are split over --generators processes (2 by default), each with an event loop of its own. Each
learner is a browser_http.Browser (a lean HTTP/1.1 client: httpx costs 7.7 times its CPU a request,
bench_http_clients.py) with its own cookies, at most 6 connections (as a browser keeps per host) and a browser cache (a fingerprinted
static file, `immutable`, is fetched once; any other is revalidated with If-None-Match); a request whose
kept-alive connection the server closed as it was sent goes again once on a new connection, as a browser does
(counted). The accounts exist before a step starts (as a class does on its
first day); in the step each learner, arriving spread over --ramp seconds:
signs in with the password; opens the lesson page, then every static file the page and its modules name, and
the API the page asks; saves each prediction after a pause (--think, on average); per exercise saves a draft,
runs failing code (one time in three) and then passing code, and one learner in 25 (at least one; with
--endless N, N learners) runs an endless loop once, following each run until graded as the page does; reloads
the page (cached); answers the quiz.

One more learner, in a process of its own whose event loop is idle (as a browser on its own machine), reads its
progress and saves a prediction in turn twice a second through the step: what one learner waits, without this
load generator's own queue (one Python process for every learner, on the same cores as the servers).

Per step it prints p50/p95/p99 per route, failed requests (a status >= 500 or a dropped connection: 429/409
answers are a page's business, counted apart), sign-in latency, queue wait (sent to started, from the database),
runs graded per second, lost runs (accepted, never graded or ended with a verdict) and doubled runs (more
submissions than graded runs), each web process's peak resident size, and the most PostgreSQL connections open.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from urllib.parse import urljoin

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

import httpx  # noqa: E402
from bench_class import PASSWORD, free_port, percentile, start, stop  # noqa: E402
from browser_http import Browser, Dropped  # noqa: E402

from chainrule import lessons  # noqa: E402
from chainrule.grading import default_limits, gate, reference_source  # noqa: E402
from postgres_cluster import new_postgres_schema, throwaway_cluster  # noqa: E402

lessons.register_exercises()

LESSON = "backprop"
CLASS = "Bench"
FAILING = "# not finished yet\nanswer = None\n"
ENDLESS = "while True:\n    pass\n"
DATABASE_PASSWORD = "a database password for the benchmark"
NAMED: dict[str, list[str]] = {}  # a static file's URL -> the URLs it names (the same file for every learner; per process)
# A browser waits for a slow answer (the page sets no timeout on "Run tests"), so a learner's client here gives up
# only on a hang: past twice the longest answer the server may give, a run that waited its whole turn in the
# grading gate and then ran every hang-guard window a starved run is given (docs/grading.md, "A busy machine").
# On a busy machine that answer is legitimate: an endless loop at the grading nice took 127 s with two burners
# per core.
RUN_LIMITS = default_limits("python")
ANSWER_BOUND = 2 * (gate().wait_seconds + RUN_LIMITS.wall_seconds * RUN_LIMITS.starved_windows)  # 360 s
REFERENCE = re.compile(r"""(?:src|href)=["']([^"']+)["']|from\s+["']([^"']+)["']|import\s*\(?\s*["']([^"']+)["']|"""
                       r"""url\(\s*["']?([^"')]+)["']?\s*\)""")


def route_of(method: str, path: str) -> str:
    path = re.sub(r"^https?://[^/]+", "", path)
    if path.startswith("/static/"):
        return "static"
    path = re.sub(r"/\d+(?=/|$)", "/N", path.split("?")[0])
    path = re.sub(r"/predictions/[^/]+", "/predictions/K", path)
    path = re.sub(r"/quiz/[^/]+", "/quiz/Q", path)
    return f"{method} {path}"


class Learner:
    def __init__(self, client, name: str, stats: dict) -> None:
        self.client, self.name, self.stats = client, name, stats
        self.cache: dict[str, str | None] = {}  # URL -> ETag (None: immutable, never asked again)
        self.jobs: list[int] = []

    async def call(self, method: str, url: str, **kwargs):
        headers = dict(kwargs.pop("headers", {}))
        if method not in ("GET", "HEAD"):
            headers["X-CSRF-Token"] = self.client.cookies.get("chainrule_csrf", "")
        route = route_of(method, url)
        started = time.perf_counter()
        resent = self.client.resent
        try:
            # A request whose kept-alive connection the server closed as it was sent goes again once, on a new
            # connection, as a browser's does (browser_http; a run carries its key, so it is not sent twice).
            answer = await self.client.request(method, url, headers=headers, **kwargs)
        except Dropped as error:  # a refused or dropped connection, twice, or a timeout: the learner sees it fail
            self.stats["failed"].append(f"{route}: {error}")
            return None
        self.stats["ms"][route].append((time.perf_counter() - started) * 1000)
        if self.client.resent > resent:
            self.stats["resent_routes"][route] += 1
        if answer.status_code >= 500:
            self.stats["failed"].append(f"{route}: {answer.status_code} {answer.text[:100]}")
            return None
        if answer.status_code >= 400:
            self.stats["refused"][f"{route} {answer.status_code}"] += 1
            return None
        return answer

    async def static(self, url: str) -> list[str]:
        """A static file through the browser's cache; the URLs it names (imports, fonts) if it was fetched."""
        if url in self.cache and self.cache[url] is None:
            self.stats["cache_hits"] += 1
            return []
        headers = {"If-None-Match": self.cache[url]} if self.cache.get(url) else {}
        known = NAMED.get(url)
        # Decoding and scanning 1 MB of scripts is the browser's work, on the learner's own machine: here it would
        # take the server's cores. Each file is read once for what it names; other learners take it as sent.
        answer = await self.call("GET", url, headers={**headers, "Accept-Encoding": "br, gzip"})
        if answer is None or answer.status_code == 304:
            return []
        immutable = "immutable" in answer.headers.get("cache-control", "")
        self.cache[url] = None if immutable else answer.headers.get("etag")
        self.stats["static_bytes"] += answer.num_bytes_downloaded  # as sent (compressed)
        if known is None:
            kind = answer.headers.get("content-type", "")
            text = answer.text if ("javascript" in kind or "css" in kind) else ""
            known = NAMED[url] = [urljoin(url, found) for found in self._references(text)]
        return known

    async def page(self, path: str) -> None:
        answer = await self.call("GET", path)
        if answer is None:
            return
        seen: set[str] = set()
        waiting = [urljoin(str(answer.url), found) for found in self._references(answer.text)]
        while waiting:
            batch: list[str] = []
            while waiting and len(batch) < 6:  # about as many at once as a browser's connections
                url = waiting.pop(0)
                if url not in seen and url not in batch:
                    batch.append(url)
            seen.update(batch)
            for named in await asyncio.gather(*(self.static(url) for url in batch)):
                waiting += [url for url in named if url not in seen]
        await asyncio.gather(self.call("GET", f"/api/lessons/{LESSON}"), self.call("GET", f"/api/progress/{LESSON}"),
                             self.call("GET", "/api/jobs"), self.call("GET", "/api/class/deadlines/mine"))

    @staticmethod
    def _references(text: str) -> list[str]:
        found = [next(group for group in match.groups() if group) for match in REFERENCE.finditer(text)]
        return [item for item in found if "/static/" in item or (item.startswith(".") and item.endswith((".js", ".css")))]

    async def think(self, mean: float) -> None:
        await asyncio.sleep(random.uniform(0.5, 1.5) * mean)

    async def sign_in(self) -> bool:
        form = await self.call("GET", "/sign-in")
        if form is None:
            return False
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
        started = time.perf_counter()
        answer = await self.call("POST", "/sign-in", data={"csrf": csrf, "class_name": CLASS, "name": self.name,
                                                           "password": PASSWORD})
        if answer is None or answer.status_code != 303:
            self.stats["sign_in_failed"] += 1
            return False
        self.stats["sign_in_ms"].append((time.perf_counter() - started) * 1000)
        return True

    async def lesson(self, think: float, exercises: int, endless: bool) -> None:
        if not await self.sign_in():
            return
        await self.page(f"/lessons/{LESSON}")
        for key in lessons.prediction_keys(LESSON):
            await self.think(think)
            await self.call("PUT", f"/api/progress/{LESSON}/predictions/{key}", json={"value": 1.0})
        for number, exercise in enumerate(lessons.exercise_ids(LESSON)[:exercises]):
            source = reference_source(exercise, "python")
            await self.think(think)
            await self.call("PUT", "/api/progress/code", json={"exercise": exercise, "language": "python",
                                                               "source": FAILING})
            if endless and number == 0:
                await self.run(exercise, ENDLESS)
                await self.think(think)
            if random.random() < 1 / 3:
                await self.run(exercise, FAILING)
                await self.think(think)
            await self.call("PUT", "/api/progress/code", json={"exercise": exercise, "language": "python",
                                                               "source": source})
            await self.run(exercise, source)
        await self.page(f"/lessons/{LESSON}")  # a reload: the static files come from the cache
        for question in lessons.question_ids(LESSON):
            await self.think(think)
            options = lessons.quiz_question(LESSON, question).get("options") or ["1"]
            await self.call("POST", f"/api/lessons/{LESSON}/quiz/{question}", json={"answer": random.choice(options)})

    async def run(self, exercise: str, source: str) -> None:
        ticket = await self.call("POST", "/api/grade", headers={"X-Chainrule-Run": uuid.uuid4().hex},
                                 json={"exercise": exercise, "language": "python", "source": source})
        if ticket is None:
            self.stats["runs_refused"] += 1
            return
        if "job" not in ticket.json():  # graded in the web process (a class in SQLite): the result itself
            verdict = ticket.json().get("verdict")
            self.stats["runs_busy" if verdict == "busy" else "runs_inline"] += 1
            return
        status = ticket.json()
        self.jobs.append(status["job"])
        while status.get("state") in ("queued", "running"):
            await asyncio.sleep(status.get("poll_after", 1.0))
            answer = await self.call("GET", f"/api/jobs/{status['job']}")
            if answer is not None:
                status = answer.json()


async def join_all(base: str, invite: str, names: list[str], at_once: int = 2) -> None:
    """Make the accounts before the step, ``at_once`` joins at a time (the password pool's width on 2 cores)."""
    import httpx

    async def joiner(share: list[str]) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            for name in share:  # one at a time per client: one client's cookies
                client.cookies.clear()
                page = await client.get(invite)
                csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
                answer = await client.post(invite, data={"csrf": csrf, "name": name, "password": PASSWORD})
                if answer.status_code != 303:
                    raise SystemExit(f"{name} could not join: {answer.status_code} {answer.text[:200]}")

    await asyncio.gather(*(joiner(names[start::at_once]) for start in range(at_once)))


async def class_works(bases: list[str], names: list[str], chosen: list[int], endless: set[int], think: float,
                      ramp: float, exercises: int) -> dict:
    """The lessons of the learners ``chosen`` (indices into ``names``); learner i arrives at ramp * i / len(names)
    and uses web address i mod len(bases) (as a proxy keeps a browser on one)."""
    stats: dict = {"ms": defaultdict(list), "failed": [], "refused": defaultdict(int), "resent_routes": defaultdict(int),
                   "sign_in_ms": [],
                   "sign_in_failed": 0, "runs_refused": 0, "runs_busy": 0, "runs_inline": 0, "resent": 0,
                   "cache_hits": 0, "static_bytes": 0}
    browsers = {index: Browser(bases[index % len(bases)], timeout=ANSWER_BOUND) for index in chosen}
    learners = {index: Learner(browsers[index], names[index], stats) for index in chosen}
    lag = LoopLag()
    cpu_before = time.process_time()
    try:
        async def one(index: int) -> None:
            await asyncio.sleep(ramp * index / len(names))
            await learners[index].lesson(think, exercises, index in endless)

        started = time.perf_counter()
        await asyncio.gather(*(one(index) for index in chosen))
        stats["seconds"] = time.perf_counter() - started
        stats["jobs"] = [job for learner in learners.values() for job in learner.jobs]
    finally:
        lag.stop()
        await asyncio.gather(*(browser.aclose() for browser in browsers.values()))
    stats["resent"] = sum(browser.resent for browser in browsers.values())
    stats["generator_cpu"] = time.process_time() - cpu_before
    stats["loop_lag_ms"] = lag.late_ms
    for key in ("ms", "refused", "resent_routes"):  # plain dicts, to pass between processes
        stats[key] = dict(stats[key])
    return stats


class LoopLag:
    """How late this generator's event loop wakes a 100 ms timer: what its own queue adds to every figure it
    measures (a browser's loop on its own machine adds about nothing)."""

    def __init__(self, every: float = 0.1) -> None:
        self.every, self.late_ms = every, []
        self.task = asyncio.get_running_loop().create_task(self.watch())

    async def watch(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(self.every)
            self.late_ms.append((time.perf_counter() - before - self.every) * 1000)

    def stop(self) -> None:
        self.task.cancel()


def generate(arguments: tuple, results: "multiprocessing.Queue") -> None:
    """class_works in a process of its own (one of --generators)."""
    results.put(asyncio.run(class_works(*arguments)))


def merged(parts: list[dict]) -> dict:
    """The generators' figures as one: lists joined, counts added, the longest time."""
    total: dict = {"ms": defaultdict(list), "refused": defaultdict(int), "resent_routes": defaultdict(int)}
    for part in parts:
        for key, value in part.items():
            if key == "ms":
                for route, values in value.items():
                    total["ms"][route] += values
            elif key in ("refused", "resent_routes"):
                for route, count in value.items():
                    total[key][route] += count
            elif key == "seconds":
                total[key] = max(total.get(key, 0.0), value)
            elif isinstance(value, list):
                total[key] = total.get(key, []) + value
            else:
                total[key] = total.get(key, 0) + value
    return total


def class_works_in_processes(bases: list[str], names: list[str], args: argparse.Namespace) -> dict:
    """The learners split over --generators processes (learner i in process i mod N), each its own event loop."""
    count = max(1, len(names) // 25) if args.endless is None else min(args.endless, len(names))
    endless = set(random.sample(range(len(names)), count))
    shares = [list(range(first, len(names), args.generators)) for first in range(args.generators)]
    spawn = multiprocessing.get_context("spawn")
    results = spawn.Queue()
    processes = [spawn.Process(target=generate, args=((bases, names, share, endless, args.think, args.ramp,
                                                       args.exercises), results), daemon=True) for share in shares]
    for process in processes:
        process.start()
    parts = [results.get(timeout=3600) for _ in processes]
    for process in processes:
        process.join(60)
    return merged(parts)


def probe(base: str, name: str, stop: "multiprocessing.synchronize.Event", results: "multiprocessing.Queue") -> None:
    """One more learner in a process of its own, with an idle event loop as a browser on its own machine has:
    twice a second a read of the API and, in turn, a save; what it waits is what one learner sees."""
    waits: dict[str, list[float]] = {"read": [], "save": []}
    failed = 0
    with httpx.Client(base_url=base, timeout=60) as client:
        form = client.get("/sign-in")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
        signed = client.post("/sign-in", data={"csrf": csrf, "class_name": CLASS, "name": name, "password": PASSWORD})
        assert signed.status_code == 303, signed.text
        key = lessons.prediction_keys(LESSON)[0]
        turn = 0
        while not stop.wait(0.5):
            turn += 1
            kind = "save" if turn % 2 else "read"
            started = time.perf_counter()
            try:
                if kind == "read":
                    answer = client.get(f"/api/progress/{LESSON}")
                else:
                    answer = client.put(f"/api/progress/{LESSON}/predictions/{key}", json={"value": 1.0},
                                        headers={"X-CSRF-Token": client.cookies.get("chainrule_csrf", "")})
                failed += answer.status_code >= 400
            except httpx.HTTPError:
                failed += 1
                continue
            waits[kind].append((time.perf_counter() - started) * 1000)
    results.put((waits, failed))


class Sampler:
    """Once a second: each web process's resident size (its peak kept), and PostgreSQL's open connections."""

    def __init__(self, supervisors: list[int], url: str | None) -> None:
        self.supervisors, self.url = supervisors, url
        self.peak_kib: dict[int, int] = {}
        self.connections = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def web_processes(self) -> list[int]:
        """Each supervisor's children (serve --workers N > 1 forks them), or the supervisor itself."""
        found = []
        for supervisor in self.supervisors:
            children = Path(f"/proc/{supervisor}/task/{supervisor}/children")
            pids = [int(pid) for pid in children.read_text().split()] if children.exists() else []
            found += pids or [supervisor]
        return found

    def sample(self) -> None:
        import psycopg

        conn = psycopg.connect(self.url, autocommit=True) if self.url else None
        try:
            while not self.stopping.wait(1.0):
                for pid in self.web_processes():
                    try:
                        status = Path(f"/proc/{pid}/status").read_text()
                    except OSError:
                        continue
                    rss = int(re.search(r"^VmRSS:\s+(\d+)", status, re.MULTILINE).group(1))
                    self.peak_kib[pid] = max(self.peak_kib.get(pid, 0), rss)
                if conn is not None:
                    count = conn.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                                         ).fetchone()[0]
                    self.connections = max(self.connections, count - 1)
        finally:
            if conn is not None:
                conn.close()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()


def database_figures(url: str, jobs: list[int], wait_seconds: float = 180) -> dict:
    """From the rows: runs graded, lost (accepted, never graded nor ended with a verdict; after the queue
    drained), doubled, queue wait, runs graded per second."""
    import psycopg

    deadline = time.monotonic() + wait_seconds
    with psycopg.connect(url, autocommit=True) as conn:
        while (conn.execute("SELECT COUNT(*) FROM grading_jobs WHERE state IN ('queued', 'running')").fetchone()[0]
               and time.monotonic() < deadline):
            time.sleep(1)
        rows = conn.execute("SELECT id, state, submitted_ts, started_ts, finished_ts, result FROM grading_jobs").fetchall()
        submissions = conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    by_id = {row[0]: row for row in rows}
    graded = [row for row in rows if row[1] == "graded"]
    ended = [row for row in rows if row[1] == "ended"]
    lost = [job for job in jobs if job not in by_id or by_id[job][1] not in ("graded", "ended")]
    lost += [row[0] for row in ended if '"expired"' in (row[5] or "") or '"crashed"' in (row[5] or "")]
    waits = [row[3] - row[2] for row in graded if row[3] is not None]
    span = (max(row[4] for row in graded) - min(row[3] for row in graded)) if graded else float("nan")
    return {"graded": len(graded), "ended": len(ended), "lost": len(set(lost)),
            "doubled": max(0, submissions - len(graded)), "wait_p50": percentile(waits, 0.5),
            "wait_p95": percentile(waits, 0.95), "rate": len(graded) / span if graded and span else float("nan")}


def step(cluster: str | None, learners: int, args: argparse.Namespace) -> None:
    """One step of the curve: a new class (a new schema, or a new SQLite folder), its servers, the learners."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    if cluster is None:  # the default: the class in SQLite, runs graded in the one web process
        folder = tempfile.mkdtemp(prefix="chainrule-bench-")
        env = dict(os.environ, CHAINRULE_DATA_DIR=folder, PYTHONUNBUFFERED="1")
        env.pop("CHAINRULE_DATABASE", None)
        url = None
    else:
        url = new_postgres_schema(cluster)
        if args.separate:  # as from other hosts: TCP and the role's password
            schema = url.split("search_path%3D")[1]
            url = (f"postgresql://chainrule:{DATABASE_PASSWORD.replace(' ', '%20')}@127.0.0.1:{args.pg_port}/postgres"
                   f"?options=-csearch_path%3D{schema}")
        env = dict(os.environ, CHAINRULE_DATABASE=url, PYTHONUNBUFFERED="1")
    made = subprocess.run([sys.executable, "-m", "chainrule", "class", "create", CLASS, "--url", base],
                          env=env, cwd=REPO, capture_output=True, text=True, check=True)
    invite = re.findall(rf"{re.escape(base)}/join/\S+", made.stdout)[0]
    if cluster is None:
        webs, workers = [start(["serve", "--port", str(port)], env, "sign in at")], []
        bases = [base]
    elif args.separate:  # each web process and each worker a process of its own, as on its own host
        ports = [port] + [free_port() for _ in range(args.web - 1)]
        webs = [start(["serve", "--port", str(each), "--workers", "1", "--url", base], env, "sign in at")
                for each in ports]
        workers = [start(["worker", "--concurrency", "1"], env, "is grading") for _ in range(args.workers)]
        bases = [f"http://127.0.0.1:{each}" for each in ports]
    else:
        webs = [start(["serve", "--port", str(port), "--workers", str(args.web)], env, "sign in at")]
        workers = [start(["worker", "--concurrency", str(args.workers)], env,
                         "processes grading" if args.workers > 1 else "is grading")]
        bases = [base]
    names = [f"learner{index:04d}" for index in range(learners)]
    spawn = multiprocessing.get_context("spawn")
    probe_stop, probe_results = spawn.Event(), spawn.Queue()
    try:
        asyncio.run(join_all(base, invite.removeprefix(base), [*names, "probe"]))
        sampler = Sampler([web.pid for web in webs], cluster)
        prober = spawn.Process(target=probe, args=(bases[0], "probe", probe_stop, probe_results), daemon=True)
        prober.start()
        load = os.getloadavg()[0]
        stats = class_works_in_processes(bases, names, args)
        probe_stop.set()
        probe_waits, probe_failed = probe_results.get(timeout=120)
        prober.join(30)
        figures = database_figures(url, stats["jobs"]) if url else None
        sampler.stop()
    finally:
        for process in [*workers, *webs]:
            stop(process)
    api = [value for route, values in stats["ms"].items() if " /api/" in route for value in values]
    every = [value for values in stats["ms"].values() for value in values]
    peaks = " + ".join(f"{kib / 1024:.0f}" for kib in sorted(sampler.peak_kib.values(), reverse=True)[:args.web])
    kind = ("SQLite, runs graded in the web process" if cluster is None else
            f"{args.web} web processes, {args.workers} worker processes"
            + (", each a process of its own reaching PostgreSQL by TCP with a password" if args.separate else ""))
    print(f"\n{learners} learners ({kind}; {args.generators} load-generating processes; load average {load:.1f} at "
          f"the start) in {stats['seconds']:.0f} s, "
          f"{len(every)} requests:")
    print(f"  API p50/p95/p99 {percentile(api, 0.5):.0f} / {percentile(api, 0.95):.0f} / {percentile(api, 0.99):.0f} ms;"
          f" all requests p95 {percentile(every, 0.95):.0f} ms; failed {len(stats['failed'])} (sent again once, as a "
          f"browser does: {stats['resent']}); sign-in p50/p95 {percentile(stats['sign_in_ms'], 0.5):.0f} / "
          f"{percentile(stats['sign_in_ms'], 0.95):.0f} ms, {stats['sign_in_failed']} failed")
    print(f"  load generators: {stats['generator_cpu'] / max(1, len(every)) * 1000:.2f} ms of CPU a request; their "
          f"event loops woke a 100 ms timer late by p95 {percentile(stats['loop_lag_ms'], 0.95):.0f} ms, at most "
          f"{max(stats['loop_lag_ms'], default=0):.0f} ms (what their own queue adds to the figures above)")
    print(f"  one more learner, in a process of its own with an idle loop (as a browser): read p50/p95/p99 "
          f"{percentile(probe_waits['read'], 0.5):.0f} / {percentile(probe_waits['read'], 0.95):.0f} / "
          f"{percentile(probe_waits['read'], 0.99):.0f} ms, save {percentile(probe_waits['save'], 0.5):.0f} / "
          f"{percentile(probe_waits['save'], 0.95):.0f} / {percentile(probe_waits['save'], 0.99):.0f} ms "
          f"({len(probe_waits['read']) + len(probe_waits['save'])} requests, {probe_failed} failed)")
    if figures is None:
        print(f"  runs: {stats['runs_inline']} graded, {stats['runs_busy']} answered busy, {stats['runs_refused']} "
              "refused or failed")
    else:
        print(f"  runs: {len(stats['jobs'])} accepted, {figures['graded']} graded, {figures['ended']} ended, lost "
              f"{figures['lost']}, doubled {figures['doubled']}, refused (per-learner bound) {stats['runs_refused']}; "
              f"queue wait p50/p95 {figures['wait_p50']:.1f} / {figures['wait_p95']:.1f} s; "
              f"{figures['rate']:.2f} runs graded/s")
    print(f"  web processes' peak RSS {peaks} MB; most PostgreSQL connections {sampler.connections}; static "
          f"{stats['static_bytes'] / 1e6:.1f} MB sent, {stats['cache_hits']} served from the browsers' caches")
    for route in sorted(stats["ms"], key=lambda name: -len(stats["ms"][name])):
        values = stats["ms"][route]
        print(f"    {route:48} {len(values):6d}  p50 {percentile(values, 0.5):6.0f}  p95 "
              f"{percentile(values, 0.95):6.0f}  p99 {percentile(values, 0.99):6.0f} ms")
    for name, count in sorted(stats["resent_routes"].items(), key=lambda item: -item[1]):
        print(f"    sent again: {name} x {count}")
    for name, count in sorted(stats["refused"].items()):
        print(f"    answered 4xx: {name} x {count}")
    for failure in stats["failed"][:5]:
        print(f"    failed: {failure}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--curve", type=int, nargs="+", default=[100, 200, 400])
    parser.add_argument("--web", type=int, default=2, help="web processes (serve --workers)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (worker --concurrency)")
    parser.add_argument("--think", type=float, default=3.0, help="mean seconds a learner pauses between steps")
    parser.add_argument("--ramp", type=float, default=45.0, help="seconds over which the learners arrive")
    parser.add_argument("--exercises", type=int, default=3, help="exercises each learner does (of 3)")
    parser.add_argument("--endless", type=int, default=None, metavar="N",
                        help="learners who run an endless loop once (default: one in 25, at least one)")
    parser.add_argument("--generators", type=int, default=2,
                        help="processes the learners are split over (one event loop each)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--sqlite", action="store_true",
                       help="the default class: SQLite, one web process grading the runs itself (no workers)")
    where.add_argument("--separate", action="store_true",
                       help="each web process (`serve --workers 1`, on ports of their own) and each worker "
                            "(`worker --concurrency 1`) a process of its own, reaching PostgreSQL by TCP with a "
                            "password, as from separate hosts")
    args = parser.parse_args(argv)
    if args.endless is not None and args.endless < 0:
        parser.error(f"--endless is a number of learners, 0 or more (got {args.endless})")
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores", flush=True)
    if args.sqlite:
        for learners in args.curve:
            step(None, learners, args)
    else:
        args.pg_port = free_port() if args.separate else None
        with throwaway_cluster(max_connections=100, fsync=True, tcp_port=args.pg_port,
                               password=DATABASE_PASSWORD if args.separate else None) as cluster:
            for learners in args.curve:
                step(cluster, learners, args)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
