"""Median time to grade one submission, sandbox included, per language; next to the bare run it wraps.

    .venv/bin/python benchmarks/bench_grading.py [--runs 21] [--exercise local-gradients]

For each language it times `chainrule.grading.grade()` on the reference solution (every layer the
machine offers: bubblewrap, cgroup, rlimits), and, as the point of comparison, the same harness
run directly with subprocess and no sandbox. Targets: Python <= 150 ms, JavaScript and TypeScript
<= 300 ms. The isolation level of the run is printed with the numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from chainrule.grading import (
    LANGUAGES,
    exercise_cases,
    get_exercise,
    grade,
    isolation_report,
    reference_source,
    typescript_snapshot,
)
from chainrule.grading.grader import NODE_FLAGS, RUNTIME_DIR, TRANSPILER, TYPE_CHECKER, _node
from chainrule.lessons import register_exercises

TARGET_MS = {"python": 150.0, "javascript": 300.0, "typescript": 300.0}


def time_grade(exercise_id: str, language: str, runs: int) -> list[float]:
    source = reference_source(exercise_id, language)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = grade(exercise_id, language, source)
        times.append((time.perf_counter() - started) * 1000)
        if result["verdict"] != "passed":
            raise SystemExit(f"{language}: the reference did not pass: {result['message']}")
    return times


def time_bare(exercise_id: str, language: str, runs: int) -> list[float]:
    """The same harness and cases, run straight under the interpreter: no sandbox at all."""
    exercise = get_exercise(exercise_id)
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        submission = Path(scratch) / f"solution.{LANGUAGES[language]}"
        submission.write_text(reference_source(exercise_id, language))
        spec = Path(scratch) / "spec.json"
        spec.write_text(json.dumps({
            "nonce": uuid.uuid4().hex, "submission": str(submission), "language": language,
            "call": exercise.function_name(language), "cases": [{"args": c.args} for c in exercise_cases(exercise_id)],
            "output_limit": 1_000_000, "transpiler": str(TRANSPILER),
            "typechecker": str(TYPE_CHECKER) if language == "typescript" else None,
        }))
        if language == "python":
            argv = [sys.executable, "-I", "-S", "-B", str(RUNTIME_DIR / "harness.py"), str(spec)]
        else:
            flags = list(NODE_FLAGS)
            snapshot = typescript_snapshot.snapshot_for(_node()[0], flags) if language == "typescript" else None
            flags += ["--snapshot-blob", str(snapshot)] if snapshot else []  # as grade() starts it
            argv = [_node()[0], *flags, str(RUNTIME_DIR / "harness.js"), str(spec)]
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=True)
            times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--exercise", default="local-gradients")
    args = parser.parse_args()
    register_exercises()
    report = isolation_report()
    print(f"exercise {args.exercise}, {args.runs} runs each, isolation: {report['level']} "
          f"(layers: {', '.join(k for k, v in report['layers'].items() if v is True)})")
    print(f"{'language':<11} {'grade() median':>15} {'bare run median':>16} {'ratio':>6} {'target':>8}  ok")
    failed = False
    for language in LANGUAGES:
        if language != "python" and _node()[0] is None:
            print(f"{language:<11} skipped: {_node()[1]}")
            continue
        grade(args.exercise, language, reference_source(args.exercise, language))  # warm the caches
        graded = statistics.median(time_grade(args.exercise, language, args.runs))
        bare = statistics.median(time_bare(args.exercise, language, args.runs))
        ok = graded <= TARGET_MS[language]
        failed |= not ok
        print(f"{language:<11} {graded:>12.1f} ms {bare:>13.1f} ms {graded / bare:>6.2f} {TARGET_MS[language]:>5.0f} ms  "
              f"{'yes' if ok else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
