"""Lines that imitate the harness's own cannot crash the grader (docs/security.md, "Forged result lines").

Learner code can read the run's nonce and print result lines of its own. Real submissions print forged
lines 600 levels deep, with NaN, 1e999 and a 400-digit integer, graded in the real sandbox, through
`chainrule check --json` and through the web API: grade() answers with a verdict every time, and the
result is strict JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from chainrule.grading import grade
from chainrule.grading.harness_output import MAX_DEPTH, parse_event, parse_events
from chainrule.web import create_app

pytestmark = pytest.mark.timeout(180)

DEEP = "[" * 600 + "1" + "]" * 600
FORGED = {
    "600-deep result": '{"event": "case", "index": %d, "actual": ' + DEEP + ', "error": null, "output": ""}',
    "600-deep error": '{"event": "case", "index": %d, "actual": null, "error": {"type": "E", "message": ' + DEEP
                      + '}, "output": ""}',
    "NaN": '{"event": "case", "index": %d, "actual": [NaN, 1, 2], "error": null, "output": ""}',
    "1e999": '{"event": "case", "index": %d, "actual": [1e999, 1, 2], "error": null, "output": ""}',
    "400-digit integer": '{"event": "case", "index": %d, "actual": [' + "9" * 400 + ', 1, 2], "error": null, "output": ""}',
}


def forging(line: str) -> str:
    """A Python submission that prints the harness's marker with `line` for every test, then "done", and
    leaves before the harness can report anything real."""
    return f'''import sys, json, os
marker = "@@chainrule:" + json.load(open(sys.argv[1]))["nonce"] + "@@ "
lines = [marker + '{{"event": "loaded"}}'] + [marker + ({line!r} % i) for i in range(8)]
os.write(1, ("\\n".join(lines + [marker + '{{"event": "done"}}']) + "\\n").encode())
os._exit(0)
'''


def test_parse_event_keeps_the_harness_lines_and_drops_the_rest():
    assert parse_event(b'{"event": "case", "index": 0, "actual": [1.5, "NaN"], "error": null}') == {
        "event": "case", "index": 0, "actual": [1.5, "NaN"], "error": None}
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_event(('{"a": ' + nested + '}').encode()) is None  # one level too deep with the object
    assert parse_event(('{"a": ' + nested[1:-1] + '}').encode()) is not None
    for refused in (b'{"a": NaN}', b'{"a": -Infinity}', b'{"a": 1e999}', b'{"a": -1e400}',
                    b'{"a": ' + b"1" * 21 + b'}', b'{"a": ' + DEEP.encode() + b'}', b"[1]", b"{",
                    b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b'}'):
        assert parse_event(refused) is None, refused[:40]
    assert parse_event(b'{"text": "\\ud800"}') == {"text": "\ufffd"}
    assert parse_event(b'{"error": "plain"}')["error"] == {"type": "Error", "message": "plain"}
    assert parse_events(b"noise\n@@chainrule:n@@ {\"event\": \"done\"}\n@@chainrule:x@@ {}\n", "n") == [
        {"event": "done"}]


@pytest.mark.parametrize("kind", list(FORGED))
def test_grade_answers_a_verdict_for_forged_result_lines(kind):
    result = grade("neuron-grads", "python", forging(FORGED[kind]))
    assert result["verdict"] in ("failed", "error", "crashed")
    json.dumps(result, allow_nan=False)  # strict JSON: what `check --json` and the web API send


@pytest.mark.parametrize("kind", ["600-deep result", "NaN"])
def test_check_json_prints_a_verdict_for_forged_result_lines(tmp_path, kind):
    path = tmp_path / "neuron-grads.py"
    path.write_text(forging(FORGED[kind]))
    done = subprocess.run([sys.executable, "-m", "chainrule", "check", str(path), "--json", "--exercise", "neuron-grads"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1
    assert json.loads(done.stdout)["verdict"] == "failed"


def test_web_grade_answers_forged_deep_lines_without_a_server_error(tmp_path):
    token = "test-token-0123456789"
    app = create_app(token, tmp_path / "data", port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False) as client:
        answer = client.post("/api/grade", headers={"X-Chainrule-Token": token}, json={
            "exercise": "neuron-grads", "language": "python", "source": forging(FORGED["600-deep error"])})
        assert answer.status_code == 200, answer.text
        assert answer.json()["verdict"] == "failed"
        assert client.get("/api/progress/backprop", headers={"X-Chainrule-Token": token}).status_code == 200
    app.state.services.close()
