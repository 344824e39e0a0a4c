"""The backpropagation lesson is a folder like any other: a copy of it, under another id, added the way
`chainrule lesson --lessons DIR` adds a folder, passes `lessons check` (its references graded in the
sandbox) and works through the API exactly like the original: content, hints, the model solution,
grading with the same cases, and review questions with fresh numbers."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from chainrule import lessons
from chainrule.grading import exercise_cases, reference_source
from chainrule.lessons.loader import DATA_DIR, remove_added_lessons
from chainrule.lessons.validate import add_checked_lesson_dirs, check_lesson_folder
from chainrule.web import create_app

pytestmark = pytest.mark.timeout(600)

ORIGINAL, COPY = "backprop", "backprop-copy"
TOKEN = "test-token-0123456789"


def copied_id(exercise_id: str) -> str:
    return f"copy-{exercise_id}"


@pytest.fixture(scope="module")
def copy_folder(tmp_path_factory):
    """DATA_DIR/backprop copied to DIR/backprop-copy, its lesson and exercise ids changed (exercise ids are
    global, as the progress store keys work by them), and added to the path."""
    root = tmp_path_factory.mktemp("lessons")
    folder = root / COPY
    shutil.copytree(DATA_DIR / ORIGINAL, folder)
    lesson = json.loads((folder / "lesson.json").read_text())
    lesson["id"] = COPY
    (folder / "lesson.json").write_text(json.dumps(lesson, indent=2))
    for manifest in folder.glob("exercises/*/exercise.json"):
        data = json.loads(manifest.read_text())
        old = data["id"]
        data["id"] = copied_id(old)
        manifest.write_text(json.dumps(data, indent=2))
        for code in manifest.parent.iterdir():
            if code.name.startswith(("starter.", "solution.")):
                code.write_text(code.read_text().replace(f"chainrule exercise: {old}", f"chainrule exercise: {copied_id(old)}"))
    assert add_checked_lesson_dirs([root]) == [COPY]
    yield folder
    remove_added_lessons()


@pytest.fixture(scope="module")
def clock():
    class Clock:
        now = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

        def __call__(self) -> datetime:
            return self.now

    return Clock()


@pytest.fixture(scope="module")
def client(copy_folder, clock, tmp_path_factory):
    app = create_app(TOKEN, tmp_path_factory.mktemp("data"), port=8765, clock=clock)
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        test_client.headers.update({"X-Chainrule-Token": TOKEN})
        yield test_client
    app.state.services.close()


def test_the_copy_passes_lessons_check_with_its_references_graded(copy_folder, grade_once):
    assert check_lesson_folder(copy_folder, grade_with=grade_once) == []


def test_the_copy_is_on_the_path_with_the_same_content(client):
    path = client.get("/api/path").json()
    assert [entry["id"] for entry in path["lessons"]][-1] == COPY
    original, copy = client.get(f"/api/lessons/{ORIGINAL}").json(), client.get(f"/api/lessons/{COPY}").json()
    for key in ("title", "sections", "see_it_work", "predict", "quiz", "explain", "solution_after"):
        assert copy[key] == original[key], key
    assert [copied_id(e["id"]) for e in original["exercises"]] == [e["id"] for e in copy["exercises"]]
    for mine, theirs in zip(copy["exercises"], original["exercises"]):
        assert {k: v for k, v in mine.items() if k != "id"} == {k: v for k, v in theirs.items() if k != "id"}
        assert mine["hint_count"] == 3


def test_the_copy_gives_the_same_hints(client):
    for exercise in lessons.exercise_ids(ORIGINAL):
        for number in (1, 2, 3):
            theirs = client.get(f"/api/lessons/{ORIGINAL}/exercises/{exercise}/hints/{number}").json()
            mine = client.get(f"/api/lessons/{COPY}/exercises/{copied_id(exercise)}/hints/{number}").json()
            assert mine == theirs
        missing = client.get(f"/api/lessons/{COPY}/exercises/{copied_id(exercise)}/hints/4")
        assert missing.status_code == 404 and "has 3 hints" in missing.text


def test_the_copy_grades_like_the_original_and_opens_its_solution(client, grade_once):
    for exercise in lessons.exercise_ids(ORIGINAL):
        mine = copied_id(exercise)
        source = reference_source(mine, "python")
        assert source.replace(mine, exercise) == reference_source(exercise, "python")
        graded = client.post("/api/grade", json={"exercise": mine, "language": "python", "source": source}).json()
        theirs = grade_once(exercise, "python", reference_source(exercise, "python"))
        assert graded["verdict"] == "passed" and graded["exercise"] == mine
        # The shown cases alike; the hidden ones are drawn from each run's own seed.
        assert [(t["name"], t["expected"]) for t in graded["tests"] if not t.get("hidden")] == [
            (t["name"], t["expected"]) for t in theirs["tests"] if not t.get("hidden")]
        assert graded["hidden"]["count"] == theirs["hidden"]["count"]
        assert [c.expected for c in exercise_cases(mine)] == [c.expected for c in exercise_cases(exercise)]
        locked = client.get(f"/api/lessons/{COPY}/exercises/{mine}/solution").json()
        assert locked["unlocked"] is False and locked["needed"] == 3
        opened = client.get(f"/api/lessons/{COPY}/exercises/{mine}/solution", params={"confirm": "true"}).json()
        assert opened["source"] == source


def test_the_copy_recognises_the_same_mistakes(client):
    """The diagnoses come with the folder: the local-gradients copy names the overwrite, not the symptom."""
    mine = copied_id("local-gradients")
    source = reference_source(mine, "python").replace("self.grad += ", "self.grad = ").replace("other.grad += ", "other.grad = ")
    graded = client.post("/api/grade", json={"exercise": mine, "language": "python", "source": source}).json()
    zero = next(t for t in graded["tests"] if t["name"] == "reuse: zero values")
    assert "accumulate with +=, not =" in zero["message"]


def test_the_copys_questions_come_back_for_review_with_fresh_numbers(client, clock):
    numeric = [q["id"] for q in client.get(f"/api/lessons/{COPY}").json()["quiz"] if q["kind"] == "number"]
    assert numeric
    for question in numeric:
        assert client.post(f"/api/lessons/{COPY}/quiz/{question}", json={"answer": "0"}).status_code == 200
    clock.now += timedelta(days=400)
    due = [d for d in client.get("/api/review/due").json()["due"] if d["lesson_id"] == COPY]
    assert sorted(d["question_id"] for d in due) == sorted(numeric)
    for item in due:
        lesson_prompt = lessons.quiz_question(COPY, item["question_id"])["prompt"]
        assert item["prompt"] != lesson_prompt  # new numbers
        # The original asks the same question with the same numbers for this variant, and knows its key.
        original = lessons.quiz_question(ORIGINAL, item["question_id"], item["variant"])
        assert original["prompt"] == item["prompt"]
        key = lessons.check_quiz_answer(ORIGINAL, item["question_id"], "0", item["variant"])["expected"]
        assert re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", key)
        answered = client.post(f"/api/review/{COPY}/{item['question_id']}",
                               json={"answer": key, "variant": item["variant"]}).json()
        assert answered["correct"] is True, (item, answered)
