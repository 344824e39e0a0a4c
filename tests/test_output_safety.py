"""What learner code prints cannot break a result, a store, a page or a terminal.

Lone UTF-16 surrogates ("\\ud800", legal in a Python or JavaScript string, not encodable as UTF-8) and
terminal escape sequences, printed, returned and raised by real submissions graded in the real sandbox,
through the real `chainrule check`, the web API with a real SQLite store, and `chainrule progress export`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from chainrule.grading import grade, reference_source
from chainrule.progress import StoreError, open_store
from chainrule.text_safety import terminal_text, valid_data, valid_text
from chainrule.web import create_app

pytestmark = pytest.mark.timeout(180)

EXTENSIONS = {"python": "py", "javascript": "js", "typescript": "ts"}
TOKEN = "test-token-0123456789"
# Each statement as it is written in the learner's file: the escape is in the source, the lone
# surrogate exists only once the code runs.
PRINTS = {"python": 'print("before \\ud800 after")', "javascript": 'console.log("before \\ud800 after");'}
RAISES = {"python": 'raise ValueError("bad \\udfff value")', "javascript": 'throw new Error("bad \\udfff value");'}
RETURNS = {"python": 'return ["\\ud800", 1.0, 2.0]', "javascript": 'return ["\\ud800", 1.0, 2.0];'}


def with_statement(language: str, statement: dict[str, str]) -> str:
    """The reference solution of neuron-grads with `statement` as the first line of its function."""
    source = reference_source("neuron-grads", language)
    lines = source.splitlines()
    opening = next(i for i, line in enumerate(lines) if re.match(r"(export )?(def|function) neuron", line))
    indent = "    " if language == "python" else "  "
    lines.insert(opening + 1, indent + statement["python" if language == "python" else "javascript"])
    return "\n".join(lines) + "\n"


def run_check(path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrule", "check", str(path), *extra],
                          capture_output=True, timeout=120)


# ---------------------------------------------------------------- the helpers themselves


def test_valid_text_replaces_lone_surrogates_and_keeps_pairs():
    assert valid_text("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert valid_text("\ud83d\ude00") == "\U0001F600"  # a pair is one character, not two replacements
    assert valid_text("plain é") == "plain é"
    data = {"k\ud800": ["x", {"y": "\udc00"}], "n": 1.5}
    assert valid_data(data) == {"k\ufffd": ["x", {"y": "\ufffd"}], "n": 1.5}
    clean = {"a": ["b", 1]}
    assert valid_data(clean) is clean


def test_terminal_text_shows_controls_and_keeps_newlines_and_tabs():
    shown = terminal_text("\x1b[2J\x1b]0;title\x07a\tb\r\nc\x08\x9b31m\u202eevil\x00")
    assert shown == "\\x1b[2J\\x1b]0;title\\x07a\tb\\r\nc\\x08\\x9b31m\\u202eevil\\x00"
    assert terminal_text("caf\u00e9 \u2192 \U0001F600") == "caf\u00e9 \u2192 \U0001F600"


# ---------------------------------------------------------------- grading and `chainrule check`


@pytest.mark.parametrize("language", ["python", "javascript", "typescript"])
def test_printed_lone_surrogate_is_replaced_and_check_prints_the_result(tmp_path, language):
    source = with_statement(language, PRINTS)
    result = grade("neuron-grads", language, source)
    assert result["verdict"] == "passed"
    assert "before \ufffd after" in result["tests"][0]["output"]
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # every string encodes

    path = tmp_path / f"neuron-grads.{EXTENSIONS[language]}"
    path.write_text(source, encoding="utf-8")
    done = run_check(path)
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    assert done.returncode == 0
    assert "neuron-grads ({}): PASSED".format(language) in done.stdout.decode("utf-8")


@pytest.mark.parametrize("language", ["python", "javascript", "typescript"])
def test_raised_and_returned_lone_surrogates_are_replaced(tmp_path, language):
    raised = grade("neuron-grads", language, with_statement(language, RAISES))
    assert raised["verdict"] == "error"
    assert "bad \ufffd value" in raised["tests"][0]["message"]
    returned = grade("neuron-grads", language, with_statement(language, RETURNS))
    # TypeScript's checker also sees the string in a number[]: the run fails on its types as well.
    assert returned["verdict"] == ("type-error" if language == "typescript" else "failed")
    assert "which is not a finite number" in returned["tests"][0]["message"]
    for result in (raised, returned):
        json.dumps(result, ensure_ascii=False).encode("utf-8")

    path = tmp_path / f"neuron-grads.{EXTENSIONS[language]}"
    path.write_text(with_statement(language, RAISES), encoding="utf-8")
    done = run_check(path)
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    assert done.returncode == 1 and "bad \ufffd value" in done.stdout.decode("utf-8")


ATTACK = (
    "\\x1b[2J\\x1b[H"                      # clear the screen, cursor home
    "\\x1b]0;owned title\\x07"              # OSC 0: set the window title
    "\\x1b]52;c;ZWNobyBvd25lZA==\\x07"       # OSC 52: set the clipboard
    "\\x9b31m"                              # C1 CSI: red text
    "\\rneuron-grads (python): PASSED\\x08\\x08 "  # a fake verdict drawn over the line with CR
)


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_check_shows_escape_sequences_instead_of_obeying_them(tmp_path, language):
    statement = {"python": f'print("{ATTACK}"); grad[0] = 99.0',
                 "javascript": f'console.log("{ATTACK}"); grad[0] = 99.0;'}
    # The reference with its first gradient spoiled afterwards: the real verdict is FAILED.
    source = with_statement(language, statement).replace("grad[0] = dn * x[0]", "grad[0] = 99.0")
    path = tmp_path / f"neuron-grads.{EXTENSIONS[language]}"
    path.write_text(source, encoding="utf-8")
    done = run_check(path)
    out = done.stdout
    assert done.returncode == 1
    for raw in (b"\x1b", b"\r", b"\x07", b"\x08", "\x9b".encode("utf-8")):
        assert raw not in out, (raw, out)
    text = out.decode("utf-8")
    assert f"neuron-grads ({language}): FAILED" in text.splitlines()[0]
    assert "\\x1b[2J" in text and "\\x1b]52;c;" in text and "\\rneuron-grads" in text


# ---------------------------------------------------------------- the web API and the store


@pytest.fixture
def client(tmp_path):
    app = create_app(TOKEN, tmp_path / "data", port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        test_client.headers.update({"X-Chainrule-Token": TOKEN})
        yield test_client
    app.state.services.close()


def export_with_cli(data_dir, target) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrule", "progress", "export", str(target),
                           "--data-dir", str(data_dir)], capture_output=True, text=True, timeout=60)


def test_web_grade_of_a_lone_surrogate_keeps_every_read_working(client, tmp_path):
    for language in ("python", "javascript", "typescript"):
        source = with_statement(language, PRINTS)
        graded = client.post("/api/grade", json={"exercise": "neuron-grads", "language": language, "source": source})
        assert graded.status_code == 200, graded.text
        assert graded.json()["saved"] is True and graded.json()["verdict"] == "passed"
    raised = with_statement("python", RAISES).replace("neuron_grads", "neuron_grads")
    assert client.post("/api/grade", json={"exercise": "neuron-grads", "language": "python",
                                           "source": raised}).status_code == 200
    assert client.put("/api/lessons/backprop/explanation", json={"text": "mine", "ticked": []}).status_code == 200

    progress = client.get("/api/progress/backprop")
    assert progress.status_code == 200, progress.text
    results = progress.json()["results"]
    assert "bad \ufffd value" in results["neuron-grads/python"]["message"] + json.dumps(
        results["neuron-grads/python"]["tests"], ensure_ascii=False)
    assert "before \ufffd after" in results["neuron-grads/typescript"]["tests"][0]["output"]
    assert progress.json()["explanation"]["text"] == "mine"
    assert client.get("/api/path").status_code == 200
    assert client.get("/api/review/due").status_code == 200

    done = export_with_cli(tmp_path / "data", tmp_path / "out.json")
    assert done.returncode == 0, done.stderr
    exported = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert len(exported["submissions"]) == 4


def test_store_never_keeps_an_unencodable_string(tmp_path):
    store = open_store(tmp_path, fuzzing=False)
    try:
        store.record_submission("neuron-grads", "python", "x = 1", {"status": "fail", "message": "m\ud800"})
        assert store.latest_results()["neuron-grads/python"]["message"] == "m\ufffd"
        with pytest.raises(ValueError, match="surrogate"):
            store.save_explanation("backprop", "text", ["idea\udfff"])
        with pytest.raises(ValueError, match="surrogate"):
            store.save_code("neuron-grads", "python", "x = '\ud800'")
        document = store.export_data()
        document["submissions"][0]["result"]["message"] = "again \ud800"
        with pytest.raises(StoreError, match="surrogate"):
            store.import_data(document)
    finally:
        store.close()


def test_a_store_holding_unreadable_text_is_repaired_on_open(tmp_path):
    store = open_store(tmp_path, fuzzing=False)
    store.record_submission("neuron-grads", "python", "x = 1", {"status": "pass", "message": None, "tests": []})
    # A character outside the BMP is stored as a surrogate PAIR escape: valid, and left alone.
    store.record_submission("neuron-grads", "javascript", "// \U0001F600", {"status": "pass", "message": "\U0001F600"})
    store.answer_question("backprop", "sum-of-uses", "2", True)
    store.save_explanation("backprop", "my words", [])
    store.close()

    # Planted directly, as an older version or a hand edit could have: a "\ud800" escape inside a JSON
    # column, and the bytes of an encoded surrogate (ED A0 80, not UTF-8) in two text columns.
    conn = sqlite3.connect(tmp_path / "progress.sqlite3")
    conn.execute("""UPDATE submissions SET result = '{"message": "lone \\ud800 here", "status": "pass", "tests": []}'
                    WHERE language = 'python'""")
    conn.execute("UPDATE code SET source = CAST(X'78203D2022EDA0802200' AS TEXT) WHERE language = 'python'")
    conn.execute("UPDATE quiz_answers SET answer = CAST(X'32EDB080' AS TEXT)")
    conn.commit()
    with pytest.raises(sqlite3.OperationalError):  # what every read of the row did before the repair
        conn.execute("SELECT source FROM code").fetchall()
    conn.close()

    store = open_store(tmp_path, fuzzing=False)
    try:
        assert store.repaired == 3
        assert store.latest_results()["neuron-grads/python"]["message"] == "lone \ufffd here"
        assert store.latest_code()["neuron-grads/python"] == 'x = "\ufffd"\x00'
        assert store.quiz_answers("backprop")["sum-of-uses"]["answer"] == "2\ufffd"
        assert store.explanation("backprop")["text"] == "my words"  # untouched
        assert store.latest_results()["neuron-grads/javascript"]["message"] == "\U0001F600"
    finally:
        store.close()
    again = open_store(tmp_path, fuzzing=False)
    assert again.repaired == 0
    again.close()
    done = export_with_cli(tmp_path, tmp_path / "export.json")
    assert done.returncode == 0, done.stderr
    exported = json.loads((tmp_path / "export.json").read_text(encoding="utf-8"))
    assert exported["submissions"][0]["result"]["message"] == "lone \ufffd here"


def test_review_and_progress_commands_show_imported_escape_sequences_escaped(tmp_path):
    source = open_store(tmp_path / "a", fuzzing=False)
    source.answer_question("backprop", "sum-of-uses", "2", True)
    document = source.export_data()
    source.close()
    hostile = "\x1b]0;owned\x07\x1b[2J"
    for section in ("cards", "review_logs", "quiz_answers"):
        for row in document[section]:
            row["lesson_id"] = hostile
    for card in document["cards"]:
        card["card"]["due"] = "2020-01-01T00:00:00+00:00"  # due now
    (tmp_path / "hostile.json").write_text(json.dumps(document), encoding="utf-8")
    base = [sys.executable, "-m", "chainrule"]
    imported = subprocess.run(base + ["progress", "import", str(tmp_path / "hostile.json"), "--data-dir",
                                      str(tmp_path / "b")], capture_output=True, timeout=60)
    assert imported.returncode == 0, imported.stderr
    review = subprocess.run(base + ["review", "--data-dir", str(tmp_path / "b")], input=b"q\n",
                            capture_output=True, timeout=60)
    assert review.returncode == 0, review.stderr
    assert b"\\x1b]0;owned\\x07" in review.stdout
    for output in (review.stdout, review.stderr, imported.stdout, imported.stderr):
        assert b"\x1b" not in output and b"\x07" not in output


def test_export_to_a_terminal_escapes_what_json_leaves_raw(tmp_path):
    import os
    import pty

    store = open_store(tmp_path, fuzzing=False)
    store.save_code("neuron-grads", "python", "print('\x9b31m red \u202e evil')")  # C1 CSI, bidi override
    store.close()
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "chainrule", "progress", "export", "-", "--data-dir",
                               str(tmp_path)], stdout=follower, stderr=subprocess.PIPE, timeout=60)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert done.returncode == 0, done.stderr
    assert b"\\u009b31m red \\u202e evil" in shown
    assert "\x9b".encode() not in shown and "\u202e".encode() not in shown
    piped = export_with_cli(tmp_path, "-")  # to a file or pipe: the exact text, as JSON allows
    assert "\x9b31m red \u202e evil" in piped.stdout
