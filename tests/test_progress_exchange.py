"""Export and import: an exact round trip, and a bad file is refused without touching anything."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone

import pytest

from chainrule.progress import StoreError, exchange, open_store
from postgres_cluster import new_postgres_schema

START = datetime(2026, 3, 1, 9, 30, tzinfo=timezone.utc)


class FakeClock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def fill_store(store, clock: FakeClock) -> None:
    """One of everything, including unicode, an undone review and a wrong answer."""
    store.save_prediction("backprop", "n", 0.8814, True)
    store.save_prediction("backprop", "dw2", 0.5, False)
    store.save_code("neuron-grads", "typescript", "export function neuronGrads() {}")
    store.record_help("backprop", "neuron-grads", "hint", 1)
    store.record_help("backprop", "neuron-grads", "solution")
    store.record_submission("neuron-grads", "python", "def neuron_grads(x, w, b, out, grad):\n    return grad  # é ∂",
                            {"status": "fail", "tests": [{"name": "t1", "expected": [1.0], "actual": [0.0]}]})
    clock.now += timedelta(minutes=3)
    store.record_submission("neuron-grads", "python", "fixed", {"status": "pass", "tests": []})
    store.answer_question("backprop", "product-gradient", "6", True)
    store.answer_question("backprop", "sum-of-uses", "15", False)
    store.save_explanation("backprop", "Start at 1 and go backwards — multiplying.", ["seed", "multiply"])
    clock.now += timedelta(days=3)
    store.review("backprop", "product-gradient", "6", True)
    store.review("backprop", "sum-of-uses", "8", True)
    store.undo_last_review()
    store.review("backprop", "sum-of-uses", "8", True)


def without_time(document: dict) -> dict:
    copied = dict(document)
    copied.pop("exported_at")
    return copied


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def filled(store_place, clock):
    store = open_store(**store_place("filled"), clock=clock, fuzzing=False)
    fill_store(store, clock)
    yield store
    store.close()


@pytest.fixture(scope="module")
def filled_exports(request, tmp_path_factory):
    """``filled_exports(backend)``: (the export of a store filled by fill_store, the clock's time after it), made
    once per backend for the tests that only read the export. A test's own ``filled`` store would give the same
    document: fill_store writes the same rows at the same times of a FakeClock that starts at START."""
    made: dict[str, tuple[dict, datetime]] = {}

    def export(backend: str) -> tuple[dict, datetime]:
        if backend not in made:
            place = ({"data_dir": tmp_path_factory.mktemp("filled")} if backend == "sqlite" else
                     {"database": new_postgres_schema(request.getfixturevalue("postgres_cluster"))})
            clock = FakeClock()
            store = open_store(**place, clock=clock, fuzzing=False)
            try:
                fill_store(store, clock)
                made[backend] = (store.export_data(), clock.now)
            finally:
                store.close()
        return made[backend]

    return export


def test_export_then_import_into_an_empty_store_round_trips_exactly(filled, store_place, clock):
    exported = filled.export_data()
    # Through real JSON text, as the CLI does.
    document = json.loads(json.dumps(exported))
    empty = open_store(**store_place("empty"), clock=clock, fuzzing=False)
    try:
        empty.import_data(document)
        again = empty.export_data()
        assert without_time(again) == without_time(exported)
        # And the imported store behaves the same: same due questions, same latest results.
        assert empty.due_reviews(now=START + timedelta(days=400)) == filled.due_reviews(now=START + timedelta(days=400))
        assert empty.latest_results() == filled.latest_results()
        assert empty.quiz_answers("backprop") == filled.quiz_answers("backprop")
    finally:
        empty.close()
    assert exported["format"] == "chainrule.progress" and exported["version"] == 2
    assert len(exported["submissions"]) == 2
    assert [(h["exercise_id"], h["kind"], h["number"]) for h in exported["help_used"]] == [
        ("neuron-grads", "hint", 1), ("neuron-grads", "solution", 0)]
    assert [log["undone"] for log in exported["review_logs"]] == [False, False, False, True, False]


def test_importing_the_same_file_twice_adds_nothing_the_second_time(filled, store_place, clock):
    document = filled.export_data()
    target = open_store(**store_place("target"), clock=clock, fuzzing=False)
    try:
        first = target.import_data(document)
        assert first["submissions"] == 2 and first["review_logs"] == 5 and first["help_used"] == 2
        second = target.import_data(document)
        assert set(second.values()) == {0}
        assert without_time(target.export_data()) == without_time(document)
    finally:
        target.close()


def _bad(path: list, value) -> callable:
    def mutate(document: dict) -> None:
        node = document
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    return mutate


def _drop(section: str) -> callable:
    return lambda document: document.pop(section)


def _extra_key(document: dict) -> None:
    document["predictions"][0]["confidence"] = 0.9


def _duplicate(document: dict) -> None:
    document["cards"].append(copy.deepcopy(document["cards"][0]))


def _last_record_bad(document: dict) -> None:
    document["review_logs"][-1]["rating"] = 9


@pytest.mark.parametrize(
    ("mutate", "says"),
    [
        (_bad(["version"], 99), "version: the file has version 99"),
        (_bad(["version"], "1"), "version: expected an integer"),
        (_bad(["format"], "anki"), "format: expected 'chainrule.progress'"),
        (_bad(["predictions", 0, "value"], "abc"), "predictions[0].value: expected a number, got a string"),
        (_bad(["predictions", 1, "correct"], 1), "predictions[1].correct: expected true or false"),
        (_bad(["submissions", 0, "result"], "pass"), "submissions[0].result: expected an object"),
        (_bad(["cards", 0, "card", "state"], 7), "cards[0].card: state must be 1"),
        (_bad(["quiz_answers", 0, "at"], "2026-03-01T09:30:00"), "has no time zone"),
        (_bad(["explanations", 0, "ticked"], [1, 2]), "explanations[0].ticked: expected a list of strings"),
        (_drop("cards"), "cards: missing"),
        (_drop("help_used"), "help_used: missing"),  # in version 2; a version-1 file has none (below)
        (_bad(["help_used", 0, "kind"], "peek"), "help_used[0].kind: expected 'hint' or 'solution'"),
        (_bad(["help_used", 1, "number"], -1), "help_used[1].number: expected a whole number from 0"),
        (_extra_key, "predictions[0]: unknown key 'confidence'"),
        (_duplicate, "a second record for backprop/product-gradient"),
        (_last_record_bad, "review_logs[4].rating: expected a rating 1 (Again) to 4 (Easy)"),
    ],
)
def test_a_bad_file_is_refused_with_the_reason_and_nothing_stored_changes(filled_exports, store_place, clock, mutate,
                                                                          says):
    exported, clock.now = filled_exports(store_place.backend)  # the clock as a store of its own left it, filled
    document = json.loads(json.dumps(exported))  # a copy of the module's export, to damage
    # The target already holds other progress, which must stay exactly as it was.
    target = open_store(**store_place("target"), clock=clock, fuzzing=False)
    try:
        target.save_prediction("backprop", "o", 0.7071, True)
        target.record_submission("local-grads", "javascript", "src", {"status": "pass"})
        before = without_time(target.export_data())
        mutate(document)
        with pytest.raises(StoreError) as caught:
            target.import_data(document)
        assert caught.value.kind == "invalid-file"
        assert says in str(caught.value)
        assert "Nothing was imported" in str(caught.value)
        assert without_time(target.export_data()) == before
    finally:
        target.close()


def test_a_version_1_file_from_before_help_was_kept_still_imports(filled, store_place, clock):
    document = json.loads(json.dumps(filled.export_data()))
    document["version"] = 1
    document.pop("help_used")
    target = open_store(**store_place("target"), clock=clock, fuzzing=False)
    try:
        added = target.import_data(document)
        assert added["submissions"] == 2 and added["help_used"] == 0
        again = target.export_data()
        assert again["version"] == 2 and again["help_used"] == []
        assert again["submissions"] == document["submissions"]
    finally:
        target.close()


@pytest.mark.parametrize("document", [[], "chainrule", None, 3])
def test_a_file_that_is_not_an_object_is_refused(tmp_path, clock, document):
    store = open_store(tmp_path, clock=clock, fuzzing=False)
    try:
        with pytest.raises(StoreError, match="must be a JSON object"):
            store.import_data(document)
    finally:
        store.close()


def test_a_failure_while_writing_is_completed_by_importing_the_same_file_again(filled, store_place, clock,
                                                                              monkeypatch):
    """Validation passed but the database fails part way through the batches: what was written stays, and
    importing the same file again adds the rest and nothing twice (the end is as after one clean import)."""
    document = filled.export_data()
    target = open_store(**store_place("target"), clock=clock, fuzzing=False)
    monkeypatch.setattr(exchange, "BATCH_ROWS", 2)
    real_write = type(target.database).write
    writes = []

    def fails_on_the_third_batch(database, work, *, lock=None):
        writes.append(lock)
        if len(writes) == 3:
            raise OSError("disk vanished")
        return real_write(database, work, lock=lock)

    try:
        monkeypatch.setattr(type(target.database), "write", fails_on_the_third_batch)
        with pytest.raises(OSError):
            target.import_data(document)
        monkeypatch.setattr(type(target.database), "write", real_write)
        target.import_data(document)
        assert without_time(target.export_data()) == without_time(document)
        assert sum(target.import_data(document).values()) == 0
    finally:
        target.close()


# ------------------------------------------------------------------ property-based

import tempfile  # noqa: E402  (kept next to the tests that use it)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
actions = st.lists(
    st.one_of(
        st.tuples(st.just("prediction"), names, names, st.floats(allow_nan=False, allow_infinity=False), st.booleans()),
        st.tuples(st.just("code"), names, names, texts),
        st.tuples(st.just("submit"), names, names, texts, st.sampled_from(["pass", "fail", "error"])),
        st.tuples(st.just("answer"), st.sampled_from(["q1", "q2", "q3"]), texts, st.booleans()),
        st.tuples(st.just("review"), st.sampled_from(["q1", "q2", "q3"]), texts, st.booleans()),
        st.tuples(st.just("undo")),
        st.tuples(st.just("explain"), names, texts, st.lists(names, max_size=3)),
        st.tuples(st.just("wait"), st.integers(min_value=1, max_value=90 * 24 * 60)),
    ),
    max_size=25,
)


def apply(store, clock: FakeClock, action: tuple) -> None:
    kind, *args = action
    if kind == "prediction":
        store.save_prediction(*args)
    elif kind == "code":
        store.save_code(*args)
    elif kind == "submit":
        exercise, language, source, status = args
        store.record_submission(exercise, language, source, {"status": status, "note": source})
    elif kind == "answer":
        store.answer_question("lesson", *args)
    elif kind == "review":
        store.review("lesson", *args)
    elif kind == "undo":
        store.undo_last_review()
    elif kind == "explain":
        store.save_explanation(*args)
    else:
        clock.now += timedelta(minutes=args[0])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(activity=actions)
def test_any_activity_round_trips_exactly(activity):
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as first_dir, tempfile.TemporaryDirectory() as second_dir:
        source = open_store(first_dir, clock=clock, fuzzing=False)
        target = open_store(second_dir, clock=clock, fuzzing=False)
        try:
            for action in activity:
                apply(source, clock, action)
            exported = json.loads(json.dumps(source.export_data()))
            target.import_data(exported)
            assert without_time(target.export_data()) == without_time(exported)
        finally:
            source.close()
            target.close()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _paths(node, prefix=()):
    """Every (container, key) position in a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield prefix + (index,)
            yield from _paths(value, prefix + (index,))


@pytest.fixture(scope="module")
def valid_document(tmp_path_factory):
    clock = FakeClock()
    store = open_store(tmp_path_factory.mktemp("valid"), clock=clock, fuzzing=False)
    fill_store(store, clock)
    document = json.loads(json.dumps(store.export_data()))
    store.close()
    return document


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_damage_to_a_valid_file_is_imported_whole_or_refused_whole(valid_document, data):
    """Replace one value anywhere in a valid export by random JSON: import either succeeds, or
    raises StoreError and leaves the store exactly as it was. Never another exception."""
    document = copy.deepcopy(valid_document)
    positions = list(_paths(document))
    position = data.draw(st.sampled_from(positions))
    node = document
    for step in position[:-1]:
        node = node[step]
    node[position[-1]] = data.draw(json_values)
    with tempfile.TemporaryDirectory() as directory:
        store = open_store(directory, clock=FakeClock(), fuzzing=False)
        try:
            store.save_prediction("other", "kept", 1.5, True)
            before = without_time(store.export_data())
            try:
                store.import_data(document)
            except StoreError as error:
                assert error.kind == "invalid-file"
                assert without_time(store.export_data()) == before
            else:  # still a valid file: imported, and what was there before is still there
                after = store.export_data()
                assert ("other", "kept") in {(row["lesson_id"], row["key"]) for row in after["predictions"]}
        finally:
            store.close()
