"""`chainrule lesson` as a process: started (in a session of its own, through reaper.spawn), its printed URL
read, stopped. Used by test_web_launch, test_server_limits, test_wheel, test_grading_burst and
test_typescript_check."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time

from reaper import spawn

URL_LINE = re.compile(
    r"(?P<url>http://(?P<host>127\.0\.0\.1|\[::1\]|[a-z0-9.-]+):(?P<port>\d+)(?P<path>/[^?\s]*)\?token=(?P<token>[A-Za-z0-9_-]{20,}))"
)


def start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    return spawn(
        [sys.executable, "-m", "chainrule", "lesson", "--no-browser", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        env={**os.environ, **(env or {})},
    )


def wait_for_url(process: subprocess.Popen, seconds: float = 60) -> re.Match[str]:
    """Read stdout lines (in a thread: a buffered pipe and select() do not mix) until the URL appears."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + seconds
    seen = ""
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            break
        seen += line
        match = URL_LINE.search(line)
        if match:
            return match
    raise AssertionError(f"no URL printed; stdout {seen!r}")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
