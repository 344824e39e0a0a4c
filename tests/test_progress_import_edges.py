"""An imported file cannot break the store, and no stored row can break a reader (docs/security.md).

`chainrule progress import` checks every FSRS card against what the store's scheduler (py-fsrs) can
review and bounds the depth of every JSON value; a bad row already stored (an older import, a hand
edit, written here straight into SQLite) is reported on the "chainrule.progress" logger and skipped by
review, the due list and the lesson page. Real SQLite, the real CLI, the real web app.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from chainrule.progress import StoreError, open_store
from chainrule.web import create_app

pytestmark = pytest.mark.timeout(120)

TOKEN = "test-token-0123456789"
DEEP_RESULT = {"status": "fail", "tests": json.loads("[" * 300 + "]" * 300)}


@pytest.fixture(scope="module")
def document(tmp_path_factory) -> dict:
    """A real export: one submission, and one quiz answer whose card the real scheduler made."""
    store = open_store(tmp_path_factory.mktemp("source"), fuzzing=False)
    try:
        store.record_submission("neuron-grads", "python", "x = 1", {"status": "fail", "tests": []})
        store.answer_question("backprop", "product-gradient", "6", True)
        return store.export_data()
    finally:
        store.close()


def changed_card(document: dict, **fields) -> dict:
    bad = copy.deepcopy(document)
    bad["cards"][0]["card"].update(fields)
    return bad


def run_chainrule(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrule", *args], capture_output=True, text=True, timeout=60)


BAD_CARDS = {
    "stability -5": ({"stability": -5}, "stability must be null or a number from 0.001"),
    "stability 1e300": ({"stability": 1e300}, "stability must be null or a number from 0.001 to 1e+09"),
    "difficulty 11": ({"difficulty": 11}, "difficulty must be null or a number from 1 to 10"),
    "review card without stability": ({"stability": None, "difficulty": None}, "not an FSRS card the scheduler can use"),
    "step -1": ({"step": -1}, "step must be null or a whole number"),
    "state 4": ({"state": 4}, "state must be 1 (learning), 2 (review) or 3 (relearning)"),
    "due in the year 9999": ({"due": "9999-12-31T00:00:00+00:00"}, "due must be between the years 1970 and 2999"),
    "card_id 0": ({"card_id": 0}, "card_id must be a positive integer"),
}


@pytest.mark.parametrize("case", list(BAD_CARDS))
def test_import_refuses_a_card_the_scheduler_cannot_review(document, tmp_path, case):
    fields, says = BAD_CARDS[case]
    store = open_store(tmp_path, fuzzing=False)
    try:
        with pytest.raises(StoreError, match=re.escape("cards[0].card: " + says)):
            store.import_data(changed_card(document, **fields))
        assert store.export_data()["cards"] == []  # nothing was imported
        store.import_data(document)  # the real card is taken
        assert len(store.due_reviews(datetime.now(timezone.utc) + timedelta(days=400))) == 1
    finally:
        store.close()


def test_import_refuses_a_result_nested_300_deep_and_the_cli_says_why(document, tmp_path):
    deep = copy.deepcopy(document)
    deep["submissions"][0]["result"] = DEEP_RESULT
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(deep))
    done = run_chainrule("progress", "import", str(path), "--data-dir", str(tmp_path / "data"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "submissions[0].result: nested more than 20 levels deep" in done.stderr + done.stdout

    very_deep = tmp_path / "very-deep.json"  # deeper than json.loads can read: a clear refusal too
    very_deep.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = run_chainrule("progress", "import", str(very_deep), "--data-dir", str(tmp_path / "data"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "nests lists and objects too deeply" in done.stderr + done.stdout


def test_import_with_stability_minus_5_is_refused_by_the_cli_and_review_keeps_working(document, tmp_path):
    path = tmp_path / "bad-card.json"
    path.write_text(json.dumps(changed_card(document, stability=-5)))
    data = str(tmp_path / "data")
    done = run_chainrule("progress", "import", str(path), "--data-dir", data)
    assert done.returncode != 0 and "stability must be null or a number" in done.stderr + done.stdout
    review = run_chainrule("review", "--data-dir", data)
    assert "Traceback" not in review.stderr, review.stderr


def break_rows(path) -> None:
    """Rows no import accepts any more, written straight into the store's SQLite file."""
    with sqlite3.connect(path) as conn:
        card = json.loads(conn.execute("SELECT card FROM cards").fetchone()[0])
        conn.execute("UPDATE cards SET card = ?, due_ts = 0", (json.dumps(card | {"stability": -5}),))
        conn.execute("UPDATE submissions SET result = ?", (json.dumps(DEEP_RESULT),))
        conn.execute("INSERT INTO cards (lesson_id, question_id, card, due_ts) VALUES ('backprop', 'sum-of-uses', "
                     "'{\"due\": 1}', 0)")


@pytest.fixture
def broken_store(document, tmp_path):
    store = open_store(tmp_path / "data", fuzzing=False)
    store.import_data(document)
    store.close()
    break_rows(tmp_path / "data" / "progress.sqlite3")
    return tmp_path / "data"


def test_stored_rows_that_break_readers_are_reported_and_skipped(broken_store, caplog):
    caplog.set_level(logging.WARNING, logger="chainrule.progress")
    store = open_store(broken_store, fuzzing=False)
    try:
        later = datetime.now(timezone.utc) + timedelta(days=1)
        assert store.due_reviews(later) == []  # both cards are unusable: skipped, not a crash
        assert store.next_due() is None
        assert store.latest_results() == {}
        assert store.card("backprop", "sum-of-uses") is None
        assert store.quiz_answers("backprop")["product-gradient"]["due"] is None
        rated = store.review("backprop", "product-gradient", "6", True)  # starts the card afresh
        assert rated["interval_days"] > 0
        assert len(store.due_reviews(later + timedelta(days=400))) == 1
    finally:
        store.close()
    reported = "\n".join(record.getMessage() for record in caplog.records)
    assert "skipped a stored review card (card backprop/product-gradient): stability must be" in reported
    assert "skipped a stored row (a run's result): nested more than 20 levels deep" in reported


def test_the_web_api_answers_with_bad_rows_stored(broken_store):
    app = create_app(TOKEN, broken_store, port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False) as client:
        client.headers.update({"X-Chainrule-Token": TOKEN})
        assert client.get("/api/review/due").status_code == 200
        progress = client.get("/api/progress/backprop")
        assert progress.status_code == 200, progress.text
        answered = client.post("/api/review/backprop/product-gradient", json={"answer": "6"})
        assert answered.status_code == 200, answered.text
    app.state.services.close()


def test_an_export_leaves_out_the_bad_rows_and_imports_back(broken_store, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="chainrule.progress")
    store = open_store(broken_store, fuzzing=False)
    try:
        exported = store.export_data()
    finally:
        store.close()
    assert exported["cards"] == [] and exported["submissions"] == []  # both cards and the result are bad
    assert [row["question_id"] for row in exported["quiz_answers"]] == ["product-gradient"]  # the rest stays
    fresh = open_store(tmp_path / "fresh", fuzzing=False)
    try:
        fresh.import_data(exported)
    finally:
        fresh.close()
    reported = "\n".join(record.getMessage() for record in caplog.records)
    assert "left out of the export: a stored row (cards[0].card: stability must be" in reported
    assert "left out of the export: a stored row (submissions[0].result: expected an object" in reported

    done = run_chainrule("progress", "export", str(tmp_path / "out.json"), "--data-dir", str(broken_store))
    assert done.returncode == 0 and "left out of the export" in done.stderr, done.stderr
