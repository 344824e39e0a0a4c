"""Correct code is never blamed for a busy server: every lesson's reference solutions pass while CPU burners
keep every core busy, graded in `chainrule serve` (a class in SQLite) and through `chainrule worker` (a class
in PostgreSQL).

    .venv/bin/python benchmarks/bench_starved.py [--faces serve worker] [--exercises ID ...]
                                                 [--languages python javascript typescript] [--burners-per-core 2]

Everything runs on this machine: per face a class made with `chainrule class create`, one `chainrule serve
--workers 1` process (grading in process at its grading nice, for the SQLite class) or that server and one
`chainrule worker --concurrency 1` (at its default nice, for the PostgreSQL class, in a throwaway cluster:
tests/postgres_cluster.py, or `--postgres URL`, a cluster's URL, where a fresh schema is made), and one learner
who sends each reference solution through POST /api/grade and follows it to its result as the page does, one
run at a time, while `burners-per-core` spinning processes per core, each in its own session (tests/burners.py),
keep every core busy: they start once the face is ready and stop after its last run, so they slow the runs,
not the set-up.

Prints a line per run (face, exercise, language, verdict, seconds from sent to result) and a summary; exits 0
when every run passed, 1 otherwise. docs/performance.md records a whole run; tests/test_grading_starved.py runs
it on one exercise.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from bench_class import free_port, start, stop  # noqa: E402

from burners import burners, cores  # noqa: E402
from chainrule.grading import list_exercises  # noqa: E402
from chainrule.lessons import register_exercises  # noqa: E402

PASSWORD = "a long enough password"
FACES = ("serve", "worker")
RESULT_WAIT_SECONDS = 900.0  # a hang guard only: a starved run ends long before (docs/grading.md)


def planned_runs(exercises: list[str] | None, languages: list[str]) -> list[tuple[str, str]]:
    register_exercises()
    known = list_exercises()
    unknown = set(exercises or ()) - {e["id"] for e in known}
    if unknown:
        raise SystemExit(f"no such exercise: {', '.join(sorted(unknown))}")
    return [(e["id"], language) for e in known if exercises is None or e["id"] in exercises
            for language in e["languages"] if language in languages]


def learner(base: str, invite: str):
    import httpx

    client = httpx.Client(base_url=base, timeout=120)
    page = client.get(invite)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
    joined = client.post(invite, data={"csrf": csrf, "name": "Ada", "password": PASSWORD})
    if joined.status_code != 303:
        raise SystemExit(f"could not join the class: {joined.status_code} {joined.text[:200]}")
    return client


def graded(client, exercise: str, language: str) -> dict:
    """Send the reference solution as the page does and follow it to its result."""
    from chainrule.grading import reference_source

    headers = {"X-CSRF-Token": client.cookies.get("chainrule_csrf", ""), "X-Chainrule-Run": uuid.uuid4().hex}
    answer = client.post("/api/grade", headers=headers, json={
        "exercise": exercise, "language": language, "source": reference_source(exercise, language)})
    body = answer.json()
    if answer.status_code == 200:
        return body
    if answer.status_code != 202:
        return {"verdict": f"HTTP {answer.status_code}", "message": answer.text[:300]}
    deadline = time.monotonic() + RESULT_WAIT_SECONDS
    while body.get("state") in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(body.get("poll_after", 1.0))
        body = client.get(f"/api/jobs/{body['job']}").json()
    return body.get("result") or {"verdict": "no result", "message": f"still {body.get('state')}"}


def face(name: str, runs: list[tuple[str, str]], folder: Path, postgres: str | None,
         per_core: int) -> tuple[list[tuple], float]:
    """Every run through one face: (face, exercise, language, verdict, seconds, message), and the load average
    at the end. The burners start once the face is set up (its class made, its processes ready, the learner
    joined) and stop before it is taken down: they weigh on the runs, not on the set-up."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATA_DIR=str(folder / "data"))
    env.pop("CHAINRULE_DATABASE", None)
    with ExitStack() as stack:
        if name == "worker":
            from postgres_cluster import new_postgres_schema, throwaway_cluster

            cluster = postgres or stack.enter_context(throwaway_cluster())
            env["CHAINRULE_DATABASE"] = new_postgres_schema(cluster)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        made = subprocess.run([sys.executable, "-m", "chainrule", "class", "create", f"Busy {name}", "--url", base],
                              env=env, cwd=REPO, capture_output=True, text=True, check=True)
        invite = re.findall(rf"{re.escape(base)}/join/\S+", made.stdout)[0]
        processes = [start(["serve", "--port", str(port), "--workers", "1"], env, "sign in at")]
        stack.callback(lambda: [stop(process) for process in processes])
        if name == "worker":
            processes.append(start(["worker", "--concurrency", "1"], env, "is grading"))
        client = learner(base, invite)
        stack.callback(client.close)
        rows = []
        with burners(per_core) as spinning:
            print(f"{name}: {len(spinning)} burners on {cores()} cores; load average {os.getloadavg()[0]:.1f}",
                  flush=True)
            for exercise, language in runs:
                sent = time.monotonic()
                result = graded(client, exercise, language)
                rows.append((name, exercise, language, result.get("verdict"), time.monotonic() - sent,
                             result.get("message")))
                print(f"{name:7} {exercise:28} {language:11} {rows[-1][3]:12} {rows[-1][4]:6.1f} s", flush=True)
            load = os.getloadavg()[0]
        return rows, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faces", nargs="+", choices=FACES, default=list(FACES))
    parser.add_argument("--exercises", nargs="+", help="exercise ids (default: every lesson's)")
    parser.add_argument("--languages", nargs="+", default=["python", "javascript", "typescript"],
                        choices=["python", "javascript", "typescript"])
    parser.add_argument("--burners-per-core", type=int, default=2)
    parser.add_argument("--postgres", help="a PostgreSQL cluster's URL for the worker's class (default: a throwaway one)")
    args = parser.parse_args(argv)
    runs = planned_runs(args.exercises, args.languages)
    started = time.monotonic()
    rows: list[tuple] = []
    load = 0.0
    with tempfile.TemporaryDirectory(prefix="chainrule-starved-") as folder:
        for name in args.faces:
            face_rows, load = face(name, runs, Path(folder) / name, args.postgres, args.burners_per_core)
            rows += face_rows
    failed = [row for row in rows if row[3] != "passed"]
    for row in failed:
        print(f"NOT PASSED: {row[0]} {row[1]} {row[2]}: {row[3]}: {row[5]}")
    slowest = max((row[4] for row in rows), default=0.0)
    print(f"{len(rows) - len(failed)} of {len(rows)} runs passed ({', '.join(args.faces)}; {len(runs)} per face) in "
          f"{time.monotonic() - started:.0f} s; slowest run {slowest:.1f} s; load average at the end {load:.1f}")
    return 0 if rows and not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
