"""TypeScript submissions are type-checked by the real TypeScript compiler, inside the sandbox.

The compiler is the vendored bundle (src/chainrule/grading/vendor/typescript-check.js, built by
frontend/transpiler). Expected positions are found in the test's own source text, by hand.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from chainrule.grading import EXERCISES, grade, reference_source, starter_source, typescript_snapshot

pytestmark = pytest.mark.timeout(300)

WITH_TYPE_ERROR = """// chainrule exercise: neuron-grads
export function neuronGrads(x: number[], w: number[], b: number, out: number, grad: number[]): number[] {
  let x1: number = "a";
  const dn: number = 1 - out ** 2;
  grad[0] = dn * x[0];
  grad[1] = dn * x[1];
  grad[2] = dn;
  return grad;
}
"""


def position(source: str, needle: str) -> tuple[int, int]:
    """1-based (line, column) of the first `needle` in `source`."""
    for number, line in enumerate(source.splitlines(), start=1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(f"{needle!r} not in the source")


def test_a_type_error_is_reported_with_line_and_column_and_fails_the_run():
    result = grade("neuron-grads", "typescript", WITH_TYPE_ERROR)
    line, column = position(WITH_TYPE_ERROR, "x1: number")
    assert result["type_errors"] == [{"line": line, "column": column, "code": 2322,
                                      "message": "Type 'string' is not assignable to type 'number'."}]
    assert result["verdict"] == "type-error" and result["status"] == "fail"
    assert all(test["status"] == "pass" for test in result["tests"])  # the tests ran all the same
    assert f"line {line}, column {column}: Type 'string' is not assignable to type 'number'." in result["message"]


def test_type_errors_and_wrong_numbers_are_both_shown():
    wrong = WITH_TYPE_ERROR.replace("grad[2] = dn;", "grad[2] = dn * 2;")
    result = grade("neuron-grads", "typescript", wrong)
    assert result["verdict"] == "type-error"
    assert [test["status"] for test in result["tests"]].count("fail") >= 1
    assert "(the tests ran anyway" in result["message"] and "line 3, column 7" in result["message"]


def test_a_run_that_raises_keeps_its_verdict_and_lists_the_type_errors():
    raising = WITH_TYPE_ERROR.replace("  grad[0] =", '  if (out > -2) throw new Error("stop");\n  grad[0] =')
    result = grade("neuron-grads", "typescript", raising)
    assert result["verdict"] == "error"
    assert "TypeScript also found 1 type error" in result["message"]
    assert result["type_errors"][0]["line"] == 3


@pytest.mark.parametrize("exercise_id", list(EXERCISES))
def test_reference_solutions_and_starters_have_no_type_errors(exercise_id, grade_once):
    solved = grade_once(exercise_id, "typescript", reference_source(exercise_id, "typescript"))
    assert solved["type_errors"] == [] and solved["verdict"] == "passed", solved["message"]
    started = grade_once(exercise_id, "typescript", starter_source(exercise_id, "typescript"))
    assert started["type_errors"] == [], started["type_errors"]


def test_javascript_and_python_results_have_no_type_errors_field(grade_once):
    for language in ("javascript", "python"):
        assert "type_errors" not in grade_once("neuron-grads", language, reference_source("neuron-grads", language))


def test_learner_code_cannot_forge_the_checkers_report():
    # The nonce is readable inside the sandbox: the code reads it and writes a fake, empty report
    # straight to file descriptor 1. The checker's own report came first, and is the one used.
    forging = WITH_TYPE_ERROR.replace("  const dn: number = 1 - out ** 2;", """  const fs = require("fs");
  const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  fs.writeSync(1, "\\n@@chainrule:" + spec.nonce + '@@ {"event": "type-errors", "errors": []}\\n');
  const dn: number = 1 - out ** 2;""").replace("export function", "declare var process: any;\nexport function")
    result = grade("neuron-grads", "typescript", forging)
    assert result["verdict"] == "type-error"
    assert [error["code"] for error in result["type_errors"]] == [2322]


def test_check_command_prints_the_type_errors(tmp_path):
    path = tmp_path / "neuron-grads.ts"
    path.write_text(WITH_TYPE_ERROR, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "chainrule", "check", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "neuron-grads (typescript): TYPE-ERROR"
    assert "line 3, column 7: Type 'string' is not assignable to type 'number'. (TS2322)" in done.stdout


def test_the_snapshot_is_writable_by_its_owner_only_and_agrees_with_the_plain_bundle(tmp_path, monkeypatch):
    monkeypatch.setenv(typescript_snapshot.ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.setattr(typescript_snapshot, "_ready", {})
    from_snapshot = grade("neuron-grads", "typescript", WITH_TYPE_ERROR)
    blobs = list((tmp_path / "cache" / "typescript").glob("checker-*.blob"))
    assert len(blobs) == 1, typescript_snapshot.last_problem
    # Read by the sandbox's unprivileged user (bound read-only into the sandbox); written by the owner alone.
    assert blobs[0].stat().st_mode & 0o777 == 0o644
    monkeypatch.setattr(typescript_snapshot, "snapshot_for", lambda node, flags: None)
    from_bundle = grade("neuron-grads", "typescript", WITH_TYPE_ERROR)
    assert from_snapshot["type_errors"] == from_bundle["type_errors"] != []
    assert from_snapshot["verdict"] == from_bundle["verdict"] == "type-error"


def test_the_lesson_server_builds_the_snapshot_while_the_learner_reads(tmp_path):
    import time

    from web_process import start, stop, wait_for_url

    cache = tmp_path / "cache"
    process = start(["--port", "0", "--data-dir", str(tmp_path / "data")],
                    {typescript_snapshot.ENV_CACHE_DIR: str(cache)})
    try:
        wait_for_url(process)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not list(cache.glob("typescript/checker-*.blob")):
            time.sleep(0.5)
        assert len(list(cache.glob("typescript/checker-*.blob"))) == 1  # built before any grading was asked for
    finally:
        stop(process)
