"""Where a command's CPU time goes, by kind of process: Chromium's renderers, Playwright's driver, pytest, the
chainrule servers, PostgreSQL, the grader's sandboxed runs, and the rest.

    .venv/bin/python benchmarks/cpu_by_process.py [--every SECONDS] -- COMMAND...

For instance `-- .venv/bin/python -m pytest -p no:cacheprovider -n 0 tests/browser/test_lesson_page.py`. Runs
COMMAND in a cgroup of its own in the cpuacct hierarchy (cgroup v1; as root), whose counter gives the total: every
process the command started, alive or ended, the ones that left its session included. While it runs, every
process in the group and in the groups under it (pytest's workers make their own) is read every `--every`
seconds (0.2 by default) from /proc; a process's last reading is its share. What a process spent after its
last reading is in the total but in no row, so the table also says how much of the total its rows hold.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
# (what a process's command line holds, its kind): the first that matches names it.
KINDS = [
    (b"--type=renderer", "Chromium: renderers"), (b"--type=gpu-process", "Chromium: GPU process"),
    (b"--type=utility", "Chromium: utility processes"), (b"--type=zygote", "Chromium: zygote"),
    (b"chrom", "Chromium: browser process"), (b"playwright", "Playwright's driver (node)"),
    (b"bwrap", "the grader's sandboxed runs"), (b"pytest", "pytest"),
    (b"exec(eval(sys.stdin.readline()))", "pytest (an xdist worker)"),
    (b"chainrule worker", "chainrule worker"), (b"chainrule serve", "chainrule serve"),
    (b"chainrule lesson", "chainrule lesson"), (b"-m chainrule", "other chainrule commands"),
    (b"postgres", "PostgreSQL"), (b"node", "node (graded JavaScript and TypeScript)"),
]


def cpuacct_root() -> Path:
    """Where the cpuacct hierarchy is mounted, and this process's group in it."""
    own = next(line.split(":", 2)[2] for line in Path("/proc/self/cgroup").read_text().splitlines()
               if "cpuacct" in line.split(":", 2)[1].split(","))
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mount, _, after = line.partition(" - ")
        fields = after.split()
        if fields[0] == "cgroup" and "cpuacct" in fields[2].split(","):
            return Path(mount.split()[4]) / own.lstrip("/")
    raise SystemExit("no cgroup v1 cpuacct hierarchy is mounted: this script needs one (and root)")


def kind_of(pid: str) -> str:
    words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    line = b" ".join(words)
    return next((kind for mark, kind in KINDS if mark in line),
                words[0].rsplit(b"/", 1)[-1].decode(errors="replace") or "?")


def read(group: Path, seen: dict[str, tuple[str, float]]) -> None:
    for folder, _, _ in os.walk(group):
        for pid in (Path(folder) / "cgroup.procs").read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                kind = seen[pid][0] if pid in seen else kind_of(pid)
            except OSError:  # it ended between the listing and the reading
                continue
            seen[pid] = (kind, (int(fields[11]) + int(fields[12])) / TICKS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=0.2, help="seconds between readings (default 0.2)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    group = cpuacct_root() / f"cpu-by-process-{os.getpid()}"
    group.mkdir()
    try:
        started = subprocess.Popen(["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh", *command])
        seen: dict[str, tuple[str, float]] = {}
        while started.poll() is None:
            read(group, seen)
            time.sleep(args.every)
        total = int((group / "cpuacct.usage").read_text()) / 1e9
    finally:
        try:
            group.rmdir()
        except OSError:
            pass  # something the command started is still running in it
    shares = Counter[str]()
    for kind, seconds in seen.values():
        shares[kind] += seconds
    print(f"{total:8.1f} s CPU in all (the group's counter); the rows below hold {sum(shares.values()):.1f} s")
    for kind, seconds in shares.most_common():
        print(f"{seconds:8.1f} s  {kind}")
    return started.returncode


if __name__ == "__main__":
    sys.exit(main())
