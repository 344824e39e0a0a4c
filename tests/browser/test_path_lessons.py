"""The three lessons of the path taken end to end in a real Chromium, at desktop and phone widths, and a
teacher's lesson added with `chainrule lesson --lessons DIR`.

Predictions and quiz answers are typed from numbers worked out by hand here (math.tanh for the one
tanh), never read back from the page. Exercises are pasted from the reference solutions.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import URL_PATTERN, LessonServer, stop_lesson_server, wait_until_listening, free_port
from test_lesson_page import choose_language, reference, run_tests, set_editor_text

pytestmark = pytest.mark.timeout(400)

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "src" / "chainrule" / "lessons" / "data"

# Hand-worked predictions of each lesson's section 04.
PREDICTIONS = {
    "computational-graphs": {"p": -3.0, "n": -0.5, "o": math.tanh(-0.5), "oo": math.tanh(-0.5) ** 2,
                             "y": math.tanh(-0.5) ** 2 + math.tanh(-0.5)},
    "backprop": {"n": 0.8814, "o": 0.7071, "dn": 0.5, "db": 0.5, "dw1": 1.0, "dw2": 0.0},
    "gradient-descent-linear-regression": {"f": 2.0, "r": -1.0, "L": 1.0, "dr": -2.0, "dw": -4.0, "db": -2.0},
}
# Hand-worked keys of the numeric quiz questions (the choice questions are answered from quiz.json's index).
NUMERIC_ANSWERS = {
    "product-gradient": "6", "tanh-gradient": "0.51", "sum-of-uses": "8",
    "evaluate-graph": "8", "shared-value": "2", "count-values": "7",
    "one-step": "0.9", "point-gradient": "6", "mean-squared-error": "4.6667",
}
# Section 03: the output's value after the forward pass, by hand.
OUTPUT_VALUE = {"computational-graphs": ("out", "10"), "backprop": ("L", "-8"),
                "gradient-descent-linear-regression": ("L", "8.125")}
NEXT = {"computational-graphs": "/lessons/backprop", "backprop": "/lessons/gradient-descent-linear-regression",
        "gradient-descent-linear-regression": "/lessons/a-network-learns"}
SIZES = {"desktop": (1280, 900), "phone": (390, 844)}
LANGUAGES = ("python", "javascript", "typescript")
# Each reference solution is graded once, in the desktop run (every language); the phone run of the same
# lesson (collected right after it) starts from those runs, imported into its data folder, and grades one.
GRADED: dict[str, dict] = {}


def keep_graded(lesson_id: str, data_dir: Path) -> None:
    from chainrule.progress import open_store

    store = open_store(data_dir)
    try:
        exported = store.export_data()
    finally:
        store.close()
    GRADED[lesson_id] = {key: (value if key in ("format", "version", "exported_at", "code", "submissions")
                               or not isinstance(value, list) else []) for key, value in exported.items()}


def reuse_graded(lesson_id: str, data_dir: Path) -> bool:
    if lesson_id not in GRADED:
        return False
    from chainrule.progress import open_store

    store = open_store(data_dir)
    try:
        store.import_data(GRADED[lesson_id])
    finally:
        store.close()
    return True


def quiz_of(lesson_id: str) -> list[dict]:
    return json.loads((DATA / lesson_id / "quiz.json").read_text(encoding="utf-8"))["questions"]


def make_predictions(page, expected: dict[str, float]) -> None:
    predict = page.locator("#section-04")
    player = page.locator("#predict-player")
    made = 0
    while made < len(expected):
        form = predict.locator("form.prediction-form")
        if form.count() == 0:
            player.locator("button.next").click()
            continue
        key = form.get_attribute("data-key")
        form.locator("input").fill(f"{expected[key]:.4f}")
        form.locator("input").press("Enter")
        made += 1
        page.wait_for_function("k => document.querySelector('#section-04').dataset.predictionsMade === String(k)",
                               arg=made)
    for key in expected:
        item = predict.locator(f".prediction-list li[data-key='{key}']")
        assert "right" in item.get_attribute("class"), (key, item.text_content())


def answer_quiz(page, lesson_id: str, numeric_answers: dict[str, str] = NUMERIC_ANSWERS) -> None:
    quiz = page.locator("#section-06")
    for question in quiz_of(lesson_id):
        form = quiz.locator(f"form[data-question='{question['id']}']")
        if question["kind"] == "number":
            form.locator("input").fill(numeric_answers[question["id"]])
            form.locator("input").press("Enter")
        else:
            form.locator("label", has_text=question["options"][question["answer_index"]]).click()
            form.locator("button[type=submit]").click()
        page.wait_for_function(
            "q => document.querySelector(`#section-06 form[data-question='${q}']`).dataset.correct !== undefined",
            arg=question["id"])
        assert form.get_attribute("data-correct") == "true", form.text_content()
        assert "comes back in review" in form.locator(".feedback").text_content().lower()


def play_fit_plot(page) -> None:
    """Section 03 of the regression lesson: the too-large rate diverges, the right one settles."""
    plot = page.locator("#fit-plot")
    page.locator("#fit-run-large").check()
    assert plot.get_attribute("data-run") == "large" and plot.get_attribute("data-step") == "0"
    losses = []
    next_step = plot.locator("button[data-action='next']")
    while not next_step.is_disabled():
        next_step.click()
        caption = plot.locator(".fit-caption").text_content()
        losses.append(float(caption.rsplit("loss = ", 1)[1].rstrip(".")))
    assert len(losses) == 20 and losses[-1] > 100 * losses[0]  # divergence, step after step
    page.locator("#fit-run-right").check()
    # Play moves the line by itself (a few steps are enough to see it), Next takes it to the end.
    plot.locator("button[data-action='play']").click()
    page.wait_for_function("() => Number(document.querySelector('#fit-plot').dataset.step) >= 3", timeout=30_000)
    while not next_step.is_disabled():
        next_step.click()
    assert plot.get_attribute("data-step") == "40"
    caption = plot.locator(".fit-caption").text_content()
    assert "step 40 of 40" in caption and float(caption.rsplit("loss = ", 1)[1].rstrip(".")) < 0.05
    line = plot.locator("line.fit-line")
    assert line.get_attribute("x1") and line.get_attribute("y2")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("lesson_id", list(PREDICTIONS))
def test_a_lesson_end_to_end(open_page, server_factory, tmp_path: Path, screenshots_dir: Path, lesson_id: str,
                             size: str) -> None:
    reused = size == "phone" and reuse_graded(lesson_id, tmp_path / "data")
    server = server_factory(tmp_path / "data")
    width, height = SIZES[size]
    context, page, log = open_page(server, width=width, height=height, wait_until="commit")
    page.goto(f"{server.origin}/lessons/{lesson_id}")
    page.wait_for_selector("main[data-complete='true']", timeout=60_000)
    assert page.locator("#messages .message").count() == 0
    assert page.locator("section.lesson-section").count() == 8

    # 03: the animation plays to its end; the output has its value.
    player = page.locator("#see-it-work-player")
    while not player.locator("button.next").is_disabled():
        player.locator("button.next").click()
    label, value = OUTPUT_VALUE[lesson_id]
    assert player.locator(f"g.node[data-label='{label}'] .node-value").text_content() == value
    if lesson_id == "gradient-descent-linear-regression":
        play_fit_plot(page)

    # 04, 05, 06, 07.
    make_predictions(page, PREDICTIONS[lesson_id])
    exercises = page.locator("article.exercise").evaluate_all("nodes => nodes.map(n => n.dataset.exercise)")
    assert len(exercises) >= 2
    for number, exercise in enumerate(exercises):
        block = page.locator(f"article[data-exercise='{exercise}']")
        # One language per exercise, taking turns (every reference is graded in every language in process, by
        # tests/test_lessons_path.py and tests/test_grading.py): the page's grading of each language is what
        # this test shows.
        turn = LANGUAGES[number % 3]
        for language in (turn,) if size == "desktop" or (reused and number > 0) else ("typescript",):
            choose_language(page, exercise, language)
            if reused and number > 0:
                # Graded in the desktop run: the restored code and its passing run are shown here.
                assert block.get_attribute("data-language") == language
                page.wait_for_function("id => window.chainruleEditors[id].getText().length > 0", arg=exercise)
                assert page.evaluate("id => window.chainruleEditors[id].getText()", exercise) == reference(exercise, language)
                assert "your last run" in block.locator(".result-facts").text_content()
            else:
                set_editor_text(page, exercise, reference(exercise, language))
                run_tests(page, exercise)
            assert block.locator(".results").get_attribute("data-status") == "pass", block.text_content()
    if size == "desktop":
        keep_graded(lesson_id, tmp_path / "data")
    answer_quiz(page, lesson_id)
    page.locator("#explanation-text").fill("Each box waits for its inputs; the values are kept for later.")
    with page.expect_response(lambda r: r.url.endswith("/explanation") and r.request.method == "PUT") as saved:
        page.locator("#section-07 button[type=submit]").click()
    assert saved.value.status == 200

    # 08: the recap leads on to the next lesson.
    following = page.locator("#section-08 .next-lesson a")
    if NEXT[lesson_id]:
        assert following.get_attribute("href") == NEXT[lesson_id]
    else:
        assert following.count() == 0
    if size == "phone":
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
    page.locator("#section-03").screenshot(path=str(screenshots_dir / f"lesson-{lesson_id}-03-{size}.png"))

    # The path page shows the progress made in this lesson.
    page.goto(f"{server.origin}/")
    page.wait_for_selector("main[data-ready='true']")
    entry = page.locator(f".path-lesson[data-lesson='{lesson_id}']")
    progress = entry.locator(".lesson-progress").text_content()
    predictions, questions = len(PREDICTIONS[lesson_id]), len(quiz_of(lesson_id))
    assert f"{predictions} of {predictions} predictions made" in progress
    assert f"{len(exercises)} of {len(exercises)} exercises passed" in progress
    assert f"{questions} of {questions} questions answered" in progress and "explained back" in progress
    assert entry.locator(".lesson-progress-block").get_attribute("data-state") == "done"
    assert entry.locator("progress").get_attribute("value") == entry.locator("progress").get_attribute("max")
    others = [key for key in PREDICTIONS if key != lesson_id]
    for other in others:
        assert "not started yet" in page.locator(f".path-lesson[data-lesson='{other}'] .lesson-progress").text_content()
    assert log.outside(server.origin) == [] and log.page_errors == []


def start_with_lessons(data_dir: Path, lessons_dir: Path) -> LessonServer:
    """`chainrule lesson --lessons DIR`, the real server, waited for as conftest's start_lesson_server does."""
    command = [sys.executable, "-m", "chainrule", "lesson", "--no-browser", "--port", str(free_port()),
               "--data-dir", str(data_dir), "--lessons", str(lessons_dir)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO,
                               env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True)
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout:
            lines.append(line)
            if URL_PATTERN.search(line):
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(60)
    found = [URL_PATTERN.search(line).group(1) for line in lines if URL_PATTERN.search(line)]
    if not found:
        stop_lesson_server(process)
        raise RuntimeError("".join(lines))
    server = LessonServer(process=process, url=found[0], data_dir=data_dir, output=lines)
    wait_until_listening(server)
    return server


def test_a_scaffolded_lesson_joins_the_path_and_is_graded(open_page, tmp_path: Path) -> None:
    made = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "new", "vectors", "--title", "Vectors",
                           str(tmp_path / "mine")], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    server = start_with_lessons(tmp_path / "data", tmp_path / "mine")
    try:
        context, page, log = open_page(server, width=390, height=844, wait_until="commit")
        page.goto(f"{server.origin}/")
        page.wait_for_selector("main[data-ready='true']")
        ids = page.locator(".path-lesson").evaluate_all("nodes => nodes.map(n => n.dataset.lesson)")
        assert ids == ["slopes-and-the-chain-rule", "computational-graphs", "backprop", "gradient-descent-linear-regression",
                       "a-network-learns", "forward-and-reverse-mode", "vectors"]
        page.locator(".path-lesson[data-lesson='vectors'] .lesson-title a").click()
        page.wait_for_selector("main[data-complete='true']", timeout=60_000)
        assert page.locator("h1").text_content() == "Vectors"
        block = page.locator("article[data-exercise='vectors-gradients']")
        set_editor_text(page, "vectors-gradients", (tmp_path / "mine/vectors/exercises/1-gradients/starter.py").read_text())
        run_tests(page, "vectors-gradients")
        assert block.locator(".results").get_attribute("data-status") == "fail"
        set_editor_text(page, "vectors-gradients", (tmp_path / "mine/vectors/exercises/1-gradients/solution.py").read_text())
        run_tests(page, "vectors-gradients")
        assert block.locator(".results").get_attribute("data-status") == "pass", block.text_content()
        assert "Isolation" in block.locator(".results").text_content()
        assert log.page_errors == []
    finally:
        stop_lesson_server(server.process)
