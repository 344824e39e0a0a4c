"""grade() before and after a change, interleaved: did the change make grading slower?

    .venv/bin/python benchmarks/bench_grading_ab.py [--base main] [--rounds 30] [--ballast-mb 0]

Copies src/ as it is at a git revision (default: main) into a temporary folder and starts two grader
processes, one on that code and one on the working tree's, each warmed up by one grading per language.
Then it asks them in turn (alternating which goes first) to grade the reference solution of
`local-gradients` in each language, and reports per language the median wall time and the median CPU
time of a grading (the grader's own and its children's, `getrusage`: the sandbox, the program, the
harness), and their ratios after/before. Both arms see the same machine at the same moments, so a busy
machine weighs on both alike; CPU time weighs it least. --ballast-mb makes each grader process that many
MB bigger first (touched memory), as a server that holds more is: starting a process costs more from a
bigger one when the start copies its page tables (fork), not when it does not (vfork).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("python", "javascript", "typescript")
EXERCISE = "local-gradients"

GRADER = """
import json, resource, sys, time
ballast = bytearray(int(sys.argv[1]) * 2**20)
for at in range(0, len(ballast), 4096):
    ballast[at] = 1
try:
    from chainrule.lessons import register_exercises
except ImportError:  # code from before registration was a call: importing chainrule.lessons registered
    import chainrule.lessons
else:
    register_exercises()
from chainrule.grading import grade, reference_source

sources = {language: reference_source(sys.argv[2], language) for language in ("python", "javascript", "typescript")}
for language, source in sources.items():
    grade(sys.argv[2], language, source)
print("ready", flush=True)


def cpu():
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


for line in sys.stdin:
    language = line.strip()
    wall, used = time.perf_counter(), cpu()
    result = grade(sys.argv[2], language, sources[language])
    wall, used = time.perf_counter() - wall, cpu() - used
    print(json.dumps({"wall": wall * 1000, "cpu": used * 1000, "verdict": result["verdict"]}), flush=True)
"""


def source_at(revision: str, folder: Path) -> Path:
    """src/ as it is at `revision`, in `folder`."""
    archive = folder / "src.tar"
    subprocess.run(["git", "archive", "--output", str(archive), revision, "src"], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return folder / "src"


def start_grader(src: Path, ballast_mb: int) -> subprocess.Popen:
    grader = subprocess.Popen([sys.executable, "-c", GRADER, str(ballast_mb), EXERCISE], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(src)))
    if grader.stdout.readline().strip() != "ready":
        raise SystemExit(f"the grader on {src} did not start")
    return grader


def graded(grader: subprocess.Popen, language: str) -> dict:
    grader.stdin.write(language + "\n")
    grader.stdin.flush()
    row = json.loads(grader.stdout.readline())
    if row["verdict"] != "passed":
        raise SystemExit(f"{language}: the reference did not pass ({row['verdict']})")
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="the git revision to compare with (default: main)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--ballast-mb", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="chainrule-ab-") as folder:
        arms = {"before": start_grader(source_at(args.base, Path(folder)), args.ballast_mb),
                "after": start_grader(ROOT / "src", args.ballast_mb)}
        rows: dict[tuple[str, str], list[dict]] = {(arm, language): [] for arm in arms for language in LANGUAGES}
        load = os.getloadavg()[0]
        for round_number in range(args.rounds):
            order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
            for language in LANGUAGES:
                for arm in order:
                    rows[(arm, language)].append(graded(arms[arm], language))
        for grader in arms.values():
            grader.stdin.close()
            grader.wait()
    print(f"grade() of {EXERCISE}: {args.base} (before) against the working tree (after), {args.rounds} interleaved "
          f"rounds, grader {args.ballast_mb} MB bigger; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} cores")
    print(f"{'language':<11} {'wall before':>12} {'wall after':>11} {'ratio':>6} {'CPU before':>11} {'CPU after':>10} "
          f"{'ratio':>6}")
    for language in LANGUAGES:
        wall = [statistics.median(row["wall"] for row in rows[(arm, language)]) for arm in arms]
        cpu = [statistics.median(row["cpu"] for row in rows[(arm, language)]) for arm in arms]
        print(f"{language:<11} {wall[0]:>9.1f} ms {wall[1]:>8.1f} ms {wall[1] / wall[0]:>6.2f} "
              f"{cpu[0]:>8.1f} ms {cpu[1]:>7.1f} ms {cpu[1] / cpu[0]:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
