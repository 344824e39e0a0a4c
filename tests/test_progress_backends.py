"""One store, two backends: learners kept apart in one database, an old SQLite store upgraded in place,
PostgreSQL's own failures said plainly. (The store's behaviour on both backends: test_progress_store.py.)"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

import pytest

from chainrule.progress import DATABASE_NAME, SCHEMA_VERSION, StoreError, open_store
from chainrule.progress.connection import redacted_url

START = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)


def fixed_clock() -> datetime:
    return START


def fill(store) -> None:
    store.save_prediction("backprop", "n", 0.25, True)
    store.save_code("neuron-grads", "python", "mine")
    store.record_submission("neuron-grads", "python", "mine", {"status": "pass"})
    store.answer_question("backprop", "q1", "6", True)
    store.save_explanation("backprop", "my words", ["seed"])


def test_two_learners_in_one_database_never_see_each_others_rows(store_place):
    store = open_store(**store_place(), clock=fixed_clock, fuzzing=False)
    try:
        ada, bea = store.for_learner(1), store.for_learner(2)
        fill(ada)
        assert bea.predictions("backprop") == {}
        assert bea.latest_code() == {} and bea.latest_results() == {}
        assert bea.quiz_answers("backprop") == {} and bea.explanation("backprop") is None
        assert bea.due_reviews(datetime(2030, 1, 1, tzinfo=timezone.utc)) == []
        assert bea.submission_count() == 0 and bea.failed_runs("neuron-grads") == 0
        assert bea.work().passed == set() and ada.work().passed != set()
        exported = bea.export_data()
        assert all(exported[section] == [] for section in ("predictions", "code", "submissions", "cards"))
        # bea's answer does not rate ada's card, and ada's export is hers alone.
        bea.answer_question("backprop", "q1", "5", False)
        assert ada.quiz_answers("backprop")["q1"]["answer"] == "6"
        assert [entry["answer"] for entry in ada.export_data()["quiz_answers"]] == ["6"]
        assert store.predictions("backprop") == {}  # the personal learner (0) is a third person
    finally:
        store.close()


def test_a_learners_export_imports_into_another_learner_of_another_database(store_place):
    source = open_store(**store_place("personal"), clock=fixed_clock, fuzzing=False)
    target = open_store(**store_place("class"), clock=fixed_clock, fuzzing=False)
    try:
        fill(source)
        document = source.export_data()
        account = target.for_learner(7)
        assert account.import_data(document)["submissions"] == 1
        assert account.export_data() == document
        assert target.for_learner(8).export_data()["submissions"] == []
    finally:
        source.close()
        target.close()


def test_a_store_made_before_class_mode_is_upgraded_with_its_data_as_the_personal_learners(tmp_path):
    """A version-1 file (the schema every earlier chainrule wrote) keeps every row after the upgrade."""
    from chainrule.progress import schema
    from chainrule.progress.connection import Connection

    path = tmp_path / DATABASE_NAME
    raw = sqlite3.connect(str(path))
    schema.MIGRATIONS[0](Connection(raw, "sqlite"))
    raw.execute("PRAGMA user_version = 1")
    raw.execute("INSERT INTO predictions VALUES ('backprop', 'n', 0.5, 1, '2026-01-01T00:00:00+00:00')")
    raw.execute(
        "INSERT INTO submissions (exercise_id, language, source, result, status, at) "
        "VALUES ('neuron-grads', 'python', 'old', '{\"status\": \"pass\"}', 'pass', '2026-01-01T00:00:00+00:00')"
    )
    raw.commit()
    raw.close()

    store = open_store(tmp_path, clock=fixed_clock, fuzzing=False)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.predictions("backprop")["n"]["value"] == 0.5
        assert store.latest_results() == {"neuron-grads/python": {"status": "pass"}}
        new_id = store.record_submission("neuron-grads", "python", "new", {"status": "fail"})
        assert new_id == 2  # ids continue after the copied rows
        assert store.for_learner(1).latest_results() == {}
    finally:
        store.close()


def test_postgresql_records_the_version_and_refuses_a_newer_schema(postgres_url):
    store = open_store(database=postgres_url)
    store.close()
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM chainrule_schema").fetchone()[0] == SCHEMA_VERSION
        conn.execute("UPDATE chainrule_schema SET version = version + 5")
    with pytest.raises(StoreError) as caught:
        open_store(database=postgres_url)
    assert caught.value.kind == "newer-version"
    assert "Upgrade chainrule" in str(caught.value)


def test_an_unreachable_postgresql_is_a_store_error_that_hides_the_password(tmp_path):
    pytest.importorskip("psycopg")
    url = f"postgresql://teacher:s3cret@/classdb?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError) as caught:
        open_store(database=url)
    assert caught.value.kind == "cannot-open"
    assert "s3cret" not in str(caught.value)
    assert "cannot be reached" in str(caught.value)
    assert redacted_url(url) in str(caught.value)


def test_a_url_that_is_not_postgresql_is_refused_with_the_form_to_use():
    with pytest.raises(StoreError, match="postgresql://USER@HOST/DATABASE"):
        open_store(database="mysql://somewhere/db")


def test_two_tabs_answering_at_once_rate_the_question_once(store_place):
    """answer_question(first_only=True) from eight threads: one rating, eight answers kept."""
    import threading

    store = open_store(**store_place(), clock=fixed_clock, fuzzing=False)
    try:
        learner = store.for_learner(3)
        start = threading.Barrier(8)
        results: list[dict] = []
        errors: list[BaseException] = []

        def answer() -> None:
            try:
                start.wait()
                results.append(learner.answer_question("backprop", "q1", "6", True, first_only=True))
            except BaseException as error:  # checked below
                errors.append(error)

        threads = [threading.Thread(target=answer) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert sum(result["rated"] for result in results) == 1
        assert len(learner.review_log("backprop", "q1")) == 1
        assert learner.quiz_answers("backprop")["q1"]["attempts"] == 8
    finally:
        store.close()


def _open_in_process(kwargs: dict, results) -> None:
    try:
        store = open_store(**kwargs)
        results.put(store.schema_version())
        store.close()
    except BaseException as error:  # reported to the parent
        results.put(repr(error))


def test_processes_opening_a_new_database_at_once_migrate_it_once(store_place):
    import multiprocessing

    context = multiprocessing.get_context("fork")
    results = context.Queue()
    children = [context.Process(target=_open_in_process, args=(store_place(), results)) for _ in range(4)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    assert [results.get(timeout=5) for _ in children] == [SCHEMA_VERSION] * 4
