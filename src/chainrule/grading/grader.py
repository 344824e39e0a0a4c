"""grade(): run a learner's file in the sandbox against the exercise's cases and judge the numbers.

Each language reports raw floats; rounding happens here only, once, with Python's round(x, 9), so
the graded digits are the same whatever language produced them. A test passes when every number,
rounded to 9 decimal places, equals the engine's number rounded the same way.

The result follows Exercism's test-runner interface v3 (version, status, message, tests with name,
status, message, output, test_code), plus verdict, isolation, expected/actual and timing (see
docs/grading.md).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any

from chainrule.grading import sandbox, typescript_snapshot
from chainrule.grading.diagnoses import diagnose_run
from chainrule.grading.exercise_folder import LANGUAGES, Exercise, GradingCase
from chainrule.grading.harness_output import parse_events
from chainrule.grading.json_objects import Event, JsonObject, Result
from chainrule.grading.registry import normalize_language, resolve
from chainrule.grading.rounding import graded, graded_text, graded_texts
from chainrule.grading.type_errors import with_type_errors
from chainrule.number_text import count_text
from chainrule.turns import Admission

RUNTIME_DIR = Path(__file__).with_name("runtime")
VENDOR_DIR = Path(__file__).with_name("vendor")
TRANSPILER = VENDOR_DIR / "sucrase.js"
TYPE_CHECKER = VENDOR_DIR / "typescript-check.js"

MAX_SOURCE_BYTES = 200_000
OUTPUT_SHOWN = 500
NODE_MIN_MAJOR = 18

# Address-space limits: node 20 reserves a lot of virtual memory and dies below about 2 GB.
PYTHON_ADDRESS_SPACE = 1024 * sandbox.MB
NODE_ADDRESS_SPACE = 3072 * sandbox.MB
NODE_HEAP_MB = 256
NODE_FLAGS = (f"--max-old-space-size={NODE_HEAP_MB}",)
# CPU time the TypeScript compiler's check may take before the learner's code runs, added to the learner's CPU
# limit (about 0.3 s from the startup snapshot, about 1.5 s without it: docs/grading.md).
TYPE_CHECK_CPU_SECONDS = 2.0



class GradingError(Exception):
    """A grading infrastructure problem (not the learner's code): what went wrong and what to do."""


# ------------------------------------------------------------------------------------- concurrency


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # the cores this process may use
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


QUEUE_WAIT_SECONDS = 60.0
# The one gate of this process's sandboxes (chainrule.turns: slots, a waiting room, per-learner bounds and
# fair turns). grade() takes a turn here; a server takes the turn itself (gate()) and then calls grade_now().
GATE = Admission(slots=_cores(), queue=max(4, 2 * _cores()), wait_seconds=QUEUE_WAIT_SECONDS)


def gate() -> Admission:
    """The gate gradings in this process pass (configure_concurrency replaces it)."""
    return GATE


def configure_concurrency(slots: int | None = None, queue: int | None = None) -> Admission:
    """Change how many gradings may run at once and how many may wait (for servers and tests).

    Takes effect for gradings that start afterwards; returns the previous gate (to restore it).
    """
    global GATE
    previous = GATE
    GATE = Admission(slots=slots or previous.slots, queue=previous.queue if queue is None else queue,
                     wait_seconds=previous.wait_seconds)
    return previous


def restore_concurrency(previous: Admission) -> None:
    global GATE
    GATE = previous


BUSY_MESSAGE = "The grader is busy: every slot is running and the queue is full. Try again in a few seconds."


def busy_result(exercise_id: str, language: str, message: str = BUSY_MESSAGE) -> Result:
    """The answer to a run that was not graded because the grader had no turn for it (not a verdict on the code)."""
    return run_result(exercise_id, normalize_language(language), "busy", "error", message)


# A run that got a turn, but not the CPU to finish: the machine was too busy (sandbox/usage.py's rule).
SERVER_BUSY = "server-busy"
# The answers that are not a verdict on the learner's code: they are never kept as a run, so they count for
# nothing (not a try toward the model solution, not a failing run in credit, diagnoses or pass rates).
NOT_A_VERDICT = frozenset({"busy", SERVER_BUSY})


def judged_the_code(result: Result) -> bool:
    """Whether a result is a verdict on the learner's code (every reader that keeps or counts runs asks this)."""
    return result.get("verdict") not in NOT_A_VERDICT


def _server_busy_message(outcome: sandbox.RunOutcome) -> str:
    return (f"The server was too busy to run your code: in {count_text(round(outcome.duration_ms / 1000), 'second')} it got "
            f"{count_text(round(outcome.cpu_seconds, 1), 'second')} of a processor. This is not a verdict on your code and does not "
            "count as a try. Run it again in a minute.")


# ------------------------------------------------------------------------------------- runtimes


@lru_cache(maxsize=1)
def _node() -> tuple[str | None, str | None]:
    """(path of a usable node, None) or (None, why it cannot be used and how to fix it)."""
    node = shutil.which("node")
    fix = "Install Node.js 18 or newer (for example `apt install nodejs`, or from https://nodejs.org) and put `node` on PATH."
    if not node:
        return None, f"JavaScript and TypeScript are graded with Node.js, and `node` was not found on PATH. {fix}"
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        major = int(version.lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired) as error:
        return None, f"`{node} --version` failed ({error}). {fix}"
    if major < NODE_MIN_MAJOR:
        return None, f"Node.js {version} at {node} is too old. {fix}"
    return node, None


def _node_binds(node: str) -> list[str]:
    real = os.path.realpath(node)
    prefix = os.path.dirname(os.path.dirname(real))
    return [] if real.startswith("/usr/") else [prefix]


# ------------------------------------------------------------------------------------- results


def _isolation() -> JsonObject:
    return sandbox.isolation_report()


def run_result(exercise: str, language: str, verdict: str, status: str, message: str | None,
               tests: list[JsonObject] | None = None, *, started: float | None = None,
               isolation: JsonObject | None = None) -> Result:
    """The one shape of a run's result, graded or not (a run that was refused, expired or lost its worker
    has a verdict that says so, no tests, no isolation (None: it never ran) and counts nothing): Exercism's
    test-runner interface v3 plus verdict, exercise, language, isolation and (for a run that ran)
    duration_ms."""
    result = {
        "version": 3,
        "status": status,
        "message": message,
        "verdict": verdict,
        "exercise": exercise,
        "language": language,
        "isolation": isolation,
        "tests": list(tests or []),
        "hidden": None,  # {"seed", "count"} of the run's hidden cases (grade() fills it in)
    }
    if started is not None:
        result["duration_ms"] = round((time.monotonic() - started) * 1000, 3)
    return result


def _result(exercise: str, language: str, verdict: str, status: str, message: str | None,
            tests: list[JsonObject], started: float, isolation: JsonObject | None = None) -> Result:
    """A result of grade(): it always says how the code was (or would have been) isolated."""
    return run_result(exercise, language, verdict, status, message, tests, started=started,
                      isolation=isolation if isolation is not None else _isolation())


def _test_code(function: str, case: GradingCase) -> str:
    """The call a test makes: the learner's function, or (a kind with a driver) the driver's entry."""
    return f"{function}({', '.join(json.dumps(a) for a in case.args)})"


def _shown_number(x: object) -> float | str | None:
    """A returned entry as the result shows it: a number rounded, NaN/Infinity by name, anything else as
    the learner's language writes it (the harness's repr: 'a' in Python, "a" or {"a":1} in JavaScript)."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return graded(float(x))
    if isinstance(x, str) and x in ("NaN", "Infinity", "-Infinity"):
        return x
    shown = x.get("repr") if isinstance(x, dict) else None
    return shown if isinstance(shown, str) else None


def _describe(x: object) -> str:
    if isinstance(x, float):
        return repr(graded(x))
    if isinstance(x, str):
        return x
    if isinstance(x, dict):
        kind = str(x.get("type"))
        return f"{x.get('repr')} ({'an' if kind[:1] in 'aeiou' else 'a'} {kind})"
    return repr(x)


def _error_text(error: JsonObject, language: str, prefix: str) -> str:
    where = ""
    if error.get("line"):
        where = f" on line {error['line']}"
        if error.get("text"):
            where += f": {error['text']}"
    return f"{prefix} {error.get('type', 'Error')}{where}\n{error.get('type', 'Error')}: {error.get('message', '')}"


def _output_field(event: Event) -> str | None:
    text = event.get("output") or ""
    if not text:
        return None
    if event.get("truncated") or len(text) > OUTPUT_SHOWN:
        return text[:OUTPUT_SHOWN] + "\n... output truncated to 500 characters"
    return text


def _judge_case(function: str, slot: str, language: str, case: GradingCase, event: Event) -> Result:
    """One test's entry: pass when every number agrees with the engine to 9 decimal places. A failing
    entry's message lists the wrong numbers; the diagnosis adds its hint afterwards (`_add_hints`)."""
    expected = [graded(x) for x in case.expected]
    entry: dict[str, Any] = {
        "name": case.name,
        "status": "pass",
        "message": None,
        "output": _output_field(event),
        "test_code": _test_code(function, case),
        "expected": expected,
        "actual": None,
        "expected_text": graded_texts(expected),
        "actual_text": None,
    }
    if case.hidden:
        entry["hidden"] = True
    if event.get("error"):
        entry["status"] = "error"
        entry["message"] = entry["problems"] = _error_text(event["error"], language, "Your code raised")
        return entry
    raw = event.get("actual") or []
    entry["actual"] = [_shown_number(x) for x in raw]
    entry["actual_text"] = graded_texts(entry["actual"])
    names = list(case.labels)
    problems: list[str] = []
    if len(raw) != len(expected):
        problems.append(f"{'grad' if slot == 'grad' else 'the result'} has {len(raw)} numbers, expected {len(expected)}")
    for i, (got, want) in enumerate(zip(raw, expected)):
        label = names[i] if i < len(names) else f"{slot}[{i}]"
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            problems.append(f"{label} ({slot}[{i}]): expected {graded_text(want)}, got {_describe(got)}, which is not a finite number")
        elif graded(float(got)) != want:
            problems.append(f"{label} ({slot}[{i}]): expected {graded_text(want)}, got {graded_text(got)}")
    if problems:
        entry["status"] = "fail"
        entry["message"] = entry["problems"] = "\n".join(problems)
    return entry


def _add_hints(exercise: Exercise, function: str, cases: list[GradingCase], tests: list[JsonObject],
               by_index: dict[int, JsonObject]) -> tuple[str | None, str | None]:
    """Each test's hint ("hint", also appended to its message, as the test runner interface has it, and the
    "mistake" it names); the whole run's (hint, mistake) or (None, None), which the result carries once as
    its "diagnosis"."""
    raws = [None if (e := by_index.get(i)) is None or e.get("error") or not isinstance(e.get("actual") or [], list)
            else (e.get("actual") or []) for i in range(len(cases))]
    failing = [t["status"] == "fail" for t in tests]
    errors = [e.get("error") if (e := by_index.get(i)) is not None else None for i in range(len(cases))]
    diagnosis = diagnose_run(exercise, cases, raws, failing, function=function, errors=errors)
    for test, hint, mistake in zip(tests, diagnosis.hints, diagnosis.mistakes):
        if hint and test["status"] != "pass" and test.get("problems"):
            test["message"] += "\n" + hint
            test["hint"], test["mistake"] = hint, mistake
    return diagnosis.summary, diagnosis.summary_mistake


def _sandbox_text(data: bytes) -> str:
    """Bytes the sandboxed run wrote, as text (invalid UTF-8 becomes U+FFFD)."""
    return data.decode("utf-8", errors="replace")


_MEMORY_ERRORS = re.compile(r"heap out of memory|allocation failed|Invalid array length|Cannot allocate memory", re.I)
_SIGNAL_NAMES = {s.value: s.name for s in signal.Signals}


def _resource_verdict(outcome: sandbox.RunOutcome, events: list[Event], limits: sandbox.Limits) -> tuple[str, str] | None:
    """The sandbox's reason for ending the run early, if any: (verdict, message)."""
    stderr = _sandbox_text(outcome.stderr)
    if outcome.output_exceeded or any(e.get("event") == "output-limit" for e in events):
        return "output-limit", f"Your code printed more than {limits.output_bytes:,} bytes; the run was stopped."
    if outcome.timed_out:
        return "timeout", (f"Your code did not finish within {count_text(limits.wall_seconds, 'second')} and was not computing: "
                           "is it waiting for something that never comes (a sleep, a promise that never settles)?")
    if outcome.memory_exceeded:
        return "memory-limit", f"Your code used more than {limits.memory_bytes // sandbox.MB} MB of memory and was stopped."
    sig = outcome.signal
    if sig == signal.SIGXCPU or outcome.cpu_exceeded:
        seconds = count_text(limits.cpu_seconds, "second")
        return "cpu-limit", f"Your code used more than {seconds} of CPU time (an endless loop?) and was stopped."
    if sig == signal.SIGXFSZ:
        return "file-limit", f"Your code wrote a file larger than {limits.file_size_bytes // sandbox.MB} MB and was stopped."
    if _MEMORY_ERRORS.search(stderr) and "done" not in {e.get("event") for e in events}:
        return "memory-limit", "Your code ran out of memory and was stopped."
    if sig is not None:
        name = _SIGNAL_NAMES.get(sig, f"signal {sig}")
        return "crashed", f"Your code crashed: the process was killed by {name}."
    return None


def _error_verdict(error: JsonObject) -> str:
    kind, message, number = error.get("type", ""), error.get("message", ""), error.get("errno")
    if kind == "MemoryError" or (kind == "RangeError" and _MEMORY_ERRORS.search(message)):
        return "memory-limit"
    if number in (27, 24, 23, 28) or re.search(r"File too large|EMFILE|Too many open files|ENOSPC|No space left", message):
        return "file-limit"  # EFBIG, EMFILE, ENFILE, ENOSPC (the sandbox's writable space is capped)
    return "error"


def _error_message(verdict: str, error: JsonObject) -> str:
    if verdict == "memory-limit":
        return f"Your code ran out of memory: {error.get('type')}: {error.get('message')}"
    if verdict == "file-limit":
        return (f"Your code hit a file limit (file size, space to write, or number of open files): "
                f"{error.get('type')}: {error.get('message')}")
    return _error_text(error, "", "Your code raised")


# ------------------------------------------------------------------------------------- grade


def grade(exercise: str | Exercise, language: str, source: str, *, limits: sandbox.Limits | None = None,
          hidden_seed: int | None = None) -> Result:
    """Grade `source` (the learner's whole file) for one exercise (a registered id, or an Exercise) and
    language, after waiting for a turn of this process's gate (busy_result when there is none).

    Never raises for anything the learner's code does; raises ValueError for an unknown exercise or
    language, or a source that is not a string.
    """
    started = time.monotonic()
    exercise, language, refused = _checked(exercise, language, source, started)
    if refused is not None:
        return refused
    admission = GATE  # the gate this run entered, even if configure_concurrency replaces it meanwhile
    turn = admission.enter()
    if isinstance(turn, str):
        return busy_result(exercise.id, language)
    try:
        return _grade_admitted(exercise, language, source, limits, started, hidden_seed)
    finally:
        admission.leave(turn)


def grade_now(exercise: str | Exercise, language: str, source: str, *, limits: sandbox.Limits | None = None,
              hidden_seed: int | None = None) -> Result:
    """grade() for a caller that already holds a turn of gate() (a server waits for it in its event loop):
    the run passes one gate, not two."""
    started = time.monotonic()
    exercise, language, refused = _checked(exercise, language, source, started)
    return refused if refused is not None else _grade_admitted(exercise, language, source, limits, started,
                                                               hidden_seed)


def _checked(exercise: str | Exercise, language: str, source: str, started: float) -> tuple[Exercise, str, JsonObject | None]:
    """The exercise resolved here, once, and the language; a result already for a file not graded at all."""
    exercise = resolve(exercise)
    language = normalize_language(language)
    if not isinstance(source, str):
        raise ValueError(f"source must be the text of the file (a str), not {type(source).__name__}")
    size = len(source.encode("utf-8", errors="replace"))
    if size > MAX_SOURCE_BYTES:
        return exercise, language, _result(exercise.id, language, "error", "error",
                                           f"Your file is {size:,} bytes; files of at most {MAX_SOURCE_BYTES:,} "
                                           "bytes are graded.", [], started)
    if "\x00" in source:
        return exercise, language, _result(exercise.id, language, "error", "error",
                                           "Your file contains a NUL character; remove it and try again.", [], started)
    return exercise, language, None


def default_limits(language: str) -> sandbox.Limits:
    """The limits a grading uses for `language` (node needs a larger address space than Python)."""
    language = normalize_language(language)
    space = PYTHON_ADDRESS_SPACE if language == "python" else NODE_ADDRESS_SPACE
    own = TYPE_CHECK_CPU_SECONDS if language == "typescript" else 0.0
    return sandbox.Limits(address_space_bytes=space, grader_cpu_seconds=own)


def _driver_path(exercise: Exercise, language: str) -> str | None:
    """The kind's driver file for this language (it runs beside the learner's code), or None."""
    driver = exercise.kind.driver
    return None if driver is None else str(RUNTIME_DIR / f"{driver}.{'py' if language == 'python' else 'js'}")


HIDDEN_SEEDS = 2**31  # a run's hidden seed is below this (the grader picks it; a client never does)


def _grade_admitted(exercise: Exercise, language: str, source: str, limits: sandbox.Limits | None,
                    started: float, hidden_seed: int | None = None) -> Result:
    if language not in exercise.languages:
        raise ValueError(f"exercise {exercise.id!r} comes in {', '.join(exercise.languages)}, not {language}")
    seed = secrets.randbelow(HIDDEN_SEEDS) if hidden_seed is None else hidden_seed
    cases = [*exercise.cases, *exercise.hidden_cases(seed)]
    function = exercise.function_name(language)
    interpreter, error = (sys.executable, None) if language == "python" else _node()
    limits = limits or default_limits(language)
    if interpreter is None:
        return _result(exercise.id, language, "error", "error", error, [], started)

    nonce = uuid.uuid4().hex
    with sandbox.scratch_directory() as scratch:
        submission = os.path.join(scratch, f"solution.{LANGUAGES[language]}")
        with open(submission, "w", encoding="utf-8", errors="replace") as f:  # lone surrogates become "?"
            f.write(source)
        spec = {
            "nonce": nonce,
            "submission": submission,
            "language": language,
            "call": function,
            "cases": [{"args": c.args} for c in cases],
            "output_limit": limits.output_bytes,
            "transpiler": str(TRANSPILER),
            "typechecker": str(TYPE_CHECKER) if language == "typescript" else None,
            "driver": _driver_path(exercise, language),
            "entry": exercise.kind.entry,
        }
        spec_path = os.path.join(scratch, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        read_only = [str(RUNTIME_DIR)]
        if language == "python":
            argv = [interpreter, "-I", "-S", "-B", str(RUNTIME_DIR / "harness.py"), spec_path]
        else:
            read_only += [str(VENDOR_DIR)] + _node_binds(interpreter)
            flags = list(NODE_FLAGS)
            snapshot = typescript_snapshot.snapshot_for(interpreter, flags) if language == "typescript" else None
            if snapshot is not None:  # the checker already loaded and warmed up (see typescript_snapshot.py)
                read_only.append(str(snapshot))
                flags += ["--snapshot-blob", str(snapshot)]
            argv = [interpreter, *flags, str(RUNTIME_DIR / "harness.js"), spec_path]
        outcome = sandbox.run(argv, scratch, limits, read_only=read_only)
    events: list[Event] = []
    try:
        events = parse_events(outcome.stdout, nonce)
        result = _judge(exercise, language, cases, events, outcome, limits, started)
    except Exception as error:  # forged result lines of a shape we did not foresee: never crash the caller
        result = _result(exercise.id, language, "error", "error",
                         f"The grader could not read your code's results ({type(error).__name__}); "
                         "did your code print lines that imitate the grader's own?", [], started,
                         outcome.isolation)
    if exercise.hidden is not None:
        result = _with_hidden(result, seed)
    return with_type_errors(result, events) if language == "typescript" else result


HIDDEN_UNTIL_PASSED = ("Its inputs are drawn fresh for each run; they and the expected numbers are shown "
                       "once the whole run passes.")
_SHOWN_AFTER_PASSING = ("test_code", "expected", "actual", "expected_text", "actual_text", "output")


def _with_hidden(result: Result, seed: int) -> Result:
    """The run's hidden seed recorded, and its hidden tests masked unless the run passed: a learner who saw
    a failing hidden case's inputs could add it to a table of answers."""
    hidden = [test for test in result["tests"] if test.get("hidden")]
    if result["verdict"] != "passed":
        for test in hidden:
            for key in _SHOWN_AFTER_PASSING:
                test[key] = None
            if test["status"] != "pass":  # what it printed or raised could show its inputs too
                test["problems"] = HIDDEN_UNTIL_PASSED
                test["message"] = " ".join(filter(None, [HIDDEN_UNTIL_PASSED, test.get("hint")]))
    return result | {"hidden": {"seed": seed, "count": len(hidden)}}


def prepare_typescript() -> bool:
    """Build the TypeScript checker's startup snapshot now, if it is not built yet (otherwise the first
    TypeScript grading waits for it; a server calls this in the background at start). True when ready."""
    node, _ = _node()
    return node is not None and typescript_snapshot.snapshot_for(node, list(NODE_FLAGS)) is not None


def _split_drawings(exercise: Exercise, cases: list[GradingCase], by_index: dict[int, Event]) -> dict[int, JsonObject | None]:
    """A kind's drawing (kinds/base.py) split off each case's numbers, in place, before anything judges them."""
    drawings: dict[int, JsonObject | None] = {}
    for index, case in enumerate(cases):
        event = by_index.get(index)
        if exercise.kind.drawing is not None and event is not None and isinstance(event.get("actual"), list):
            numbers, drawings[index] = exercise.kind.drawing(case.inputs, event["actual"])
            by_index[index] = event | {"actual": numbers}
    return drawings


def _unreported(call: str, case: GradingCase, first_missing: bool, stopped: tuple[str, str] | None,
                printed: str) -> JsonObject:
    """The entry of a case that never reported: the run ended during it (the first missing), or before it."""
    reason = stopped[1] if stopped else "The run ended before this test reported a result."
    return {
        "name": case.name,
        "status": "error",
        "message": reason if first_missing else "Not run: an earlier test ended the run.",
        "output": _output_field({"output": printed}),
        "test_code": _test_code(call, case),
        "expected": [graded(x) for x in case.expected],
        "actual": None,
        "expected_text": graded_texts([graded(x) for x in case.expected]),
        "actual_text": None,
    } | ({"hidden": True} if case.hidden else {})


def _judge(exercise: Exercise, language: str, cases: list[GradingCase], events: list[Event],
           outcome: sandbox.RunOutcome, limits: sandbox.Limits, started: float) -> Result:
    isolation = outcome.isolation
    if outcome.start_error:
        return _result(exercise.id, language, "error", "error",
                       f"The grader could not start your code ({outcome.start_error}); this is not your "
                       "mistake: report it with this message.", [], started, isolation)
    if outcome.starved:
        return _result(exercise.id, language, SERVER_BUSY, "error", _server_busy_message(outcome), [], started,
                       isolation)
    by_index = {e["index"]: e for e in events if e.get("event") == "case" and isinstance(e.get("index"), int)}
    load_error = next((e for e in events if e.get("event") == "load-error"), None)
    finished = any(e.get("event") == "done" for e in events)
    stopped = _resource_verdict(outcome, events, limits)
    function = exercise.function_name(language)

    if load_error is not None and stopped is None:
        error = load_error["error"]
        verdict = _error_verdict(error)
        message = _error_message(verdict, error) if verdict != "error" else _error_text(
            error, language, "Your file could not be loaded:")
        return _result(exercise.id, language, verdict, "error", message, [], started, isolation)

    drawings = _split_drawings(exercise, cases, by_index)
    tests: list[JsonObject] = []
    verdict_from_tests: str | None = None
    for index, case in enumerate(cases):
        event = by_index.get(index)
        if event is not None:
            entry = _judge_case(exercise.kind.entry or function, exercise.kind.slot, language, case, event)
            if entry["status"] == "pass" and not case.hidden and drawings.get(index) is not None:
                entry["graph"] = drawings[index]
            if event.get("error"):
                kind = _error_verdict(event["error"])
                if kind != "error":
                    entry["message"] = entry["problems"] = _error_message(kind, event["error"])
                if verdict_from_tests in (None, "error"):
                    verdict_from_tests = kind
            tests.append(entry)
            continue
        tests.append(_unreported(exercise.kind.entry or function, case, index == len(by_index), stopped,
                                 "".join(e.get("text", "") for e in events
                                         if e.get("event") == "output" and e.get("index") == index)))

    summary, summary_mistake = _add_hints(exercise, function, cases, tests, by_index)
    if stopped is not None:
        verdict, message = stopped
        return _result(exercise.id, language, verdict, "error", message, tests, started, isolation)
    if not finished:
        stderr = _sandbox_text(outcome.stderr).strip()
        tail = stderr[-OUTPUT_SHOWN:]
        return _result(exercise.id, language, "crashed", "error",
                       f"Your program ended (exit status {outcome.returncode}) before every test reported; "
                       f"did your code exit the process? {tail}".strip(), tests, started, isolation)
    passed = sum(t["status"] == "pass" for t in tests)
    if passed == len(tests):
        return _result(exercise.id, language, "passed", "pass", None, tests, started, isolation)
    if verdict_from_tests is not None:
        verdict = verdict_from_tests
        first = next(t for t in tests if t["status"] == "error")
        message = f"{passed} of {len(tests)} tests passed. {first['name']}: {first['message']}"
    else:
        verdict = "failed"
        message = f"{passed} of {len(tests)} tests passed."
        if summary:
            message += " " + summary
    status = "fail" if verdict in ("failed", "error") else "error"
    # The run's diagnosis on its own, for a page that says it once, above the tests.
    return _result(exercise.id, language, verdict, status, message, tests, started, isolation) | {
        "diagnosis": summary, "diagnosis_mistake": summary_mistake}
