"""The CPU a `chainrule` process spends before it does its work: importing and building its parser.

    .venv/bin/python benchmarks/bench_startup.py [--runs N]

CPU time (user + system, from the kernel's accounting of the finished child, so another job's load does
not count) of fresh processes, median of N runs, in milliseconds:

* `import chainrule` alone;
* `chainrule COMMAND --help` for the commands the suite starts most, which imports what the command's
  module needs and builds its parser, and `chainrule --help`, which builds every command's parser;
* `chainrule check` of a passing file (a reference solution), the sandbox's processes included;
* `chainrule serve` and `chainrule lesson` really started: the process's CPU when it first answers a
  request (read from /proc, Linux only), as a test that starts one waits for; and its CPU to its exit once
  stopped there with SIGINT (from the kernel's accounting of the finished child), what a test that starts a
  server and stops it pays in all.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HELP_COMMANDS = ("check", "worker", "serve", "lesson", "class", "progress", "graph", "")  # "": chainrule --help
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def child_cpu(command: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> float:
    """Milliseconds of CPU the finished child spent (and the children it waited for)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with {process.returncode}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_at_first_answer(command: list[str], port: int, env: dict[str, str]) -> tuple[float, float]:
    """Milliseconds of CPU the server had spent when it first answered GET / on its port, and when it had ended
    after a SIGINT sent then."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 120  # only to catch a hang
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"{' '.join(command)} exited with {process.returncode}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
                break
            except urllib.error.HTTPError:
                break  # an answer all the same (the token gate says 401)
            except OSError:
                time.sleep(0.02)
        else:
            raise SystemExit(f"{' '.join(command)} did not answer")
        with open(f"/proc/{process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        answered = (int(fields[11]) + int(fields[12])) * 1000 / TICK  # utime, stime
        process.send_signal(signal.SIGINT)  # as Ctrl-C, or a test's stop, ends it
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        return answered, (usage.ru_utime + usage.ru_stime) * 1000
    finally:
        if process.returncode is None:
            process.terminate()
            process.wait(timeout=60)


def median_of(runs: int, measure) -> float:
    return statistics.median(measure() for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    python = [sys.executable]
    print(f"{'what':<34} {'CPU ms':>8}")
    print(f"{'import chainrule':<34} {median_of(args.runs, lambda: child_cpu(python + ['-c', 'import chainrule'])):8.0f}")
    for command in HELP_COMMANDS:
        spent = median_of(args.runs, lambda: child_cpu(python + ["-m", "chainrule", *filter(None, [command]), "--help"]))
        print(f"{' '.join(filter(None, ['chainrule', command, '--help'])):<34} {spent:8.0f}")
    with tempfile.TemporaryDirectory() as folder:
        from chainrule.grading import reference_source
        from chainrule.lessons import register_exercises

        register_exercises()
        with open(os.path.join(folder, "slopes.py"), "w", encoding="utf-8") as passing:
            passing.write(reference_source("slopes-by-rule", "python"))
        spent = median_of(args.runs, lambda: child_cpu(python + ["-m", "chainrule", "check", "slopes.py"], cwd=folder))
        print(f"{'chainrule check, a passing file':<34} {spent:8.0f}")
    if not sys.platform.startswith("linux"):
        return
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, CHAINRULE_DATA_DIR=os.path.join(folder, "data"))
        env.pop("CHAINRULE_DATABASE", None)
        subprocess.run(python + ["-m", "chainrule", "class", "create", "Bench"], env=env, check=True,
                       stdout=subprocess.DEVNULL)

        def serve() -> float:
            port = free_port()
            return cpu_at_first_answer(python + ["-m", "chainrule", "serve", "--workers", "1", "--port", str(port)],
                                       port, env)

        def lesson() -> float:
            port = free_port()
            return cpu_at_first_answer(python + ["-m", "chainrule", "lesson", "--no-browser", "--port", str(port),
                                                 "--data-dir", os.path.join(folder, "lesson")], port, env)

        for name, start in (("serve", serve), ("lesson", lesson)):
            runs = [start() for _ in range(args.runs)]
            print(f"{f'chainrule {name}, first answer':<34} {statistics.median(at for at, _ in runs):8.0f}")
            print(f"{f'chainrule {name}, to its exit':<34} {statistics.median(end for _, end in runs):8.0f}")


if __name__ == "__main__":
    main()
