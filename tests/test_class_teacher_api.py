"""The teacher's API on a real `chainrule serve` (SQLite, and PostgreSQL when the session has it): a hint
opened and a solution shown through the lesson API are kept for the teacher; the overview answers 304 to
its own ETag until something changes; one lesson's explanations side by side; a learner who opens /teacher
gets a page that says it is for teachers (HTML, not the API's JSON)."""

from __future__ import annotations

import pytest

from class_process import ClassServer, csrf_of

EXERCISE = "neuron-grads"
BASE = f"/api/lessons/backprop/exercises/{EXERCISE}"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])  # conftest's STORE_BACKENDS, module-scoped
def served(request, tmp_path_factory):
    database = request.getfixturevalue("postgres_cluster") if request.param == "postgresql" else None
    if database:
        from postgres_cluster import new_postgres_schema
        database = new_postgres_schema(database)
    server = ClassServer.start(tmp_path_factory.mktemp(f"teacher-api-{request.param}"), database)
    teacher = server.client()
    path = server.teacher_link.removeprefix(server.base)
    answer = teacher.post(path, data={"csrf": csrf_of(teacher.get(path).text), "password": "correct horse battery"})
    assert answer.status_code == 303, answer.text
    try:
        yield server, teacher, server.join("Ada")
    finally:
        server.stop()


def test_help_used_is_kept_and_the_overview_answers_304_until_it_changes(served):
    server, teacher, ada = served
    first = teacher.get("/api/class/overview")
    etag = first.headers["etag"]
    assert first.status_code == 200 and etag
    assert teacher.get("/api/class/overview", headers={"if-none-match": etag}).status_code == 304
    assert ada.get(f"{BASE}/hints/1").status_code == 200
    # Asked after a failing run (none here): locked, nothing shown, nothing kept; asked and confirmed: kept.
    assert ada.get(f"{BASE}/solution", params={"after_run": "true"}).json()["unlocked"] is False
    assert ada.get(f"{BASE}/solution", params={"confirm": "true"}).json()["unlocked"] is True
    changed = teacher.get("/api/class/overview", headers={"if-none-match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    row = next(entry for entry in changed.json()["roster"] if entry["name"] == "Ada")
    backprop = next(entry for entry in row["grid"] if entry["lesson_id"] == "backprop")
    assert backprop["help"][EXERCISE] == {"hints": 1, "solution_shown": True,
                                          "text": "1 hint opened, the model solution shown"}
    assert backprop["exercise_states"][EXERCISE] == "not-started"
    events = teacher.get(f"/api/class/learners/{row['id']}/timeline").json()["events"]
    assert [(event["kind"], event["number"]) for event in events] == [("hint", 1), ("solution", 0)]


def test_one_lessons_explanations_side_by_side_for_the_teacher_only(served):
    server, teacher, ada = served
    saved = ada.put("/api/lessons/backprop/explanation", json={"text": "<img src=x onerror=alert(1)>",
                                                                "ticked": ["seed-one"]},
                    headers={"x-csrf-token": ada.cookies["chainrule_csrf"], "origin": server.base})
    assert saved.status_code == 200, saved.text
    side = teacher.get("/api/class/lessons/backprop/explanations").json()
    mine = next(entry for entry in side["learners"] if entry["name"] == "Ada")
    assert mine["text"] == "<img src=x onerror=alert(1)>" and [i["id"] for i in mine["ticked"]] == ["seed-one"]
    assert teacher.get("/api/class/lessons/no-such-lesson/explanations").status_code == 404
    assert ada.get("/api/class/lessons/backprop/explanations").status_code == 403


def test_a_learner_who_opens_the_teachers_page_is_told_it_is_for_teachers(served):
    _, _, ada = served
    page = ada.get("/teacher")
    assert page.status_code == 403 and page.headers["content-type"].startswith("text/html")
    assert "This page is for teachers" in page.text and "Go to your lessons" in page.text
