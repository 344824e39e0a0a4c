"""Named mistakes (issue 42, item 12): a wrong prediction or quiz answer that a known slip gives gets a hint
aimed at that slip, a wrong option says why it is wrong, and `lessons check` refuses a mistake that names
no mistake (tests/test_lessons_claims.py runs `lessons check` on every built-in lesson, these included).

The slips' numbers here are worked out by hand from the neuron's numbers (math.tanh, never the engine): a
hint is matched only when the engine computed the same number from the rule the lesson folder states.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from chainrule.lessons.checking import check_prediction, check_quiz_answer
from chainrule.lessons.fresh import draw_numbers, engine_key
from chainrule.lessons.loader import DATA_DIR, builtin_lesson_ids, lesson_data
from chainrule.lessons.mistakes import GENERAL_HINT
from chainrule.web import create_app

REPO = Path(__file__).resolve().parents[1]

# The neuron of the backprop lesson's section 04, by hand.
X1, W1, X2, W2, B = 2.0, -3.0, 0.0, 1.0, 6.8813735870195432
N = X1 * W1 + X2 * W2 + B
OUT = math.tanh(N)  # o
DN = 1 - OUT * OUT

# (prediction, the slip's number by hand, the mistake's name in lesson.json)
SLIPS = [
    ("n", X1 * W1 + X2 * W2, "left out the bias"),
    ("n", -X1 * W1 + X2 * W2 + B, "lost the minus sign of w1"),
    ("o", N, "skipped tanh"),
    ("dn", 1.0, "forgot the local gradient"),
    ("dn", 1 - N * N, "used n in the slope instead of o"),
    ("dn", 1 - OUT, "forgot to square o"),
    ("db", DN * B, "multiplied by b's value"),
    ("db", 1.0, "gave only the local slope"),
    ("dw2", W2 * DN, "multiplied by w2 itself"),
    ("dw1", W1 * DN, "multiplied by w1 itself"),
    ("dw1", X1, "forgot the incoming gradient"),
]


@pytest.mark.parametrize(("key", "slip", "name"), SLIPS, ids=[f"{k}-{n}" for k, _, n in SLIPS])
def test_each_backprop_prediction_slip_gets_its_own_hint(key: str, slip: float, name: str) -> None:
    checked = check_prediction("backprop", key, round(slip, 4))
    assert checked["correct"] is False
    assert checked["mistake"] == name
    step = next(s for s in lesson_data("backprop")["predict"]["steps"] if s["key"] == key)
    assert checked["hint"] != (step.get("hint") or GENERAL_HINT) and "{{" not in checked["hint"]


def test_a_wrong_prediction_matching_no_slip_gets_the_general_hint_and_a_right_one_none() -> None:
    checked = check_prediction("backprop", "dn", 0.9)
    assert checked["mistake"] is None and "1 - o^2" in checked["hint"] and "0.7071" in checked["hint"]
    right = check_prediction("backprop", "dn", round(DN, 4))
    assert right["correct"] is True and "hint" not in right


def test_every_wrong_option_of_every_quiz_says_why_it_is_wrong() -> None:
    seen = 0
    for lesson_id in builtin_lesson_ids():
        for question in lesson_data(lesson_id)["quiz"]:
            if question["kind"] != "choice":
                continue
            for index, option in enumerate(question["options"]):
                checked = check_quiz_answer(lesson_id, question["id"], option)
                if index == question["answer_index"]:
                    assert checked["correct"] is True and "hint" not in checked
                else:
                    assert checked["hint"] == question["why_wrong"][index] and checked["hint"] != GENERAL_HINT
                    seen += 1
    assert seen == 51  # 17 choice questions, 3 wrong options each


def test_a_numeric_questions_slips_follow_its_fresh_numbers() -> None:
    """product-gradient: the node sends a the slope b times the upstream gradient. Its slips, for the
    lesson's numbers and for a review's fresh ones, worked out by hand from the numbers shown."""
    question = next(q for q in lesson_data("backprop")["quiz"] if q["id"] == "product-gradient")

    def slips(a: float, b: float, up: float) -> dict[str, float]:
        return {"forgot the gradient that came back": b, "used a's own value": a * up, "lost a minus sign": -b * up}

    for slip, value in slips(2, -3, -2).items():
        assert check_quiz_answer("backprop", "product-gradient", str(value))["mistake"] == slip
    matched = 0
    for index in range(20):
        variant = f"{index:x}"
        drawn = draw_numbers(question, variant)
        numbers = question["given"] | drawn
        key = numbers["b"] * numbers["upstream"]
        assert engine_key(question, drawn) == pytest.approx(key)
        earlier: list[float] = []  # the slips listed before: an answer matching two gets the first's hint
        for slip, value in slips(numbers["a"], numbers["b"], numbers["upstream"]).items():
            if abs(value - key) <= 0.02:
                continue  # these numbers make the slip harmless: its answer is right
            if all(abs(value - other) > 0.02 for other in earlier):
                checked = check_quiz_answer("backprop", "product-gradient", str(value), variant)
                assert checked["correct"] is False and checked["mistake"] == slip, (numbers, slip)
                matched += 1
            earlier.append(value)
    assert matched >= 40


# ---------------------------------------------------------------- the second try, through the API

TOKEN = "test-token-0123456789"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(TOKEN, tmp_path_factory.mktemp("data"), port=8765)
    test_client = TestClient(app, base_url="http://127.0.0.1:8765")
    test_client.headers.update({"X-Chainrule-Token": TOKEN})
    with test_client:
        yield test_client
    app.state.services.close()


def test_a_right_second_try_is_practice_and_the_wrong_first_try_stays_the_record(client) -> None:
    url = "/api/progress/backprop/predictions/dn"
    first = client.put(url, json={"value": "1"}).json()
    assert (first["correct"], first["mistake"], first["practice"]) == (False, "forgot the local gradient", False)
    second = client.put(url, json={"value": str(round(DN, 4)), "second_try": True}).json()
    assert (second["correct"], second["practice"]) == (True, True)
    kept = client.get("/api/progress/backprop").json()["predictions"]["dn"]
    assert kept["correct"] is False and kept["value"] == 1.0
    # A second try with no first one saved is saved: the flag cannot skip the record.
    alone = client.put("/api/progress/backprop/predictions/db", json={"value": "3", "second_try": True}).json()
    assert alone["practice"] is False
    assert client.get("/api/progress/backprop").json()["predictions"]["db"]["value"] == 3.0


def test_a_wrong_first_quiz_answer_rates_the_card_again_and_its_hint_stays_on_reload(client) -> None:
    url = "/api/lessons/backprop/quiz/sum-of-uses"
    first = client.post(url, json={"answer": "5"}).json()
    assert (first["correct"], first["mistake"], first["practice"]) == (False, "kept only the last share", False)
    assert first["aimed"] is True  # the hint speaks to this answer (chainrule review says it with the answer)
    assert check_quiz_answer("backprop", "sum-of-uses", "123456")["aimed"] is False  # no slip gives that
    retry = client.post(url, json={"answer": "8"}).json()
    assert (retry["correct"], retry["practice"]) == (True, True)
    log = client.app.state.services.store().review_log("backprop", "sum-of-uses")
    assert [(e["kind"], e["correct"], e["rating"]) for e in log] == [("quiz", False, 1)]  # 1: Again, once
    wrong = client.post("/api/lessons/backprop/quiz/addition-node", json={"answer": "a"}).json()
    shown = client.get("/api/progress/backprop").json()["quiz"]["addition-node"]
    assert shown["hint"] == wrong["hint"] and shown["hint"].startswith("Splitting")


# ---------------------------------------------------------------- lessons check


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "backprop"
    shutil.copytree(DATA_DIR / "backprop", folder)
    return folder


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def test_lessons_check_refuses_mistakes_that_name_no_mistake(tmp_path: Path) -> None:
    folder = _copy(tmp_path)

    def bad_predictions(data) -> None:
        dn = data["predict"]["steps"][2]
        dn["mistakes"] += [
            {"name": "squared it right", "rule": "1 - o**2", "values": {"o": "o.data"}, "hint": "Right after all."},
            {"name": "the seed again", "rule": "one", "values": {"one": "o.grad"}, "hint": "The same number."},
            {"name": "unbound", "rule": "q * 2", "values": {}, "hint": "No number for q."},
            {"name": "no such box", "rule": "z", "values": {"z": "zz.grad"}, "hint": "{{neuron.zz.data}}"},
        ]

    def bad_quiz(data) -> None:
        questions = {q["id"]: q for q in data["questions"]}
        questions["addition-node"]["why_wrong"][1] = "Explains the right one."
        questions["reverse-order"]["why_wrong"] = ["Only one."]
        questions["product-gradient"]["mistakes"].append({"name": "the key", "rule": "b * upstream", "hint": "h"})

    _edit(folder / "lesson.json", bad_predictions)
    _edit(folder / "quiz.json", bad_quiz)
    # In a process of its own: checking a copy registers its exercises, which would take the built-in ids here.
    run = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "check", "--no-grading", str(folder)],
                         capture_output=True, text=True, cwd=REPO, timeout=240)
    assert run.returncode != 0
    problems = run.stdout + run.stderr
    assert "mistake 'squared it right': its rule gives 0.5, the right answer (0.5)" in problems
    assert "mistakes 'forgot the local gradient' and 'the seed again' both give 1" in problems
    assert "mistake 'unbound': the rule 'q * 2' uses q, which it has no number for" in problems
    assert "'z' is bound to 'zz.grad', which is not \"label.data\" or \"label.grad\"" in problems
    assert "the placeholder {{neuron.zz.data}} does not resolve" in problems
    assert "question 'addition-node': why_wrong[1] explains the right answer" in problems
    assert "question 'reverse-order': why_wrong must be a list as long as options (4)" in problems
    assert "mistake 'the key': its rule gives 6, the right answer (6)" in problems
    # Each refusal names its file and the line of the item (the copy is written with indent=2).
    assert f"{Path('backprop') / 'quiz.json'}:" in problems and f"{Path('backprop') / 'lesson.json'}:" in problems
