"""Run a learner's Python file against the exercise cases, inside the sandbox; print raw results.

Usage (by the grader only):  python -I -S -B harness.py SPEC.json

SPEC.json: {"nonce", "submission": path, "call": the function's name, "cases": [{"args": [...]}],
            "output_limit": int}
Every event is one line on stdout, "<marker> <json>", where marker = "@@chainrule:<nonce>@@".
Events: {"event": "loaded"}, {"event": "load-error", "error": {...}},
        {"event": "output", "index", "text"} (a test's first 500 characters of output, as printed),
        {"event": "case", "index", "actual": [raw floats] | null, "error": {...} | null, "output": str, "truncated": bool},
        {"event": "output-limit"}, {"event": "done"}.
Numbers are reported raw (never rounded here): the grader rounds in one place. Non-finite floats
travel as the strings "NaN", "Infinity", "-Infinity"; a non-number as {"type": name, "repr": text}.
"""

import io
import json
import math
import os
import sys
import traceback

OUTPUT_SHOWN = 500  # characters of a test's own output kept for the report


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    marker = "@@chainrule:" + spec["nonce"] + "@@ "
    real_stdout = sys.stdout
    main_pid = os.getpid()
    submission = spec["submission"]
    output_limit = int(spec.get("output_limit", 1_000_000))

    def emit(event):
        if os.getpid() != main_pid:  # a process the learner forked: it must not report anything
            os._exit(0)
        real_stdout.write("\n" + marker + json.dumps(event, allow_nan=False) + "\n")
        real_stdout.flush()

    class CappedCapture(io.TextIOBase):
        """Keeps the first characters a test prints; past the output limit the run stops."""

        def __init__(self, index=None):
            self.index = index  # the test this output belongs to (None while loading)
            self.parts = []
            self.kept = 0
            self.total = 0

        def writable(self):
            return True

        def write(self, text):
            text = str(text)
            self.total += len(text)
            if self.kept <= OUTPUT_SHOWN:
                self.parts.append(text[: OUTPUT_SHOWN + 1 - self.kept])
                self.kept += len(self.parts[-1])
                if self.index is not None and self.parts[-1]:
                    # Streamed as it comes, so a test that then hangs still shows what it printed.
                    emit({"event": "output", "index": self.index, "text": self.parts[-1]})
            if self.total > output_limit:
                emit({"event": "output-limit"})
                os._exit(3)
            return len(text)

        def text(self):
            return "".join(self.parts)

    def error_info(exc):
        """The exception, and the deepest line of the learner's own file in its traceback."""
        frames = [fr for fr in traceback.extract_tb(exc.__traceback__) if fr.filename == submission]
        if isinstance(exc, SyntaxError) and exc.filename == submission:
            line, text = exc.lineno, (exc.text or "").strip()
        elif frames:
            line, text = frames[-1].lineno, (frames[-1].line or "").strip()
        else:
            line, text = None, None
        info = {"type": type(exc).__name__, "message": str(exc)[:1000], "line": line, "text": text}
        if isinstance(exc, OSError):
            info["errno"] = exc.errno
        return info

    def encode(x):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return {"type": type(x).__name__, "repr": repr(x)[:80]}
        x = float(x)
        if math.isfinite(x):
            return x
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")

    capture = CappedCapture()
    sys.stdout = sys.stderr = capture
    namespace = {"__name__": "submission", "__file__": submission}
    try:
        with open(submission, encoding="utf-8-sig") as f:  # an editor's byte-order mark is fine
            source = f.read()
        exec(compile(source, submission, "exec"), namespace)
        function = namespace.get(spec["call"])
        if not callable(function):
            raise NameError(f"no function named {spec['call']} was found in your file")
    except BaseException as exc:  # the learner's file failed to load: report it, never crash
        if isinstance(exc, SystemExit):
            exc = RuntimeError(f"your file called exit({exc.code!r}) while loading")
        emit({"event": "load-error", "error": error_info(exc), "output": capture.text()})
        emit({"event": "done"})
        os._exit(0)
    emit({"event": "loaded", "output": capture.text()})

    for index, case in enumerate(spec["cases"]):
        capture = CappedCapture(index)
        sys.stdout = sys.stderr = capture
        args = json.loads(json.dumps(case["args"]))  # fresh lists: a case cannot spoil the next
        grad = args[-1]
        actual, error = None, None
        try:
            returned = function(*args)
            if returned is not None and not isinstance(returned, (list, tuple)):
                raise TypeError(
                    f"{spec['call']} returned {type(returned).__name__} {returned!r:.40}; it must return a list of numbers"
                )
            actual = [encode(x) for x in (grad if returned is None else returned)]
        except BaseException as exc:
            if isinstance(exc, SystemExit):
                exc = RuntimeError(f"your code called exit({exc.code!r})")
            error = error_info(exc)
        emit({"event": "case", "index": index, "actual": actual, "error": error,
              "output": capture.text()[:OUTPUT_SHOWN], "truncated": capture.total > OUTPUT_SHOWN})
    emit({"event": "done"})
    os._exit(0)  # no atexit handlers, no threads the learner left running


main()
