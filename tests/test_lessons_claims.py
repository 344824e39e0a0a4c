"""Every statement of a lesson true and checked (issue 42, items 1-5): claims.json checked by `chainrule lessons
check`, fresh numbers that never land on a kink, constants that are not inputs, and the small slips of the
Slopes and forward-mode lessons.

Expected numbers come from hand derivations or from the formula written independently of the lesson's graph
(said at each test), never from the lesson's own output.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chainrule.lessons.fresh import KINKS, TIES, draw_numbers, engine_key, kinks_hit
from chainrule.lessons.graphs import explore_graph, graph_trace
from chainrule.lessons.loader import DATA_DIR, lesson_plots
from chainrule.lessons.validate import check_lesson_folder

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[1]


def lessons_check(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chainrule", "lessons", "check", "--no-grading", str(folder)],
                          capture_output=True, text=True, cwd=REPO, timeout=240)


def copied(tmp_path: Path, lesson_id: str) -> Path:
    """A copy of a built-in lesson; its exercises renamed, since an exercise id is taken once."""
    folder = tmp_path / lesson_id
    shutil.copytree(DATA_DIR / lesson_id, folder)
    for manifest in folder.glob("exercises/*/exercise.json"):
        exercise = json.loads(manifest.read_text())
        manifest.write_text(json.dumps(exercise | {"id": exercise["id"][:30] + "-copy"}))
    return folder


def test_lessons_check_passes_on_every_built_in_lesson_with_its_claims() -> None:
    run = lessons_check(DATA_DIR)
    assert run.returncode == 0, run.stdout + run.stderr
    with_claims = sorted(p.parent.name for p in DATA_DIR.glob("*/claims.json"))
    assert with_claims == ["a-network-learns", "build-the-engine", "forward-and-reverse-mode", "gradient-descent-linear-regression",
                           "many-inputs-and-the-gradient", "slopes-and-the-chain-rule", "softmax-and-cross-entropy"]
    for name in with_claims:
        assert f"lesson {name}: ok" in run.stdout


def test_the_old_dead_network_sentence_fails_with_its_sentence_and_the_engines_count(tmp_path: Path) -> None:
    """Item 1 as it was: "every hidden neuron's relu outputs 0 for every point", claimed for the first layer.
    Rerunning train_run (seed 1, rate 5, 20 steps) by hand, first-layer neurons 0 and 7 still fire: 2 of 8."""
    folder = copied(tmp_path, "a-network-learns")
    section = folder / "sections" / "03-see-it-work.md"
    section.write_text(section.read_text() + "\nAfter the large steps every hidden neuron's relu outputs 0 for every point.\n")
    claims = json.loads((folder / "claims.json").read_text())
    claims["claims"].append({
        "id": "old-every-hidden-neuron-dead", "file": "sections/03-see-it-work.md",
        "sentence": "every hidden neuron's relu outputs 0 for every point",
        "value": {"check": "relu_firing", "run": "large", "layer": 1}, "expect": 0})
    (folder / "claims.json").write_text(json.dumps(claims))
    run = lessons_check(folder)
    assert run.returncode == 1
    problem = next(line for line in run.stdout.splitlines() if "old-every-hidden-neuron-dead" in line)
    assert "03-see-it-work.md:" in problem
    assert "every hidden neuron's relu outputs 0 for every point" in problem
    assert "the engine gives 2.0" in problem and "expects a number equal to 0.0" in problem
    assert "lesson a-network-learns: 1 problem" in run.stdout


def test_a_claim_whose_sentence_is_gone_or_whose_number_is_wrong_fails(tmp_path: Path) -> None:
    folder = copied(tmp_path, "forward-and-reverse-mode")
    claims = json.loads((folder / "claims.json").read_text())
    claims["claims"] += [
        # y = x tanh(x): y'' = 2 (1 - tanh^2 x) - 2 x tanh(x) (1 - tanh^2 x), 1.2095 at 0.5 (by hand), not 1.
        {"id": "wrong-second-derivative", "file": "sections/04-predict.md", "sentence": "the second derivative",
         "value": {"number": "dual.x.grad"}, "expect": 1, "tolerance": 0.01},
        {"id": "sentence-gone", "file": "sections/04-predict.md", "sentence": "reached without ever going backward",
         "value": {"number": "dual.y'.data"}, "expect": 0.8553, "tolerance": 0.001},
        {"id": "no-such-check", "file": "sections/04-predict.md", "sentence": "the second derivative",
         "value": {"check": "how_nice"}, "expect": 1},
    ]
    (folder / "claims.json").write_text(json.dumps(claims))
    problems = check_lesson_folder(folder, grade=False)
    assert len(problems) == 3, problems
    wrong, gone, unknown = problems
    assert "claim 'wrong-second-derivative' is false" in wrong and "the engine gives 1.209464475" in wrong
    assert "is not in sections/04-predict.md" in gone
    assert "no check 'how_nice'" in unknown and "relu_firing" in unknown
    # The lesson's own claim is the independent formula: y'' by hand at 0.5.
    t = math.tanh(0.5)
    assert 2 * (1 - t * t) - 2 * 0.5 * t * (1 - t * t) == pytest.approx(1.2094644752, abs=1e-9)


def kink_question() -> dict:
    # relu(k*x) asked at a grid whose every x is the kink: no redraw can get off it.
    return {"id": "slope-at-kink", "kind": "number", "given": {"x": 1, "k": 2},
            "prompt": "What is d/dx of relu({{k}} × x) at x = {{x}}?",
            "compute": {"expression": "relu(k*x)", "wrt": "x"}, "answer": 2,
            "reason": "Where k × x is above 0 the slope is k: {{answer}}.",
            "fresh": {"draw": {"x": {"from": 0, "to": 0, "step": 1}, "k": {"from": 1, "to": 4, "step": 1}}}}


def test_a_question_whose_fresh_numbers_land_on_a_kink_fails_lessons_check(tmp_path: Path) -> None:
    folder = copied(tmp_path, "a-network-learns")
    quiz = json.loads((folder / "quiz.json").read_text())
    quiz["questions"].append(kink_question())
    (folder / "quiz.json").write_text(json.dumps(quiz, indent=2))
    run = lessons_check(folder)
    assert run.returncode == 1
    problem = next(line for line in run.stdout.splitlines() if "slope-at-kink" in line)
    assert "x = 0" in problem and "land on a kink (relu at its input 0)" in problem
    assert "lesson a-network-learns: 1 problem" in run.stdout


def hinge_gradient() -> dict:
    quiz = json.loads((DATA_DIR / "a-network-learns" / "quiz.json").read_text())
    return next(q for q in quiz["questions"] if q["id"] == "hinge-gradient")


def test_fresh_hinge_gradients_never_land_on_the_corner() -> None:
    """Item 3: the margin y (w x + r) is exactly 1 in about 1 of 14 draws of the grid; the generator draws
    again there, for every question (the rule is in draw_numbers, not in this question)."""
    question = hinge_gradient()
    for index in range(540):
        numbers = draw_numbers(question, f"variant-{index}")
        margin = numbers["y"] * (numbers["w"] * numbers["x"] + numbers["r"])
        assert margin != 1, numbers  # the corner of max(0, 1 - margin)
        # Off the corner the engine's key is the formula the question teaches: -y x, or 0 past the corner.
        assert engine_key(question, numbers) == (-numbers["y"] * numbers["x"] if margin < 1 else 0)
    # The corner is reachable from the grid at all (so the test above can fail): y = 1, w = 1, x = 1, r = 0.
    assert kinks_hit(question, {"y": 1, "w": 1, "x": 1, "r": 0}) == ["relu at its input 0"]
    assert set(KINKS) == {"relu", "abs"}


def larger_of_two() -> dict:
    """d/da of max(a, b): 1 where a is the larger, 0 where b is; at a tie the engine splits it (0.5), which is
    neither. a and b drawn from 1..3 tie in 3 of 9 draws."""
    return {"id": "larger-of-two", "kind": "number", "given": {"a": 3, "b": 1},
            "prompt": "m = max(a, b) with a = {{a}} and b = {{b}}. What is dm/da?", "answer": 1,
            "reason": "The gradient goes to the larger input: {{answer}}.",
            "fresh": {"draw": {"a": {"from": 1, "to": 3, "step": 1}, "b": {"from": 1, "to": 3, "step": 1}},
                      "graph": {"leaves": [["a", "a"], ["b", "b"]], "nodes": [["m", "maximum", "a", "b"]], "output": "m"},
                      "answer": {"node": "a", "field": "grad"}}}


def test_fresh_numbers_never_land_on_a_tie_of_max_or_min() -> None:
    """Item 3's rule for the ops whose corner is a tie of their two inputs (a lesson graph may use any op)."""
    question = larger_of_two()
    assert set(TIES) == {"maximum", "minimum"}
    assert kinks_hit(question, {"a": 2, "b": 2}) == ["maximum(a, b) at a tie, both 2"]
    assert kinks_hit(question, {"a": 2, "b": 3}) == []
    for index in range(200):
        numbers = draw_numbers(question, f"variant-{index}")
        assert numbers["a"] != numbers["b"], numbers
        assert engine_key(question, numbers) == (1 if numbers["a"] > numbers["b"] else 0)  # by hand, off the tie


def test_constants_are_no_inputs_in_the_network_graphs_and_the_captions() -> None:
    lesson = json.loads((DATA_DIR / "a-network-learns" / "lesson.json").read_text())
    for name in ("point", "other"):
        steps, _ = graph_trace(lesson["graphs"][name])
        captions = [s["caption"] for s in steps["forward"]]
        assert "1 = 1 is a constant of the formula." in captions and "1 = 1 is an input." not in captions
        one = next(n for n in steps["nodes"] if n["label"] == "1")
        assert one["constant"] is True
    with pytest.raises(ValueError, match="1 is a constant of the formula, not an input"):
        explore_graph(lesson["graphs"]["point"], {"1": 2.0})
    # Gradient descent's 1/n: its share is computed (sum × 1 = 16.25, from r1 = -2, r2 = -3.5 by hand: 4 + 12.25)
    # but it is not said to be received by an input.
    descent = json.loads((DATA_DIR / "gradient-descent-linear-regression" / "lesson.json").read_text())
    steps, _ = graph_trace(descent["graphs"]["loss"])
    said = steps["backward"][1]["caption"]
    assert "the constant 1/n gets sum × (gradient at L) = 16.25 × 1 = 16.25, which changes nothing: " \
           "a constant is not an input" in said
    assert "1/n receives" not in said


def test_the_tangent_graph_writes_one_minus_o_squared_in_parentheses() -> None:
    lesson = json.loads((DATA_DIR / "forward-and-reverse-mode" / "lesson.json").read_text())
    steps, _ = graph_trace(lesson["graphs"]["dual"])
    node = next(n for n in steps["nodes"] if n["label"] == "o'")
    assert node["formula"] == "o' = (1 - o*o) × x'"
    # tanh(0.5) = 0.46212, 1 - 0.46212^2 = 0.78645 (by hand).
    assert "o' = (1 - o*o) × x' = 0.7864 × 1 = 0.7864" in [s["caption"] for s in steps["forward"]]
    assert not any("1 - o*o × x'" in s["caption"] for s in steps["forward"] + steps["backward"])


def test_forward_and_reverse_says_what_reverse_mode_keeps_and_why_the_tangent_graph_plays_backward() -> None:
    """Issue 42 item 2: the memory reverse mode pays (every value of the forward pass, kept for the sweep back) is
    said, and the backward steps the predict player plays over the tangent graph are explained as y'' (its number
    a claim in claims.json, x-grad-is-second-derivative), not as part of forward mode."""
    sections = DATA_DIR / "forward-and-reverse-mode" / "sections"
    key_parts = " ".join((sections / "02-key-parts.md").read_text().split())
    assert "reverse mode must keep every value of the forward pass until the sweep back has used it" in key_parts
    predict = " ".join((sections / "04-predict.md").read_text().split())
    assert "the second derivative $y''$" in predict and "not part of forward mode" in predict
    claims = json.loads((DATA_DIR / "forward-and-reverse-mode" / "claims.json").read_text())["claims"]
    assert "x-grad-is-second-derivative" in {claim["id"] for claim in claims}


def test_the_slopes_estimate_at_a_tiny_h_is_not_shown_as_exact() -> None:
    from chainrule.web.page_numbers import plot_with_texts

    plot = plot_with_texts(lesson_plots("slopes-and-the-chain-rule"))
    tiny = next(n for n in plot["nudges"] if n["name"] == "tiny")
    # ((2(1 + h) + 1)^2 - 9) / h = 12 + 4h exactly: 12.00004 at h = 1e-5 (by hand).
    assert tiny["h"] == 1e-5 and tiny["ratio_text"] == "12.00004"
    assert plot["slope_text"] == "12"
    assert next(n for n in plot["nudges"] if n["name"] == "whole")["ratio_text"] == "16"  # 12 + 4 × 1


def test_a_javascript_slip_that_gives_nan_gets_a_nan_diagnosis() -> None:
    """Math.tanh(values[b]) with b null for a tanh node is Math.tanh(undefined), NaN: no size ever grew."""
    from chainrule.grading import grade, reference_source

    source = reference_source("forward-values", "javascript")
    assert "Math.tanh(values[a])" in source
    result = grade("forward-values", "javascript", source.replace("Math.tanh(values[a])", "Math.tanh(values[b])"))
    assert result["verdict"] == "failed"
    messages = " ".join(str(t.get("message", "")) for t in result["tests"]) + str(result.get("message", ""))
    assert "NaN (not a number) and none is infinite" in messages
    assert "grow without bound" not in messages
