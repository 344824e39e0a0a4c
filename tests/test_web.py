"""The lesson server's JSON API and pages, in process (FastAPI TestClient, real SQLite store, real grader)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from chainrule import lessons
from chainrule.web import create_app

TOKEN = "test-token-0123456789"
BASE = "http://127.0.0.1:8765"
AUTH = {"X-Chainrule-Token": TOKEN}


class Clock:
    """A clock the test moves by hand: the store's idea of now."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(tmp_path, clock):
    app = create_app(TOKEN, tmp_path / "data", port=8765, clock=clock)
    with TestClient(app, base_url=BASE) as test_client:
        test_client.headers.update(AUTH)
        yield test_client
    app.state.services.close()


# ---------------------------------------------------------------- content


def lesson_entry(client, lesson_id: str) -> dict:
    """One lesson's entry on the path, by id."""
    return next(entry for entry in client.get("/api/path").json()["lessons"] if entry["id"] == lesson_id)


def test_path_lists_lessons_with_progress(client):
    body = client.get("/api/path").json()
    assert [lesson["status"] for lesson in body["lessons"]] == ["available"] * 9
    written = body["lessons"][3]
    assert written["href"] == "/lessons/backprop"
    assert written["progress"] == {"predictions": 0, "exercises": 0, "quiz": 0, "explanation": False}
    assert written["started"] is False
    assert body["lessons"][0]["href"] == "/lessons/slopes-and-the-chain-rule" and body["lessons"][0]["progress"] is not None
    assert body["store_error"] is None


def test_lesson_content(client):
    response = client.get("/api/lessons/backprop")
    assert response.status_code == 200
    lesson = response.json()
    assert [s["slug"] for s in lesson["sections"]] == [
        "why", "key-parts", "see-it-work", "predict", "try-it", "check-yourself", "explain", "recap"]
    assert lesson["see_it_work"]["graph"] == "section03" and lesson["predict"]["graph"] == "neuron"
    assert len(lesson["quiz"]) == 5 and "answer" not in json.dumps(lesson["quiz"])
    assert lesson["path"]["href"] == "/"


def test_unknown_lesson_is_404_naming_the_lessons(client):
    response = client.get("/api/lessons/nope")
    assert response.status_code == 404
    assert response.json()["detail"] == ("unknown lesson 'nope': the lessons you can open are "
                                        "slopes-and-the-chain-rule, many-inputs-and-the-gradient, computational-graphs, backprop, gradient-descent-linear-regression, "
                                        "a-network-learns, softmax-and-cross-entropy, forward-and-reverse-mode, build-the-engine")


@pytest.mark.parametrize("graph, output_value, leaf_grads", [
    ("section03", -8.0, {"a": 6.0, "b": -4.0, "c": -2.0, "f": 4.0}),
    ("neuron", 0.7071067811865476, {"x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0, "b": 0.5}),
])
def test_trace_of_the_lesson_graphs(client, graph, output_value, leaf_grads):
    trace = client.get(f"/api/lessons/backprop/trace/{graph}").json()
    assert trace["schema"] == "chainrule.trace/1"
    nodes = {node["label"]: node for node in trace["nodes"]}
    out = next(node for node in trace["nodes"] if node["id"] == trace["output"])
    assert out["data"] == pytest.approx(output_value)
    for label, grad in leaf_grads.items():
        assert nodes[label]["grad"] == pytest.approx(grad, abs=1e-12)
    assert trace["backward"][0]["grad"] == 1.0


def test_unknown_graph_is_404_naming_the_graphs(client):
    response = client.get("/api/lessons/backprop/trace/mlp")
    assert response.status_code == 404
    assert "section03, neuron" in response.json()["detail"]


# ---------------------------------------------------------------- exercises and grading


def test_starter_code(client):
    for language in ("python", "javascript", "typescript"):
        body = client.get("/api/exercises/neuron-grads/starter", params={"language": language}).json()
        assert body["language"] == language and len(body["source"]) > 20
    assert "neuron_grads" in client.get("/api/exercises/neuron-grads/starter").json()["source"]


def test_starter_bad_input(client):
    response = client.get("/api/exercises/nope/starter", params={"language": "python"})
    assert response.status_code == 404 and "neuron-grads" in response.json()["detail"]
    response = client.get("/api/exercises/neuron-grads/starter", params={"language": "cobol"})
    assert response.status_code == 422
    assert "'python', 'javascript' or 'typescript'" in response.json()["detail"]


@pytest.mark.timeout(120)
def test_grade_stores_the_submission(client):
    from chainrule.grading import reference_source, starter_source

    solution = reference_source("neuron-grads", "python")
    result = client.post("/api/grade", json={"exercise": "neuron-grads", "language": "python", "source": solution})
    assert result.status_code == 200
    body = result.json()
    assert body["status"] == "pass" and body["saved"] is True and body["tests"]
    starter = starter_source("neuron-grads", "javascript")
    failing = client.post("/api/grade", json={"exercise": "neuron-grads", "language": "javascript", "source": starter})
    assert failing.json()["status"] in ("fail", "error")

    progress = client.get("/api/progress/backprop").json()
    assert progress["results"]["neuron-grads/python"]["status"] == "pass"
    assert progress["code"]["neuron-grads/python"] == solution
    assert progress["code"]["neuron-grads/javascript"] == starter
    assert lesson_entry(client, "backprop")["progress"]["exercises"] == 1


def test_grade_bad_input(client):
    response = client.post("/api/grade", json={"exercise": "nope", "language": "python", "source": "x"})
    assert response.status_code == 404
    response = client.post("/api/grade", json={"exercise": "neuron-grads", "language": "ruby", "source": "x"})
    assert response.status_code == 422 and "language" in response.json()["detail"]
    response = client.post("/api/grade", json={"exercise": "neuron-grads", "language": "python"})
    assert response.status_code == 422 and "source" in response.json()["detail"]
    response = client.post("/api/grade", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422


def test_save_code(client):
    body = {"exercise": "local-gradients", "language": "typescript", "source": "// mine\n"}
    assert client.put("/api/progress/code", json=body).json() == {"saved": True}
    assert client.get("/api/progress/backprop").json()["code"] == {"local-gradients/typescript": "// mine\n"}
    response = client.put("/api/progress/code", json=body | {"exercise": "nope"})
    assert response.status_code == 404


# ---------------------------------------------------------------- predictions, quiz, explanation


def test_predictions_checked_saved_and_counted(client):
    right = client.put("/api/progress/backprop/predictions/db", json={"value": 0.5}).json()
    assert right["correct"] is True and right["expected"] == 0.5
    assert "db = dn = 0.5" in right["reason"]
    wrong = client.put("/api/progress/backprop/predictions/n", json={"value": 1.0}).json()
    assert wrong["correct"] is False and wrong["expected"] == pytest.approx(0.881373587)
    saved = client.get("/api/progress/backprop").json()["predictions"]
    assert saved["db"]["correct"] is True and saved["n"]["value"] == 1.0 and saved["n"]["correct"] is False
    assert lesson_entry(client, "backprop")["progress"]["predictions"] == 2


def test_prediction_bad_input(client):
    response = client.put("/api/progress/backprop/predictions/dzz", json={"value": 1})
    assert response.status_code == 404 and "n, o, dn, db, dw2, dw1" in response.json()["detail"]
    response = client.put("/api/progress/backprop/predictions/n", json={"value": "abc"})
    assert response.status_code == 422 and "value" in response.json()["detail"]
    response = client.put("/api/progress/backprop/predictions/n", content=b'{"value": NaN}',
                          headers={"content-type": "application/json"})
    assert response.status_code == 422
    response = client.put("/api/progress/nope/predictions/n", json={"value": 1})
    assert response.status_code == 404


def test_quiz_answer_feedback_and_review_text(client):
    body = client.post("/api/lessons/backprop/quiz/product-gradient", json={"answer": " 6.0 "}).json()
    assert body["correct"] is True and body["expected"] == "6"
    assert body["review"]["text"].startswith("comes back in review in ")
    assert "-3 × (-2) = 6" in body["reason"]
    wrong = client.post("/api/lessons/backprop/quiz/addition-node", json={"answer": "1"}).json()
    assert wrong["correct"] is False and wrong["expected"] == "g to each of them, unchanged."
    assert wrong["review"]["text"].startswith("comes back in review in ")
    quiz = client.get("/api/progress/backprop").json()["quiz"]
    assert quiz["product-gradient"]["correct"] is True and quiz["addition-node"]["correct"] is False
    comma = client.post("/api/lessons/backprop/quiz/tanh-gradient", json={"answer": " 0,51 "}).json()
    assert comma["correct"] is True  # a decimal comma, as the page's form accepts it


def test_quiz_bad_input_is_not_recorded(client):
    response = client.post("/api/lessons/backprop/quiz/product-gradient", json={"answer": "six"})
    assert response.status_code == 422 and "not a number" in response.json()["detail"]
    assert "Type a number in digits" in response.json()["detail"]
    for junk in ("1,000.5", "0x6"):
        response = client.post("/api/lessons/backprop/quiz/product-gradient", json={"answer": junk})
        assert response.status_code == 422 and "not a number" in response.json()["detail"], junk
    response = client.post("/api/lessons/backprop/quiz/product-gradient", json={"answer": "1e999"})
    assert response.status_code == 422 and "1e999 is too large" in response.json()["detail"]  # its size
    response = client.post("/api/lessons/backprop/quiz/nope", json={"answer": "1"})
    assert response.status_code == 404 and "sum-of-uses" in response.json()["detail"]
    response = client.post("/api/lessons/backprop/quiz/product-gradient", json={"answer": "x" * 5000})
    assert response.status_code == 422
    assert client.get("/api/progress/backprop").json()["quiz"] == {}


def test_explanation_saved_with_ticked_ideas(client):
    body = {"text": "Start at 1, multiply by local derivatives, go in reverse.", "ticked": ["reverse-order", "seed-one"]}
    assert client.put("/api/lessons/backprop/explanation", json=body).json() == {"saved": True}
    saved = client.get("/api/progress/backprop").json()["explanation"]
    assert saved["text"] == body["text"] and saved["ticked"] == ["seed-one", "reverse-order"]
    response = client.put("/api/lessons/backprop/explanation", json={"text": "x", "ticked": ["magic"]})
    assert response.status_code == 422 and "one-sweep" in response.json()["detail"]


def test_review_due_answer_and_undo(client, clock):
    client.post("/api/lessons/backprop/quiz/sum-of-uses", json={"answer": "8"})
    nothing = client.get("/api/review/due").json()
    assert nothing["due"] == [] and datetime.fromisoformat(nothing["next_due"]) > clock.now  # says when
    clock.now += timedelta(days=60)
    due = client.get("/api/review/due").json()["due"]
    assert [(d["lesson_id"], d["question_id"]) for d in due] == [("backprop", "sum-of-uses")]
    item = due[0]
    assert item["kind"] == "number" and item["variant"]
    # A review asks with fresh numbers: two new shares, and a's gradient is their sum (by hand).
    first, second = (int(n) for n in re.findall(r"sends (-?\d+)", item["prompt"]))
    assert (first, second) != (3, 5)
    answer = {"answer": str(first + second), "variant": item["variant"]}
    answered = client.post("/api/review/backprop/sum-of-uses", json=answer).json()
    assert answered["correct"] is True and answered["review"]["text"].startswith("comes back in review in ")
    assert client.get("/api/review/due").json()["due"] == []
    undone = client.post("/api/review/undo").json()["undone"]
    assert undone["question_id"] == "sum-of-uses"
    assert len(client.get("/api/review/due").json()["due"]) == 1
    assert client.post("/api/review/backprop/nope", json={"answer": "8"}).status_code == 404
    assert client.post("/api/review/backprop/sum-of-uses", json={"answer": "eight"}).status_code == 422


def test_undo_with_nothing_to_undo(client):
    assert client.post("/api/review/undo").json() == {"undone": None}


# ---------------------------------------------------------------- pages and store failures


def test_pages_render_with_the_cookie(client):
    client.headers.pop("X-Chainrule-Token")
    client.cookies.set("chainrule_token", TOKEN)
    for address, marker in (("/", "Math for CS and ML"), ("/lessons/backprop", "backprop"), ("/review", "Review")):
        response = client.get(address)
        assert response.status_code == 200, address
        assert marker in response.text and response.headers["content-type"].startswith("text/html")
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    missing = client.get("/lessons/nope")
    assert missing.status_code == 404 and "backprop" in missing.text


def test_store_that_cannot_open_gives_503_but_pages_serve(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the data directory should be")
    app = create_app(TOKEN, blocker / "data")
    with TestClient(app, base_url=BASE, headers=AUTH) as broken:
        response = broken.get("/api/progress/backprop")
        assert response.status_code == 503
        detail = response.json()["detail"]
        assert "not-a-directory" in detail and "--data-dir" in detail
        assert broken.put("/api/progress/backprop/predictions/n", json={"value": 1}).status_code == 503
        assert broken.post("/api/lessons/backprop/quiz/sum-of-uses", json={"answer": "8"}).status_code == 503
        assert broken.get("/api/review/due").status_code == 503
        path = broken.get("/api/path").json()
        assert path["store_error"] == detail and path["lessons"][2]["progress"] is None
        assert broken.get("/api/lessons/backprop").status_code == 200
        broken.cookies.set("chainrule_token", TOKEN)
        assert broken.get("/lessons/backprop").status_code == 200


def test_openapi_schema_is_served_behind_the_token(client):
    schema = client.get("/api/openapi.json").json()
    assert "/api/grade" in schema["paths"] and "/api/review/undo" in schema["paths"]
    body = schema["paths"]["/api/progress/{lesson_id}/predictions/{key}"]["put"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith("/PredictionIn")
    starter = schema["paths"]["/api/exercises/{exercise_id}/starter"]["get"]["parameters"][0]["schema"]
    assert starter["examples"] == lessons.exercise_ids("backprop")  # written out, so the app imports no lesson
    client.headers.pop("X-Chainrule-Token")
    assert client.get("/api/openapi.json").status_code == 401
    assert client.get("/docs").status_code in (401, 404)  # no docs page that would load remote scripts


def test_lone_surrogates_are_refused_not_crashed_on(client):
    raw = {"content-type": "application/json"}
    response = client.post("/api/lessons/backprop/quiz/sum-of-uses", content=b'{"answer": "\\ud800"}', headers=raw)
    assert response.status_code == 422 and "answer" in response.json()["detail"]
    body = b'{"exercise": "neuron-grads", "language": "python", "source": "x = 1 # \\udfff"}'
    assert client.put("/api/progress/code", content=body, headers=raw).status_code == 422
    assert client.post("/api/grade", content=body, headers=raw).status_code == 422


def test_pages_fall_back_to_a_minimal_page_without_templates(client, tmp_path, monkeypatch):
    from chainrule.web import routes_pages

    monkeypatch.setattr(routes_pages, "TEMPLATES_DIR", tmp_path / "no-templates")
    client.cookies.set("chainrule_token", TOKEN)
    response = client.get("/lessons/backprop")
    assert response.status_code == 200
    assert 'data-lesson-id="backprop"' in response.text and "Backpropagation: the chain rule on a graph" in response.text


# ---------------------------------------------------------------- numbers: written and read by the server only


def test_the_server_sends_the_text_of_every_number_the_page_shows(client):
    """The page formats no number: each comes with its text, by the captions' one rule (written out by hand here)."""
    trace = client.get("/api/lessons/backprop/trace/neuron").json()
    by_hand = {"n": "0.8814", "o": "0.7071"}  # tanh(0.8814) = 0.7071 (the lesson spec's neuron)
    shown = {node["label"]: node["data_text"] for node in trace["nodes"]}
    assert {label: shown[label] for label in by_hand} == by_hand
    for node in trace["nodes"]:
        assert node["grad_text"] and node["data_text"]
    assert all("value_text" in step for step in trace["forward"])
    contributions = [c for step in trace["backward"] for c in step["contributions"]]
    assert contributions and all("contribution_text" in c and "grad_after_text" in c for c in contributions)
    plot = client.get("/api/lessons/gradient-descent-linear-regression").json()["see_it_work"]["plot"]
    assert plot["runs"][0]["frames"][0]["w_text"] == "0"


@pytest.mark.parametrize(("typed", "value"), [(" 0,5 ", 0.5), ("\u22121,5", -1.5), (".5", 0.5), ("5E-1", 0.5), (0.5, 0.5)])
def test_the_server_reads_what_the_learner_typed(client, typed, value):
    saved = client.put("/api/progress/backprop/predictions/dn", json={"value": typed}).json()
    assert saved["value"] == value and saved["value_text"] == format(value, "g")


@pytest.mark.parametrize("typed", ["", "six", "1,000.5", "1e999", "nan", True, None])
def test_what_is_not_a_number_is_said_at_its_field(client, typed):
    from chainrule.lessons.checking import NUMBER_HELP

    response = client.put("/api/progress/backprop/predictions/dn", json={"value": typed})
    assert response.status_code == 422 and response.json()["field"] == "value"
    if typed == "1e999":  # in digits, but too large: the message says so, not how to type digits
        assert "1e999 is too large to hold as a number" in response.json()["detail"]
    else:
        assert NUMBER_HELP in response.json()["detail"]
