"""Time until the lesson page is interactive, on localhost, in a real Chromium.

    .venv/bin/python benchmarks/bench_page.py [--runs N]

Starts the real server (`chainrule lesson --no-browser`, temporary data dir), then loads the first lesson's
page (/lessons/backprop) N times and reads two marks the page sets itself:
  ready     content of all eight sections and the section 03 animation are rendered (main[data-ready]);
  complete  every interactive part too: the predict graph, the quiz and the three CodeMirror editors.
"cold" loads use a fresh browser context each time (empty cache; the server's sign-in link is followed by the
context's own HTTP client, which keeps the cookie and loads no page); "warm" loads reload the same page.
The path page (small: one API call) is measured alongside as the floor of this setup.
Times are milliseconds from the start of navigation (performance.mark startTime); medians are reported.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TARGET_MS = 1000.0


def start_server(data_dir: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "chainrule", "lesson", "--no-browser", "--data-dir", data_dir],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            match = re.search(r"http://\S+token=\S+", line)
            if match and not found:
                found.append(match.group(0))
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    if not ready.wait(60) or not found:
        os.killpg(process.pid, signal.SIGTERM)
        raise SystemExit("the lesson server did not print its address")
    return process, found[0]


def mark(page, name: str) -> float:
    page.wait_for_function(f"() => performance.getEntriesByName('{name}').length > 0", timeout=30_000)
    return float(page.evaluate(f"() => performance.getEntriesByName('{name}')[0].startTime"))


LESSON = "/lessons/backprop"


def open_lesson(browser, url: str, origin: str):
    """A fresh context signed in by the server's link (its cookie kept, no page loaded, so the cache stays empty),
    and a page that starts loading the lesson."""
    context = browser.new_context()
    context.request.get(url, max_redirects=0)
    page = context.new_page()
    page.goto(origin + LESSON)
    return context, page


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="loads per measurement (default 15)")
    parser.add_argument("--browser", default="chromium",
                        help="the Chromium to run, a command on PATH (default chromium, the browser learners have; "
                             "chromium-headless-shell costs a test a third of the CPU)")
    args = parser.parse_args()
    chromium = shutil.which(args.browser)
    if chromium is None:
        raise SystemExit(f"no `{args.browser}` on PATH")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as data_dir:
        process, url = start_server(data_dir)
        origin = re.match(r"http://[^/]+", url).group(0)
        results: dict[str, list[float]] = {k: [] for k in
                                           ("lesson ready (cold)", "lesson complete (cold)",
                                            "lesson ready (warm)", "lesson complete (warm)", "path page ready (warm)")}
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                # Warm-up load (server imports, first grader probe) not counted.
                context, page = open_lesson(browser, url, origin)
                mark(page, "chainrule-complete")
                context.close()
                for _ in range(args.runs):
                    context, page = open_lesson(browser, url, origin)  # a cold load
                    results["lesson ready (cold)"].append(mark(page, "chainrule-ready"))
                    results["lesson complete (cold)"].append(mark(page, "chainrule-complete"))
                    context.close()
                context, page = open_lesson(browser, url, origin)
                mark(page, "chainrule-complete")
                for _ in range(args.runs):
                    page.reload()
                    results["lesson ready (warm)"].append(mark(page, "chainrule-ready"))
                    results["lesson complete (warm)"].append(mark(page, "chainrule-complete"))
                for _ in range(args.runs):
                    page.goto(origin + "/")
                    results["path page ready (warm)"].append(mark(page, "chainrule-ready"))
                browser.close()
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)

    floor = statistics.median(results["path page ready (warm)"])
    print(f"Lesson page time to interactive on localhost, Chromium headless, {args.runs} loads each (median ms)")
    print(f"{'measurement':28} {'median':>8} {'min':>8} {'max':>8} {'vs path page':>13} {'vs 1 s target':>14}")
    for name, times in results.items():
        median = statistics.median(times)
        print(f"{name:28} {median:8.0f} {min(times):8.0f} {max(times):8.0f} {median / floor:12.1f}x {median / TARGET_MS:13.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
