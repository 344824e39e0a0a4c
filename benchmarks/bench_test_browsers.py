"""CPU time of a fresh page in the two Chromium builds the tests could drive: the full `chromium` and its
headless shell (Debian's chromium-headless-shell), side by side.

    .venv/bin/python benchmarks/bench_test_browsers.py [--pages N] [--rounds R]

Starts the real server (`chainrule lesson --no-browser`, temporary data dir). Each round launches each browser
in turn (alternated, so a change in the machine's load falls on both), opens N fresh contexts one after the
other, each signing in and loading the backpropagation lesson until it is complete, as a browser test does,
and reads the CPU time of Playwright's driver and every process under it (the browser and its renderers,
living or ended: /proc's own and waited-for children's times) from before the launch to after the close. A launch with no page is measured
too, and subtracted: what is left is the pages' cost. Medians over the rounds, per page.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from bench_page import CHROMIUM_ARGS, start_server

TICKS = os.sysconf("SC_CLK_TCK")
BUILDS = ("chromium", "chromium-headless-shell")


def _stat(pid: str) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def tree_cpu_seconds(root: int) -> float:
    """CPU time of `root` and every process under it: each living one's own time and that of the children it
    waited for (an ended browser's whole tree is in the times of the process that waited for it)."""
    parents, times = {}, {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        if (fields := _stat(entry)) is not None:
            parents[int(entry)] = int(fields[1])
            times[int(entry)] = sum(int(x) for x in fields[11:15]) / TICKS  # utime, stime, cutime, cstime
    inside, grown = {root}, True
    while grown:  # a child's id may be smaller than its parent's: add children until none is left out
        before = len(inside)
        inside |= {pid for pid, parent in parents.items() if parent in inside}
        grown = len(inside) > before
    return sum(times.get(pid, 0.0) for pid in inside)


def driver_pid() -> int:
    """Playwright's driver: the child of this process that runs node (it launches and waits for each browser)."""
    for entry in filter(str.isdigit, os.listdir("/proc")):
        fields = _stat(entry)
        if fields is not None and int(fields[1]) == os.getpid() and b"node" in Path(f"/proc/{entry}/cmdline").read_bytes():
            return int(entry)
    raise RuntimeError("Playwright's driver process was not found")


def one_launch(playwright, executable: str, url: str, origin: str, pages: int) -> float:
    """The CPU time a launch of `executable` with `pages` fresh pages (0: the launch alone) costs Playwright's
    driver and everything under it, from before the launch to after the browser has closed."""
    driver = driver_pid()
    before = tree_cpu_seconds(driver)
    browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    try:
        for _ in range(pages):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(url, wait_until="commit")
            page.goto(f"{origin}/lessons/backprop", wait_until="commit")
            page.wait_for_selector("main[data-complete='true']", timeout=60_000)
            context.close()
    finally:
        browser.close()
    return tree_cpu_seconds(driver) - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10, help="fresh pages per launch (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="launches of each browser (default 3)")
    args = parser.parse_args()
    executables = {name: shutil.which(name) for name in BUILDS}
    missing = [name for name, path in executables.items() if path is None]
    if missing:
        raise SystemExit(f"not on PATH: {', '.join(missing)} (apt-get install {' '.join(missing)})")
    from playwright.sync_api import sync_playwright

    process, url = start_server(tempfile.mkdtemp(prefix="chainrule-bench-"))
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    per_page: dict[str, list[float]] = {name: [] for name in BUILDS}
    try:
        with sync_playwright() as playwright:
            for _ in range(args.rounds):
                for name in BUILDS:
                    idle = one_launch(playwright, executables[name], url, origin, 0)
                    busy = one_launch(playwright, executables[name], url, origin, args.pages)
                    per_page[name].append((busy - idle) / args.pages)
    finally:
        process.terminate()
        process.wait(timeout=10)
    print(f"CPU time per fresh page (sign-in and the backprop lesson, complete), {args.pages} pages a launch, "
          f"medians of {args.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    for name in BUILDS:
        values = ", ".join(f"{v:.2f}" for v in per_page[name])
        print(f"  {name:26} {statistics.median(per_page[name]):.2f} s   ({values})")
    ratio = statistics.median(per_page[BUILDS[1]]) / statistics.median(per_page[BUILDS[0]])
    print(f"  headless shell / chromium: {ratio:.2f}")


if __name__ == "__main__":
    main()
