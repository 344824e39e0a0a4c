"""Run a learner's Python file against the exercise cases, inside the sandbox; print raw results.

Usage (by the grader only):  python -I -S -B harness.py SPEC.json

SPEC.json: {"nonce", "submission": path, "call": the function's name, "cases": [{"args": [...]}],
            "output_limit": int, "driver": path or null, "entry": name or null}
With a driver (a case kind's own file, such as engine_driver.py), the learner's file must still define `call`
(their class or function), and the driver is run after it in the same namespace: each case calls the driver's
`entry`, which builds graphs or networks with the learner's own classes.
Every event is one line on stdout, "<marker> <json>", where marker = "@@chainrule:<nonce>@@".
Events: {"event": "loaded"}, {"event": "load-error", "error": {...}},
        {"event": "output", "index", "text"} (a test's first 500 characters of output, as printed),
        {"event": "case", "index", "actual": [raw floats] | null, "error": {...} | null, "output": str, "truncated": bool},
        {"event": "output-limit"}, {"event": "done"}.
Numbers are reported raw (never rounded here): the grader rounds in one place. Non-finite floats
travel as the strings "NaN", "Infinity", "-Infinity"; a non-number as {"type": name, "repr": text}.
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
import traceback

TYPE_CHECKING = False  # run with -I -S: the standard library only, and no `typing` at run time
if TYPE_CHECKING:
    from collections.abc import Callable

OUTPUT_SHOWN = 500  # characters of a test's own output kept for the report


class Reporter:
    """Prints the run's events on the real stdout, each on its own marked line."""

    def __init__(self, nonce: str, submission: str, output_limit: int) -> None:
        self.marker = "@@chainrule:" + nonce + "@@ "
        self.real_stdout = sys.stdout
        self.main_pid = os.getpid()
        self.submission = submission
        self.output_limit = output_limit

    def emit(self, event: dict[str, object]) -> None:
        if os.getpid() != self.main_pid:  # a process the learner forked: it must not report anything
            os._exit(0)
        self.real_stdout.write("\n" + self.marker + json.dumps(event, allow_nan=False) + "\n")
        self.real_stdout.flush()

    def error_info(self, exc: BaseException) -> dict[str, object]:
        """The exception, and the deepest line of the learner's own file in its traceback."""
        frames = [fr for fr in traceback.extract_tb(exc.__traceback__) if fr.filename == self.submission]
        line: int | None
        text: str | None
        if isinstance(exc, SyntaxError) and exc.filename == self.submission:
            line, text = exc.lineno, (exc.text or "").strip()
        elif frames:
            line, text = frames[-1].lineno, (frames[-1].line or "").strip()
        else:
            line, text = None, None
        info: dict[str, object] = {"type": type(exc).__name__, "message": str(exc)[:1000], "line": line, "text": text}
        if isinstance(exc, OSError):
            info["errno"] = exc.errno
        return info


class CappedCapture(io.TextIOBase):
    """Keeps the first characters a test prints; past the output limit the run stops."""

    def __init__(self, reporter: Reporter, index: int | None = None) -> None:
        self.reporter = reporter
        self.index = index  # the test this output belongs to (None while loading)
        self.parts: list[str] = []
        self.kept = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def write(self, text: object) -> int:
        text = str(text)
        self.total += len(text)
        if self.kept <= OUTPUT_SHOWN:
            self.parts.append(text[: OUTPUT_SHOWN + 1 - self.kept])
            self.kept += len(self.parts[-1])
            if self.index is not None and self.parts[-1]:
                # Streamed as it comes, so a test that then hangs still shows what it printed.
                self.reporter.emit({"event": "output", "index": self.index, "text": self.parts[-1]})
        if self.total > self.reporter.output_limit:
            self.reporter.emit({"event": "output-limit"})
            os._exit(3)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


def encode(x: object) -> object:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return {"type": type(x).__name__, "repr": repr(x)[:80]}
    number = float(x)
    if math.isfinite(number):
        return number
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


def capture_output(reporter: Reporter, index: int | None = None) -> CappedCapture:
    capture = CappedCapture(reporter, index)
    sys.stdout = sys.stderr = capture
    return capture


def load(reporter: Reporter, name: str, driver: str | None = None, entry: str | None = None) -> Callable[..., object]:
    """The learner's function `name` (or, with a driver, the driver's `entry`, run beside the learner's code);
    a file that fails to load is reported and the run ends."""
    capture = capture_output(reporter)
    namespace = {"__name__": "submission", "__file__": reporter.submission}
    try:
        with open(reporter.submission, encoding="utf-8-sig") as f:  # an editor's byte-order mark is fine
            source = f.read()
        exec(compile(source, reporter.submission, "exec"), namespace)
        function = namespace.get(name)
        if not callable(function):
            raise NameError(f"no function named {name} was found in your file")
        if driver and entry:
            with open(driver, encoding="utf-8") as f:
                exec(compile(f.read(), driver, "exec"), namespace)
            function = namespace[entry]
    except BaseException as exc:  # the learner's file failed to load: report it, never crash
        if isinstance(exc, SystemExit):
            exc = RuntimeError(f"your file called exit({exc.code!r}) while loading")
        reporter.emit({"event": "load-error", "error": reporter.error_info(exc), "output": capture.text()})
        reporter.emit({"event": "done"})
        os._exit(0)
    reporter.emit({"event": "loaded", "output": capture.text()})
    return function


def run_case(reporter: Reporter, function: Callable[..., object], name: str, index: int, given: list[object]) -> None:
    capture = capture_output(reporter, index)
    args = json.loads(json.dumps(given))  # fresh lists: a case cannot spoil the next
    grad = args[-1]
    actual, error = None, None
    try:
        returned = function(*args)
        if returned is not None and not isinstance(returned, (list, tuple)):
            raise TypeError(
                f"{name} returned {type(returned).__name__} {returned!r:.40}; it must return a list of numbers"
            )
        actual = [encode(x) for x in (grad if returned is None else returned)]
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            exc = RuntimeError(f"your code called exit({exc.code!r})")
        error = reporter.error_info(exc)
    reporter.emit({"event": "case", "index": index, "actual": actual, "error": error,
                   "output": capture.text()[:OUTPUT_SHOWN], "truncated": capture.total > OUTPUT_SHOWN})


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    reporter = Reporter(spec["nonce"], spec["submission"], int(spec.get("output_limit", 1_000_000)))
    function = load(reporter, spec["call"], spec.get("driver"), spec.get("entry"))
    for index, case in enumerate(spec["cases"]):
        run_case(reporter, function, spec["call"], index, case["args"])
    reporter.emit({"event": "done"})
    os._exit(0)  # no atexit handlers, no threads the learner left running


main()
