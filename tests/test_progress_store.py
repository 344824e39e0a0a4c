"""The progress store API (docs/progress.md): what is kept, across restarts, with migrations."""

from __future__ import annotations

import math
import sqlite3
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from chainrule.progress import DATABASE_NAME, SCHEMA_VERSION, StoreError, default_data_dir, open_store, schema

START = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(store_place, clock: FakeClock):
    """A fresh store, once in SQLite and once in PostgreSQL (conftest.store_place)."""
    opened = open_store(**store_place(), clock=clock, fuzzing=False)
    yield opened
    opened.close()


@pytest.fixture
def sqlite_store(tmp_path: Path, clock: FakeClock):
    """For the tests of the SQLite file itself (its pragmas, its migrations, opening without create)."""
    opened = open_store(tmp_path, clock=clock, fuzzing=False)
    yield opened
    opened.close()


def raw(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, independent of the store, to look at the file itself."""
    return sqlite3.connect(str(path))


def test_database_file_is_created_in_wal_mode_at_the_current_schema_version(sqlite_store, tmp_path):
    store = sqlite_store
    path = tmp_path / DATABASE_NAME
    assert path.exists()
    conn = raw(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(schema.MIGRATIONS)
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    assert {"predictions", "code", "submissions", "quiz_answers", "explanations", "cards", "review_logs"} <= tables
    # Each connection of the store waits for locks instead of failing at once.
    assert store.database._connection().execute("PRAGMA busy_timeout").fetchone()[0] == 5000


def test_data_dir_comes_from_the_environment_then_platformdirs(tmp_path, monkeypatch):
    import platformdirs

    monkeypatch.setenv("CHAINRULE_DATA_DIR", str(tmp_path / "from-env"))
    assert default_data_dir() == tmp_path / "from-env"
    opened = open_store()
    try:
        assert opened.path == tmp_path / "from-env" / DATABASE_NAME
        assert opened.path.exists()
    finally:
        opened.close()
    monkeypatch.delenv("CHAINRULE_DATA_DIR")
    assert default_data_dir() == Path(platformdirs.user_data_dir("chainrule"))


def test_predictions_keep_the_latest_value_per_key_with_its_time(store, clock):
    store.save_prediction("backprop", "n", 0.9, False)
    clock.advance(minutes=1)
    store.save_prediction("backprop", "n", 0.8814, True)
    store.save_prediction("backprop", "dw1", 1.0, True)
    store.save_prediction("other-lesson", "n", 5.0, False)
    assert store.predictions("backprop") == {
        "n": {"value": 0.8814, "correct": True, "at": "2026-03-01T09:31:00+00:00"},
        "dw1": {"value": 1.0, "correct": True, "at": "2026-03-01T09:31:00+00:00"},
    }
    assert store.predictions("nothing-here") == {}


@pytest.mark.parametrize("bad", [math.nan, math.inf, "abc"])
def test_a_prediction_must_be_a_finite_number(store, bad):
    with pytest.raises(ValueError):
        store.save_prediction("backprop", "n", bad, True)
    assert store.predictions("backprop") == {}


def test_submissions_are_all_kept_and_update_the_latest_code(store, clock):
    store.save_code("neuron-grads", "python", "def neuron_grads(): pass")
    assert store.latest_code() == {"neuron-grads/python": "def neuron_grads(): pass"}
    first = store.record_submission("neuron-grads", "python", "v1", {"status": "fail", "tests": []})
    clock.advance(seconds=30)
    second = store.record_submission("neuron-grads", "python", "v2", {"status": "pass", "tests": [{"name": "t"}]})
    store.record_submission("local-grads", "javascript", "js", {"status": "error", "message": "boom"})
    assert second > first
    assert store.submission_count() == 3
    assert store.latest_code() == {"local-grads/javascript": "js", "neuron-grads/python": "v2"}
    assert store.latest_results() == {
        "local-grads/javascript": {"status": "error", "message": "boom"},
        "neuron-grads/python": {"status": "pass", "tests": [{"name": "t"}]},
    }
    # Saving code without running it changes the code, not the results.
    store.save_code("neuron-grads", "python", "v3 (unsaved run)")
    assert store.latest_code()["neuron-grads/python"] == "v3 (unsaved run)"
    assert store.latest_results()["neuron-grads/python"]["status"] == "pass"


def test_explanation_keeps_text_and_ticked_key_ideas(store):
    assert store.explanation("backprop") is None
    store.save_explanation("backprop", "Start at the output with gradient 1...", ["seed", "reverse"])
    store.save_explanation("backprop", "Start at 1, multiply local derivatives.", ["seed", "multiply"])
    assert store.explanation("backprop") == {
        "text": "Start at 1, multiply local derivatives.",
        "ticked": ["seed", "multiply"],
        "at": "2026-03-01T09:30:00+00:00",
    }
    with pytest.raises(ValueError):
        store.save_explanation("backprop", "x", "seed")  # not a list


def test_quiz_answers_keep_the_latest_answer_and_when_it_comes_back(store, clock):
    store.answer_question("backprop", "q1-mul", "5", False)
    clock.advance(minutes=5)
    store.answer_question("backprop", "q1-mul", "6", True)
    store.answer_question("backprop", "q2-add", "Passes it unchanged to each input", True)
    answers = store.quiz_answers("backprop")
    assert set(answers) == {"q1-mul", "q2-add"}
    assert answers["q1-mul"]["answer"] == "6"
    assert answers["q1-mul"]["correct"] is True
    assert answers["q1-mul"]["at"] == "2026-03-01T09:35:00+00:00"
    # Its card is due in the future and the phrase says so in days.
    due = datetime.fromisoformat(answers["q2-add"]["due"])
    assert due > clock.now
    assert answers["q2-add"]["text"].startswith("again in ")
    # Both ratings of q1 are in its review log, as lesson ("quiz") ratings.
    assert [entry["kind"] for entry in store.review_log("backprop", "q1-mul")] == ["quiz", "quiz"]


SHAPE = {"id": "backprop", "sections": ["01", "02", "03", "04", "05", "06", "07", "08"], "predictions": ["n", "o", "x"],
         "exercises": ["neuron-grads", "local-grads", "backward-order"], "quiz": ["q1", "q2", "q3"]}


def test_lesson_state_counts_what_the_lesson_asks_for(store):
    from chainrule.progress.finished import lesson_state

    assert lesson_state(SHAPE, store.work())["done"] == {
        "predictions": 0, "exercises": 0, "quiz": 0, "explanation": False,
    }
    store.save_prediction("backprop", "n", 0.88, True)
    store.save_prediction("backprop", "o", 0.7, True)
    store.record_submission("neuron-grads", "python", "s", {"status": "pass"})
    store.record_submission("neuron-grads", "javascript", "s", {"status": "pass"})  # same exercise
    store.record_submission("local-grads", "python", "s", {"status": "fail"})
    store.record_submission("elsewhere", "python", "s", {"status": "pass"})  # not in this lesson
    store.answer_question("backprop", "q1", "6", True)
    store.answer_question("backprop", "q1", "6", True)
    store.answer_question("backprop", "q3", "0.5", False)
    store.save_prediction("backprop", "made-up", 1.0, True)  # a key the lesson does not ask for counts nothing
    store.answer_question("backprop", "q-made-up", "1", True)
    store.save_explanation("backprop", "my words", [])
    state = lesson_state(SHAPE, store.work())
    assert state["done"] == {"predictions": 2, "exercises": 1, "quiz": 2, "explanation": True}
    assert state["started"] and state["sections"] == ["01", "02", "03", "07"]


def test_everything_survives_closing_and_reopening(store_place, clock):
    first = open_store(**store_place(), clock=clock, fuzzing=False)
    first.save_prediction("backprop", "n", 0.8814, True)
    first.record_submission("neuron-grads", "python", "src", {"status": "pass"})
    first.answer_question("backprop", "q1", "6", True)
    first.save_explanation("backprop", "text", ["seed"])
    before = first.export_data()
    first.close()

    second = open_store(**store_place(), clock=clock, fuzzing=False)
    try:
        assert second.export_data() == before
        assert second.predictions("backprop")["n"]["value"] == 0.8814
    finally:
        second.close()


def test_threads_sharing_one_store_lose_nothing(store):
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for index in range(25):
                store.record_submission(f"ex{worker}", "python", str(index), {"status": "pass"})
        except BaseException as error:  # reported below: the assertion must see it
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(worker,)) for worker in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.submission_count() == 6 * 25


def test_clock_must_be_timezone_aware(store_place):
    opened = open_store(**store_place(), clock=lambda: datetime(2026, 1, 1), fuzzing=False)
    try:
        with pytest.raises(ValueError, match="timezone-aware"):
            opened.save_code("e", "python", "x")
    finally:
        opened.close()


# ------------------------------------------------------------------ migrations


def _migration_next_add_note(conn) -> None:
    conn.execute("ALTER TABLE predictions ADD COLUMN note TEXT NOT NULL DEFAULT ''")


def test_a_new_migration_is_applied_once_to_an_existing_database_and_keeps_its_data(tmp_path, clock, monkeypatch):
    old = open_store(tmp_path, clock=clock, fuzzing=False)
    old.save_prediction("backprop", "n", 0.88, True)
    old.close()

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, _migration_next_add_note])
    upgraded = open_store(tmp_path, clock=clock, fuzzing=False)
    try:
        conn = raw(upgraded.path)
        try:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
            assert conn.execute("SELECT key, value, note FROM predictions").fetchall() == [("n", 0.88, "")]
        finally:
            conn.close()
        assert upgraded.predictions("backprop")["n"]["value"] == 0.88
    finally:
        upgraded.close()
    # Opening again does not re-run it (ALTER TABLE ADD COLUMN twice would fail).
    open_store(tmp_path, clock=clock, fuzzing=False).close()


def test_a_failing_migration_leaves_the_database_at_the_previous_version(tmp_path, clock, monkeypatch):
    old = open_store(tmp_path, clock=clock, fuzzing=False)
    old.save_prediction("backprop", "n", 0.88, True)
    old.close()

    def broken_migration(conn) -> None:
        conn.execute("CREATE TABLE half_done (x INTEGER)")
        conn.execute("THIS IS NOT SQL")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, broken_migration])
    with pytest.raises(StoreError):
        open_store(tmp_path, clock=clock, fuzzing=False)
    conn = raw(tmp_path / DATABASE_NAME)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "half_done" not in names
        assert conn.execute("SELECT value FROM predictions").fetchall() == [(0.88,)]
    finally:
        conn.close()


def test_a_database_from_a_newer_chainrule_is_refused_and_left_alone(tmp_path):
    path = tmp_path / DATABASE_NAME
    conn = raw(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    with pytest.raises(StoreError) as caught:
        open_store(tmp_path)
    assert caught.value.kind == "newer-version"
    assert str(path) in str(caught.value)
    assert "Upgrade chainrule" in str(caught.value)
    conn = raw(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 5
    finally:
        conn.close()


def test_lesson_state_counts_only_the_lessons_own_exercises(store):
    from chainrule.progress.finished import lesson_state

    lessons = pytest.importorskip("chainrule.lessons")
    first = lessons.exercise_ids("backprop")[0]
    store.record_submission(first, "python", "s", {"status": "pass"})
    store.record_submission("not-an-exercise-of-backprop", "python", "s", {"status": "pass"})
    assert lesson_state(lessons.lesson_shape("backprop"), store.work())["done"]["exercises"] == 1
    assert store.work().passed == {first, "not-an-exercise-of-backprop"}


def _child_writes(store, results) -> None:
    store.save_prediction("backprop", "from-child", 1.0, True)
    results.put(sorted(store.predictions("backprop")))


def test_a_store_object_inherited_through_fork_opens_its_own_connection(store):
    """A server that opens the store and then forks workers: each worker gets its own connection."""
    import multiprocessing

    store.save_prediction("backprop", "from-parent", 1.0, True)
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_child_writes, args=(store, results))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 0
    assert results.get(timeout=5) == ["from-child", "from-parent"]
    store.save_prediction("backprop", "after", 1.0, True)  # the parent's connection still works
    assert sorted(store.predictions("backprop")) == ["after", "from-child", "from-parent"]


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("save_code", ("neuron-grads", "python", "bad \ud800 text")),
        ("save_prediction", ("", "n", 1.0, True)),
        ("answer_question", ("backprop", 7, "6", True)),
        ("record_submission", ("neuron-grads", "python", "src", {"status": "pass", "bad": {1, 2}})),
        ("save_explanation", ("backprop", "text", [1, 2])),
    ],
)
def test_bad_arguments_are_refused_with_a_value_error_and_nothing_is_stored(store, call, args):
    before = store.export_data()
    with pytest.raises(ValueError):
        getattr(store, call)(*args)
    assert store.export_data() == before


def test_open_store_without_create_refuses_a_missing_database_and_creates_nothing(tmp_path):
    from chainrule.progress import NOT_FOUND

    missing = tmp_path / "typo" / "deeper"
    with pytest.raises(StoreError) as caught:
        open_store(missing, create=False)
    assert caught.value.kind == NOT_FOUND
    assert caught.value.path == missing / DATABASE_NAME
    assert str(caught.value) == (
        f"no progress database at {missing / DATABASE_NAME}: nothing has been saved there yet (check --data-dir)"
    )
    assert not (tmp_path / "typo").exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(StoreError):
        open_store(empty, create=False)
    assert list(empty.iterdir()) == []


def test_open_store_without_create_opens_an_existing_database(tmp_path, clock):
    first = open_store(tmp_path / "kept", clock=clock, fuzzing=False)
    first.save_prediction("backprop", "n", 0.5, True)
    first.close()
    again = open_store(tmp_path / "kept", clock=clock, create=False)
    try:
        assert again.predictions("backprop")["n"]["value"] == 0.5
        again.save_prediction("backprop", "m", 0.25, False)  # an existing store stays writable
        assert set(again.predictions("backprop")) == {"n", "m"}
    finally:
        again.close()


def test_a_store_opened_without_create_does_not_recreate_a_database_deleted_meanwhile(tmp_path, clock):
    """Each new thread opens its own connection: with create=False that must not make a new empty file."""
    open_store(tmp_path, clock=clock).close()
    opened = open_store(tmp_path, clock=clock, create=False)
    try:
        for name in (DATABASE_NAME, DATABASE_NAME + "-wal", DATABASE_NAME + "-shm"):
            (tmp_path / name).unlink(missing_ok=True)
        errors: list[BaseException] = []

        def read() -> None:
            try:
                opened.predictions("backprop")
            except BaseException as error:  # collected and checked in the main thread
                errors.append(error)

        worker = threading.Thread(target=read)
        worker.start()
        worker.join(30)
        assert len(errors) == 1 and isinstance(errors[0], StoreError)
        assert errors[0].kind == "not-found"
        assert not (tmp_path / DATABASE_NAME).exists()
    finally:
        opened.close()
