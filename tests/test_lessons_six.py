"""The three lessons that make the path six: "Slopes and the chain rule" before the graph, "A network learns:
two moons" and "Forward mode and reverse mode" after gradient descent.

Every number a learner sees is checked against an independent source: plain float arithmetic written out
here, PyTorch in float64, and counts worked out by hand. Every exercise is graded in the real sandbox in
all three languages (once per session, through grade_once); the diagnoses are tried on the mistakes
learners make, run in this process on the exercises' own cases."""

from __future__ import annotations

import json
import math
import random
import re
from datetime import datetime, timedelta, timezone

import pytest

from chainrule.grading import exercise_cases, get_exercise, starter_source
from chainrule.grading.diagnoses import diagnose_run
from chainrule.lessons import (
    check_prediction,
    check_quiz_answer,
    get_lesson,
    get_path,
    lesson_data,
    lesson_numbers,
)
from chainrule.lessons.loader import DATA_DIR
from chainrule.lessons.text import PLACEHOLDER
from chainrule.number_text import format_number
from exercise_mistakes import graded_reference_and_starter, mistaken, run_in_process
from reference_torch import needs_torch, torch

pytestmark = pytest.mark.timeout(600)

SLOPES, NETWORK, MODES = "slopes-and-the-chain-rule", "a-network-learns", "forward-and-reverse-mode"
NEW = (SLOPES, NETWORK, MODES)
GRADIENT = "many-inputs-and-the-gradient"
SOFTMAX = "softmax-and-cross-entropy"
CAPSTONE = "build-the-engine"
PATH = [SLOPES, GRADIENT, "computational-graphs", "backprop", "gradient-descent-linear-regression", NETWORK, SOFTMAX, MODES,
        CAPSTONE]
EXERCISES = {
    SLOPES: ["slope-by-nudging", "slopes-by-rule", "chain-link-by-link"],
    NETWORK: ["zero-grad-bug", "one-training-step"],
    MODES: ["dual-numbers", "jacobian-by-sweeps"],
}
PLOT_KIND = {SLOPES: "nudge", NETWORK: "boundary", MODES: "sweeps"}
LANGUAGES = ("python", "javascript", "typescript")
F64 = None if torch is None else torch.float64


@pytest.fixture(scope="module", autouse=torch is not None)
def one_torch_thread():
    """PyTorch on tiny tensors, on a machine the suite's workers share: one thread runs a backward pass in
    about a millisecond where several fight over the cores for a hundred times that."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def close(got, want, rel=1e-9, abs_=1e-12):
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=rel, abs_tol=abs_) for g, w in zip(got, want))


# ---------------------------------------------------------------- the path


def test_the_path_has_nine_lessons_each_building_on_earlier_ones():
    entries = get_path()["lessons"]
    assert [e["id"] for e in entries] == PATH and all(e["written"] for e in entries)
    position = {lesson_id: index for index, lesson_id in enumerate(PATH)}
    for entry in entries:
        assert all(position[ref["id"]] < position[entry["id"]] for ref in entry["builds_on"]), entry["id"]
        assert all(ref["href"] == f"/lessons/{ref['id']}" for ref in entry["builds_on"])
        assert (entry["assumes"] is not None) == bool(entry["builds_on"]), entry["id"]
    built_on = {e["id"]: [ref["id"] for ref in e["builds_on"]] for e in entries}
    assert built_on[SLOPES] == [] and built_on[GRADIENT] == [SLOPES] and GRADIENT in built_on["backprop"]
    assert built_on[NETWORK] == ["gradient-descent-linear-regression"] and "backprop" in built_on[MODES]
    assert get_lesson(SLOPES)["previous"] is None and get_lesson(SLOPES)["recap"]["next"]["id"] == GRADIENT
    assert get_lesson(GRADIENT)["recap"]["next"]["id"] == "computational-graphs"
    assert get_lesson("computational-graphs")["previous"]["id"] == GRADIENT
    assert get_lesson("gradient-descent-linear-regression")["recap"]["next"]["id"] == NETWORK
    assert built_on[SOFTMAX] == [NETWORK] and get_lesson(NETWORK)["recap"]["next"]["id"] == SOFTMAX
    assert get_lesson(SOFTMAX)["recap"]["next"]["id"] == MODES and get_lesson(MODES)["recap"]["next"]["id"] == CAPSTONE
    assert built_on[CAPSTONE] == ["backprop", NETWORK] and get_lesson(CAPSTONE)["recap"]["next"] is None


@pytest.mark.parametrize("lesson_id", NEW)
def test_each_new_lesson_does_everything_a_lesson_does(lesson_id):
    lesson = get_lesson(lesson_id)
    assert [s["slug"] for s in lesson["sections"]] == [
        "why", "key-parts", "see-it-work", "predict", "try-it", "check-yourself", "explain", "recap"]
    assert 20 <= lesson["minutes"] <= 30 and lesson["solution_after"] == 3
    assert lesson["see_it_work"]["plot"]["kind"] == PLOT_KIND[lesson_id]
    steps = lesson["predict"]["steps"]
    assert len(steps) >= 5
    order = [(s["before_step"]["phase"] != "forward", s["before_step"]["index"]) for s in steps]
    assert order == sorted(order) and len(set(order)) == len(order)  # gated in the order the player shows them
    assert [e["id"] for e in lesson["exercises"]] == EXERCISES[lesson_id]
    assert all(e["languages"] == list(LANGUAGES) and e["hint_count"] >= 3 for e in lesson["exercises"])
    quiz = lesson_data(lesson_id)["quiz"]
    assert len(quiz) == 5 and {q["kind"] for q in quiz} == {"number", "choice"}
    assert all("fresh" in q for q in quiz if q["kind"] == "number")
    assert len(lesson["explain"]["key_ideas"]) == 5 and len(lesson["recap"]["points"]) >= 4


@pytest.mark.parametrize("lesson_id", NEW)
def test_new_lessons_prose_types_no_numbers_of_its_own(lesson_id):
    # Numbers come from placeholders; a formula's constants live in its math, code in code spans (and a
    # numbered list numbers its steps).
    folder = DATA_DIR / lesson_id
    files = sorted(folder.glob("sections/*.md")) + sorted(folder.glob("exercises/*/exercise.md"))
    assert len(files) == 8 + len(EXERCISES[lesson_id])
    for path in files:
        text = PLACEHOLDER.sub("", path.read_text(encoding="utf-8"))
        text = re.sub(r"\$\$.+?\$\$|\$[^$\n]+?\$|`[^`\n]+`|^\d+\. ", "", text, flags=re.DOTALL | re.MULTILINE)
        numbers = set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text))
        assert numbers <= {"0", "1", "2"}, (path.name, numbers)


# ---------------------------------------------------------------- slopes and the chain rule


def test_slopes_graphs_and_predictions_by_hand():
    numbers = lesson_numbers(SLOPES)
    x, a, c = 1.0, 2.0, 1.0
    u = a * x + c
    assert numbers["outer"]["y"]["data"] == u * u and numbers["outer"]["x"]["grad"] == 2 * u * a == 12
    assert numbers["outer"]["a"]["grad"] == 2 * u * x
    x = 2.0
    s, u = x * x, x * x + 1
    hand = {"s": s, "u": u, "y": u * u, "du": 2 * u, "ds": 2 * u, "dx": 2 * u * 2 * x}
    assert hand["dx"] == 40 and numbers["squared"]["x"]["grad"] == hand["dx"]
    for key, want in hand.items():
        assert check_prediction(SLOPES, key, want)["correct"], key
        assert not check_prediction(SLOPES, key, want + 0.05)["correct"], key


@needs_torch
def test_the_nudge_plot_is_the_ratio_of_nudges_and_shows_both_ways_to_go_wrong():
    plot = get_lesson(SLOPES)["see_it_work"]["plot"]
    f = lambda x: (2 * x + 1) * (2 * x + 1)  # noqa: E731 - the plot's expression, in plain floats
    x = torch.tensor(1.0, dtype=F64, requires_grad=True)
    ((2 * x + 1) * (2 * x + 1)).backward()
    assert plot["at"] == 1 and plot["value"] == f(1.0) and plot["slope"] == x.grad.item() == 12
    for nudge in plot["nudges"]:
        h = nudge["h"]
        assert nudge["after"] == f(1.0 + h) and nudge["ratio"] == (f(1.0 + h) - f(1.0)) / h
        assert nudge["error"] == abs(nudge["ratio"] - 12)
    errors = [nudge["error"] for nudge in plot["nudges"]]
    best = errors.index(min(errors))
    assert plot["nudges"][best]["name"] == "tinier" and errors[0] == 4  # 12 + 4h exactly, for h = 1
    assert all(later < earlier for earlier, later in zip(errors[:best], errors[1:best + 1]))  # too large an h
    assert all(later > earlier for earlier, later in zip(errors[best:], errors[best + 1:]))  # too small an h
    assert errors[-1] > 1e3 * errors[best]
    assert any(point == [plot["at"] - 1.25, f(plot["at"] - 1.25)] for point in plot["curve"])


@needs_torch
def test_slope_exercise_cases_match_plain_arithmetic_and_torch():
    functions = {"square": lambda x: x * x, "cube": lambda x: x * x * x,
                 "poly": lambda x: 3 * x * x - 2 * x + 1, "wave": lambda x: math.tanh(2 * x)}
    cases = exercise_cases("slope-by-nudging")
    for case in cases:
        name, x, hs = case.args
        assert case.expected == [(functions[name](x + h) - functions[name](x)) / h for h in hs]
    assert any(h < 0 for case in cases for h in case.args[2]) and min(h for c in cases for h in c.args[2]) <= 1e-12

    def torch_slopes(x: float) -> list[float]:
        slopes = []
        for f in (lambda t: 3 * t ** 2 + 2 * t - 5, lambda t: t ** 5 - 4 * t ** 3 + t,
                  lambda t: (t ** 2 + 1) * (3 * t - 2), lambda t: 2 / t):
            t = torch.tensor(x, dtype=F64, requires_grad=True)
            f(t).backward()
            slopes.append(t.grad.item())
        return slopes

    for case in exercise_cases("slopes-by-rule"):
        assert close(case.expected, torch_slopes(case.args[0]))

    ops = {"add": lambda u, c: u + c, "mul": lambda u, c: c * u, "square": lambda u, c: u * u,
           "tanh": lambda u, c: torch.tanh(u), "exp": lambda u, c: torch.exp(u), "recip": lambda u, c: 1 / u}
    for case in exercise_cases("chain-link-by-link"):
        links, x = case.args
        t = torch.tensor(x, dtype=F64, requires_grad=True)
        y = t
        for op, *constant in links:
            y = ops[op](y, constant[0] if constant else None)
        y.backward()
        assert close(case.expected, [y.item(), t.grad.item()])
    assert exercise_cases("chain-link-by-link")[0].expected == [9.0, 12.0]  # the lesson's (2x + 1)^2 at 1


# ---------------------------------------------------------------- a network learns


def torch_hinge(points, labels, w, b):
    x = torch.tensor(points, dtype=F64)
    y = torch.tensor(labels, dtype=F64)
    return (1 - y * (x @ w + b)).clamp(min=0).mean()


@needs_torch
def test_network_graphs_and_predictions_match_torch():
    numbers = lesson_numbers(NETWORK)
    for graph, point, label, weights, bias in (("point", [1.5, -0.25], 1, [0.5, 2.0], -0.5),
                                               ("other", [-0.5, 0.75], -1, [1.0, 0.5], 0.25)):
        w = torch.tensor(weights, dtype=F64, requires_grad=True)
        b = torch.tensor(bias, dtype=F64, requires_grad=True)
        loss = torch_hinge([point], [label], w, b)
        loss.backward()
        assert math.isclose(numbers[graph]["L"]["data"], loss.item())
        assert close([numbers[graph]["w1"]["grad"], numbers[graph]["w2"]["grad"], numbers[graph]["b"]["grad"]],
                     w.grad.tolist() + [b.grad.item()])
    # By hand: s = 1 × (-0.5) + 0.5 × 0.75 + 0.25 = 0.125, y s = -0.125, L = 1.125; dL/ds = -y = 1, dL/dw1 = x1.
    for key, want in {"s": 0.125, "ys": -0.125, "L": 1.125, "dys": -1.0, "ds": 1.0, "dw1": -0.5}.items():
        assert check_prediction(NETWORK, key, want)["correct"], key


def torch_mlp_run(points, labels, sizes, activation, lr, steps, seed):
    """The same MLP as chainrule.nn.MLP(2, sizes, rng=Random(seed)) (its initial numbers read from one),
    trained in PyTorch float64 on the mean max-margin loss; the loss, accuracy and model after each step."""
    from chainrule.nn import MLP

    start = MLP(2, sizes, activation=activation, rng=random.Random(seed))
    layers = []
    for layer in start.layers:
        weight = torch.tensor([[w.data for w in n.w] for n in layer.neurons], dtype=F64, requires_grad=True)
        bias = torch.tensor([n.b.data for n in layer.neurons], dtype=F64, requires_grad=True)
        layers.append((weight, bias))
    x = torch.tensor(points, dtype=F64)
    y = torch.tensor(labels, dtype=F64)

    def scores(inputs):
        out = inputs
        for k, (weight, bias) in enumerate(layers):
            out = out @ weight.T + bias
            if k < len(layers) - 1:
                out = torch.relu(out) if activation == "relu" else torch.tanh(out)
        return out[:, 0]

    parameters = [p for pair in layers for p in pair]
    history = []
    for step in range(steps + 1):
        s = scores(x)
        loss = (1 - y * s).clamp(min=0).mean()
        history.append((loss.item(), 100.0 * ((s > 0) == (y > 0)).double().mean().item()))
        if step == steps:
            break
        sgd_step(parameters, loss, lr)
    return history, scores


def sgd_step(parameters, loss, lr):
    """Plain gradient descent, as torch.optim.SGD steps without momentum (whose first use in a process
    costs seconds of imports): fresh gradients, then p -= lr * grad."""
    for p in parameters:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p in parameters:
            p -= lr * p.grad


@needs_torch
def test_the_boundary_runs_are_the_training_pytorch_does():
    plot = get_lesson(NETWORK)["see_it_work"]["plot"]
    box, cells = plot["box"], plot["cells"]
    grid = torch.tensor([[box["x0"] + (box["x1"] - box["x0"]) * a / cells, box["y1"] - (box["y1"] - box["y0"]) * b / cells]
                         for b in range(cells + 1) for a in range(cells + 1)], dtype=F64)
    runs = {run["name"]: run for run in plot["runs"]}
    assert set(runs) == {"neuron", "network", "large"}
    for run in plot["runs"]:
        history, scores = torch_mlp_run(plot["points"], plot["labels"], run["sizes"], run["activation"], run["lr"],
                                        run["steps"], 1)
        for frame in run["frames"]:
            loss, accuracy = history[frame["step"]]
            assert math.isclose(frame["loss"], loss, rel_tol=1e-9, abs_tol=1e-12), (run["name"], frame["step"])
            assert frame["accuracy"] == accuracy
        assert run["frames"][-1]["step"] == run["steps"]
        with torch.no_grad():
            final = scores(grid).tolist()
        assert all(abs(got - want) <= 1e-4 for got, want in zip(run["frames"][-1]["scores"], final))
    neuron, network, large = runs["neuron"]["frames"], runs["network"]["frames"], runs["large"]["frames"]
    assert network[-1]["accuracy"] == 100 and neuron[-1]["accuracy"] < 90  # a line cannot separate the moons
    assert any(later["loss"] > earlier["loss"] for earlier, later in zip(network, network[1:]))  # not smooth
    # Too large a rate: every hidden ReLU off for every point, the same score for all of them, stuck.
    assert large[-1]["loss"] == 1 and large[-1]["accuracy"] == 50 and large[-2]["loss"] == 1
    history, scores = torch_mlp_run(plot["points"], plot["labels"], [8, 8, 1], "relu", runs["large"]["lr"], 20, 1)
    with torch.no_grad():
        assert len(set(scores(torch.tensor(plot["points"], dtype=F64)).tolist())) == 1
    assert all(score > 0 for score in large[-1]["scores"])  # one side everywhere: no boundary left to draw
    assert runs["network"]["parameters"] == 3 * 8 + 9 * 8 + 9


@needs_torch
def test_training_exercise_cases_match_pytorch():
    for exercise, steps_of in (("one-training-step", lambda case: 1), ("zero-grad-bug", lambda case: case.args[5])):
        for case in exercise_cases(exercise):
            points, labels, weights, bias, lr = case.args[:5]
            w = torch.tensor(weights, dtype=F64, requires_grad=True)
            b = torch.tensor(float(bias), dtype=F64, requires_grad=True)
            losses = []
            for _ in range(steps_of(case)):
                loss = torch_hinge(points, labels, w, b)
                sgd_step([w, b], loss, lr)
                losses.append(loss.item())
            assert close(case.expected, losses + w.tolist() + [b.item()]), (exercise, case.name)


# ---------------------------------------------------------------- forward mode and reverse mode


@needs_torch
def test_modes_graphs_and_predictions_by_hand():
    numbers = lesson_numbers(MODES)
    x, w = 0.5, 2.0
    o = math.tanh(w * x)
    assert math.isclose(numbers["plain"]["y"]["data"], x * o)
    assert math.isclose(numbers["plain"]["x"]["grad"], o + x * (1 - o * o) * w)
    assert math.isclose(numbers["plain"]["w"]["grad"], x * (1 - o * o) * x)
    o = math.tanh(0.5)
    hand = {"o": o, "slope": 1 - o * o, "od": 1 - o * o, "xod": 0.5 * (1 - o * o), "yd": o + 0.5 * (1 - o * o)}
    t = torch.tensor(0.5, dtype=F64, requires_grad=True)
    (t * torch.tanh(t)).backward()
    assert math.isclose(hand["yd"], t.grad.item())  # the tangent y' is dy/dx
    for key, want in hand.items():
        assert math.isclose(check_prediction(MODES, key, want)["expected"], want, abs_tol=1e-9), key
        assert check_prediction(MODES, key, want)["correct"]


@needs_torch
def test_the_sweeps_plot_fills_one_jacobian_both_ways_with_the_steps_counted_by_hand():
    plot = get_lesson(MODES)["see_it_work"]["plot"]
    functions = {f["name"]: f for f in plot["functions"]}

    def gather(x):
        h = torch.tanh(x[0] * x[1] + x[2] * x[3] + x[4] * x[5])
        return torch.stack([h * h + h])

    def spread(x):
        t = x[0]
        h = torch.tanh(2 * torch.tanh(t * t + t))
        return torch.stack([h * h, h + t, h * t, torch.tanh(h), h * h * h, torch.exp(h)])

    for name, f in (("gather", gather), ("spread", spread)):
        fn = functions[name]
        jacobian = torch.autograd.functional.jacobian(f, torch.tensor(fn["values"], dtype=F64)).tolist()
        assert all(close(row, want) for row, want in zip(fn["jacobian"], jacobian))
        columns = [frame["column"] for frame in fn["forward"]]
        assert all(close(list(row), want) for row, want in zip(zip(*columns), jacobian))
        assert [frame["seed"] for frame in fn["forward"]] == fn["inputs"]
    # Nodes by hand. gather: h needs 3 products, 2 sums and a tanh, the output a product and a sum: 8.
    # spread: h needs t*t, + t, tanh, 2*, tanh (5); the outputs 1, 1, 1, 1, 2 and 1 more: 12 in all.
    gather, spread = functions["gather"], functions["spread"]
    assert gather["nodes"] == 8 and [f["steps"] for f in gather["forward"]] == [8] * 6
    assert [f["steps"] for f in gather["reverse"]] == [8] and gather["forward"][-1]["total"] == 48
    assert spread["nodes"] == 12 and [f["steps"] for f in spread["forward"]] == [12]
    assert [f["steps"] for f in spread["reverse"]] == [6, 6, 6, 6, 7, 6] and spread["reverse"][-1]["total"] == 37
    prose = " ".join(next(s["html"] for s in get_lesson(MODES)["sections"] if s["slug"] == "see-it-work").split())
    assert "forward mode needs 6 sweeps and 48 steps; reverse mode 1 sweep and 8 steps" in prose
    assert "forward mode needs 1 sweep and 12 steps; reverse mode 6 sweeps and 37 steps" in prose


def test_the_new_plots_numbers_arrive_as_the_one_text_for_a_number():
    """The pages format no number: the nudge plot's log ticks, each nudge's numbers, the boundary plot's rates
    and the sweeps' Jacobian entries come with their texts, and formulas read with × (texts written by hand)."""
    from chainrule.lessons.loader import lesson_plots
    from chainrule.web.page_numbers import plot_with_texts

    nudge = plot_with_texts(lesson_plots(SLOPES))
    # h runs from 1 down to 1e-13, the errors from 4 down to about 7e-8: ticks every third and second power.
    assert [t["text"] for t in nudge["h_axis"]["ticks"]] == ["1", "0.001", "1e-6", "1e-9", "1e-12"]
    assert [t["text"] for t in nudge["error_axis"]["ticks"]] == ["10", "0.1", "0.001", "1e-5", "1e-7"]
    first = nudge["nudges"][0]  # h = 1: f(2) = 25, f(1) = 9
    assert (first["h_text"], first["after_text"], first["change_text"], first["ratio_text"], first["error_text"]) == \
        ("1", "25", "16", "16", "4")
    assert (nudge["at_text"], nudge["value_text"], nudge["slope_text"]) == ("1", "9", "12")
    boundary = plot_with_texts(lesson_plots(NETWORK))
    assert all(run["lr_text"] and all("loss_text" in f and "accuracy_text" in f for f in run["frames"])
               for run in boundary["runs"])
    sweeps = {f["name"]: f for f in plot_with_texts(lesson_plots(MODES))["functions"]}
    assert sweeps["gather"]["formulas"] == ["h = tanh(x1 \u00d7 x2 + x3 \u00d7 x4 + x5 \u00d7 x6)", "y1 = h \u00d7 h + h"]
    assert sweeps["spread"]["formulas"][-2:] == ["y5 = h \u00d7 h \u00d7 h", "y6 = exp(h)"]
    # d y2 / d t for y2 = h + t is 1 + dh/dt; the forward sweep's column holds it, written by the one rule.
    column = sweeps["spread"]["forward"][0]
    assert column["column_text"] == [format_number(x) for x in column["column"]]
    assert sweeps["gather"]["reverse"][0]["row_text"] == [format_number(x) for x in sweeps["gather"]["reverse"][0]["row"]]
    # The grader's test names too: h = 1e-6, not Python's 1e-06.
    labels = [label for case in exercise_cases("slope-by-nudging") for label in case.labels]
    assert "slope estimate with h = 1e-6" in labels and "slope estimate with h = 0.0001" in labels
    assert not any("e-0" in label for label in labels)


def test_the_new_lessons_exercises_register_by_the_explicit_call_only():
    """In a fresh process: importing the lessons registers no exercise; lessons.register_exercises() registers
    the new lessons' exercises with the built-in ones, in path order."""
    import subprocess
    import sys

    code = (
        "import json\n"
        "from chainrule.grading import get_exercise, list_exercises\n"
        "import chainrule.lessons as lessons\n"
        "before = [e['id'] for e in list_exercises()]\n"
        "lessons.register_exercises()\n"
        "print(json.dumps([before, [e['id'] for e in list_exercises()]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    before, after = json.loads(done.stdout)
    assert before == []
    new = [exercise for lesson in NEW for exercise in EXERCISES[lesson]]
    assert set(new) <= set(after) and after[:len(EXERCISES[SLOPES])] == EXERCISES[SLOPES]


@needs_torch
def test_tangent_exercise_cases_match_torch():
    builders = {
        "neuron": lambda v: torch.tanh(v[0] * v[1] + v[2] * v[3] + v[4]),
        "reuse": lambda v: v[0] * v[1] + v[0] * v[0],
        "chain": lambda v: _chain(v[0], v[1]),
        "shared": lambda v: torch.tanh(v[0] * v[1]) + torch.tanh(v[0] * v[1]) ** 2,
    }
    for case in exercise_cases("dual-numbers"):
        expression, values, tangents = case.args
        value, tangent = torch.func.jvp(builders[expression], (torch.tensor(values, dtype=F64),),
                                        (torch.tensor(tangents, dtype=F64),))
        assert close(case.expected, [value.item(), tangent.item()]), case.name
    assert exercise_cases("dual-numbers")[0].expected[1] == pytest.approx(1.0)  # the backprop lesson's dO/dw1
    vectors = {
        "spread": lambda x: torch.stack([x[0] * x[0], torch.tanh(x[0]), x[0] * torch.tanh(x[0])]),
        "gather": lambda x: torch.stack([x[0] * x[1] + torch.tanh(x[2] * x[3])]),
        "layer": lambda x: torch.stack([torch.tanh(x[0] * x[1] + x[2]), x[0] * x[1] * x[2]]),
        "swap": lambda x: torch.stack([x[0] * x[1], x[0] + x[1] * x[1]]),
    }
    for case in exercise_cases("jacobian-by-sweeps"):
        name, values = case.args
        jacobian = torch.autograd.functional.jacobian(vectors[name], torch.tensor(values, dtype=F64))
        assert close(case.expected, jacobian.flatten().tolist()), case.name


def _chain(x, w):
    out = x
    for _ in range(10):
        out = torch.tanh(out * w)
    return out


# ---------------------------------------------------------------- the quizzes


HAND_KEYS = {  # each key worked out by hand from the question's given numbers
    "nudge-estimate": ((3 + 0.1) ** 2 - 9) / 0.1, "power-rule": 3 * 2 * (-1) ** 2, "chain-rule": 2 * (3 * 1 - 1) * 3,
    "hinge-loss": max(0, 1 - 1 * 0.25), "hinge-gradient": -(-1 * 0.5), "parameter-count": 3 * 8 + 9,
    "product-tangent": 1 * -2 + 3 * 0.5, "tanh-tangent": (1 - math.tanh(0.5) ** 2) * 2, "sweep-count": 5,
    "tangent-from-gradient": 2 * 0.5 + -1 * 3,
}


@pytest.mark.parametrize("lesson_id", NEW)
def test_quiz_keys_are_right_and_explained(lesson_id):
    for question in lesson_data(lesson_id)["quiz"]:
        qid = question["id"]
        if question["kind"] == "number":
            assert math.isclose(question["answer"], HAND_KEYS[qid], rel_tol=1e-12)
            result = check_quiz_answer(lesson_id, qid, repr(HAND_KEYS[qid]))
            assert not check_quiz_answer(lesson_id, qid, repr(HAND_KEYS[qid] + 0.05))["correct"]
        else:
            result = check_quiz_answer(lesson_id, qid, str(question["answer_index"] + 1))
            wrong = (question["answer_index"] + 1) % len(question["options"]) + 1
            assert not check_quiz_answer(lesson_id, qid, str(wrong))["correct"]
        assert result["correct"] and result["reason"] and "{{" not in result["reason"], qid


# ---------------------------------------------------------------- exercises in the sandbox


ALL = [(exercise, language) for lesson in NEW for exercise in EXERCISES[lesson] for language in LANGUAGES]


@pytest.mark.parametrize("exercise_id,language", ALL, ids=[f"{e}-{lang}" for e, lang in ALL])
def test_reference_passes_and_starter_fails(exercise_id, language, grade_once):
    _, failed = graded_reference_and_starter(grade_once, exercise_id, language)
    assert len(exercise_cases(exercise_id)) >= 5
    assert failed["verdict"] == "failed", failed["message"]
    # Every shown case catches the starter; a hidden draw may not show its bug (a point past the margin adds no gradient).
    shown = [t for t in failed["tests"] if not t.get("hidden")]
    assert all(t["status"] == "fail" for t in shown), [t["name"] for t in shown if t["status"] != "fail"]


# What each starter's failing run says, in every language (the same gradings as above: grade_once).
STARTER_SAYS = {
    "slope-by-nudging": "Every estimate is 0",
    "slopes-by-rule": "are still 0: work each one out with the rules",
    "chain-link-by-link": "y came back as x itself",
    "zero-grad-bug": "never sets the gradients back to zero",
    "dual-numbers": "the tangents never left the inputs",
    "jacobian-by-sweeps": "Return every entry of the Jacobian in one list",
}


@pytest.mark.parametrize("exercise_id", STARTER_SAYS)
@pytest.mark.parametrize("language", LANGUAGES)
def test_each_starter_is_told_what_is_missing(exercise_id, language, grade_once):
    result = grade_once(exercise_id, language, starter_source(exercise_id, language))
    assert STARTER_SAYS[exercise_id] in result["message"], result["message"]


@pytest.mark.parametrize("lesson_id", NEW)
def test_new_lessons_pass_lessons_check(lesson_id, grade_once):
    from chainrule.lessons.validate import check_lesson_folder

    assert check_lesson_folder(DATA_DIR / lesson_id, grade_with=grade_once) == []


# ---------------------------------------------------------------- diagnoses of the mistakes learners make


MISTAKES = [
    ("slope-by-nudging", "backward-difference", [("f(x + h) - f(x)", "f(x) - f(x - h)")], "nudges to the left"),
    ("slope-by-nudging", "central-difference", [("moved = f(x + h) - f(x)", "moved = (f(x + h) - f(x - h)) / 2")],
     "two-sided estimate"),
    ("slope-by-nudging", "no-divide", [("moved / h", "moved")], "divide the change"),
    ("slope-by-nudging", "times-h", [("moved / h", "moved * h")], "multiply the change by h"),
    ("slope-by-nudging", "sign-flipped", [("f(x + h) - f(x)", "f(x) - f(x + h)")], "wrong sign"),
    ("slopes-by-rule", "constant-kept", [("slope1 = 6 * x + 2", "slope1 = 6 * x + 2 - 5")], "constant does not move"),
    ("slopes-by-rule", "power-not-lowered", [("5 * x ** 4 - 12 * x ** 2 + 1", "5 * x ** 5 - 12 * x ** 3 + 1")],
     "lowers it by one"),
    ("slopes-by-rule", "product-of-slopes", [("2 * x * (3 * x - 2) + (x * x + 1) * 3", "2 * x * 3")],
     "multiplied the two slopes"),
    ("slopes-by-rule", "product-one-term", [(" + (x * x + 1) * 3", "")], "only one term of the product rule"),
    ("slopes-by-rule", "negative-power", [("-2 / (x * x)", "-2 / x")], "exponent drops to -2"),
    ("chain-link-by-link", "slopes-added", [("slope = slope * local", "slope = slope + local"),
                                            ("value, slope = x, 1.0", "value, slope = x, 0.0")], "multiplies them"),
    ("chain-link-by-link", "slope-at-output", [("        slope = slope * local\n        value = after\n",
                                                "        value = after\n        slope = slope * slope_at(op, link, value)\n"),
                                               ("def chain_slope(", "def slope_at(op, link, u):\n"
                                                "    slopes = {'add': lambda: 1.0, 'mul': lambda: link[-1], 'square': lambda: 2 * u,\n"
                                                "              'tanh': lambda: 1 - math.tanh(u) ** 2, 'exp': lambda: math.exp(u),\n"
                                                "              'recip': lambda: -1 / (u * u)}\n"
                                                "    return slopes[op]()\n\n\ndef chain_slope(")],
     "not at its output"),
    ("zero-grad-bug", "zeroed-per-point", [("        grad_w = [0.0] * len(w)\n        grad_b = 0.0\n", ""),
                                           ("        for x, y in zip(points, labels):\n",
                                            "        for x, y in zip(points, labels):\n            grad_w = [0.0] * len(w)\n"
                                            "            grad_b = 0.0\n")], "for every point"),
    ("zero-grad-bug", "ascent", [("w[j] -= lr", "w[j] += lr"), ("b -= lr", "b += lr")], "step up the slope"),
    ("zero-grad-bug", "summed", [("grad_w[j] += -y * x[j] / n", "grad_w[j] += -y * x[j]"), ("grad_b += -y / n", "grad_b += -y")],
     "not divided by their number"),
    ("zero-grad-bug", "every-point", [("if y * s < 1:", "if True:")], "every point takes part"),
    ("one-training-step", "loss-after-update", [
        ("    return [loss]", "    after = [wj - lr * g for wj, g in zip(w, dw)]\n"
         "    loss = sum(max(0.0, 1 - y * (sum(a * c for a, c in zip(after, x)) + b - lr * db)) for x, y in zip(points, labels)) / n\n"
         "    return [loss]")], "after each update"),
    ("one-training-step", "not-moved", [("[wj - lr * g for wj, g in zip(w, dw)] + [b - lr * db]", "list(w) + [b]")],
     "come back as they went in"),
    ("dual-numbers", "product-one-term", [(" + self.value * other.tangent", "")], "keeps one term of the product rule"),
    ("dual-numbers", "tangents-multiplied", [("self.tangent * other.value + self.value * other.tangent",
                                              "self.tangent * other.tangent")], "multiplies the two tangents"),
    ("dual-numbers", "tanh-slope-at-input", [("(1 - y * y) * self.tangent",
                                              "(1 - self.value * self.value) * self.tangent")], "with a its input"),
    ("dual-numbers", "no-tanh-slope", [("(1 - y * y) * self.tangent", "self.tangent")], "passes its input's tangent"),
    ("jacobian-by-sweeps", "transposed", [("for i in range(outputs) for j in range(len(values))",
                                           "for j in range(len(values)) for i in range(outputs)")], "but in columns"),
    ("jacobian-by-sweeps", "all-seeded", [("1.0 if k == j else 0.0", "1.0")], "every input's tangent set to 1"),
    ("jacobian-by-sweeps", "one-sweep", [("1.0 if k == j else 0.0", "1.0 if k == j == 0 else 0.0")],
     "Only the first column is filled in"),
]


# Mistakes that only some cases can tell apart from others: how many failing tests must name them at least.
AMBIGUOUS = {"tangents-multiplied": 3}


@pytest.mark.parametrize("exercise_id,mistake,replacements,says", MISTAKES, ids=[f"{m[0]}-{m[1]}" for m in MISTAKES])
def test_each_classic_mistake_is_named(exercise_id, mistake, replacements, says):
    hints, summary = run_in_process(exercise_id, mistaken(exercise_id, *replacements))
    # Most failing tests name it; a case whose numbers cannot tell it from another mistake names none.
    named = [hint for hint in hints if hint and says in hint]
    assert len(named) >= AMBIGUOUS.get(mistake, max(1, (len(hints) + 1) // 2)), (hints, summary)
    assert summary is None or says in summary, summary


def test_the_buggy_loop_is_recognised_in_process_too():
    hints, summary = run_in_process("zero-grad-bug", starter_source("zero-grad-bug", "python"))
    assert all("never sets the gradients back to zero" in hint for hint in hints) and "never sets" in summary


# ---------------------------------------------------------------- review mixes the lessons


def test_review_mixes_the_questions_of_the_lessons_a_learner_has_done(tmp_path):
    from fastapi.testclient import TestClient

    from chainrule.lessons import question_ids
    from chainrule.progress import open_store
    from chainrule.progress.scheduling import interleave_lessons
    from chainrule.web import create_app

    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    later = start + timedelta(days=120)
    store = open_store(tmp_path, clock=lambda: start)
    try:
        for lesson_id in (MODES, SLOPES, NETWORK):  # each lesson's quiz answered in one go
            for question_id in question_ids(lesson_id):
                store.answer_question(lesson_id, question_id, "1", True)
        due = store.due_reviews(now=later)
    finally:
        store.close()
    lessons = [item["lesson_id"] for item in due]
    assert len(due) == 15 and sorted(set(lessons)) == sorted(NEW)
    assert all(a != b for a, b in zip(lessons, lessons[1:])), lessons  # never twice in a row
    for lesson_id in NEW:  # each lesson's questions still come in their own order
        assert [i["question_id"] for i in due if i["lesson_id"] == lesson_id] == sorted(question_ids(lesson_id))
    # Uneven lessons: one from each in turn while they last, the lesson due first leading.
    mixed = interleave_lessons([{"lesson_id": lesson, "question_id": q} for lesson, q in
                                [("a", "1"), ("a", "2"), ("a", "3"), ("b", "1"), ("c", "1"), ("c", "2")]])
    assert [(m["lesson_id"], m["question_id"]) for m in mixed] == [
        ("a", "1"), ("b", "1"), ("c", "1"), ("a", "2"), ("c", "2"), ("a", "3")]
    # The review page gets them in the same mixed order.
    app = create_app("test-token-0123456789", tmp_path, port=8765, clock=lambda: later)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        client.headers.update({"X-Chainrule-Token": "test-token-0123456789"})
        page = client.get("/api/review/due").json()["due"]
    assert [item["lesson_id"] for item in page] == lessons


# ---------------------------------------------------------------- builds_on in an author's folder


def test_an_added_lesson_says_what_it_builds_on_and_a_wrong_id_is_refused(tmp_path):
    from chainrule.lessons import add_lesson_dirs
    from chainrule.lessons.loader import remove_added_lessons
    from chainrule.lessons.scaffold import write_lesson
    from chainrule.lessons.validate import check_lesson_folder

    folder = write_lesson("after-modes", "After the modes", tmp_path)
    meta = json.loads((folder / "lesson.json").read_text())
    meta |= {"builds_on": [MODES, "nowhere"], "assumes": "forward and reverse mode"}
    (folder / "lesson.json").write_text(json.dumps(meta, indent=2))
    [problem] = check_lesson_folder(folder, grade=False)
    assert "'builds_on' names 'nowhere', which is neither a lesson of the path" in problem
    meta["builds_on"] = [MODES]
    (folder / "lesson.json").write_text(json.dumps(meta, indent=2))
    assert check_lesson_folder(folder, grade=False) == []
    try:
        add_lesson_dirs([folder])
        entry = get_path()["lessons"][-1]
        assert entry["id"] == "after-modes" and entry["assumes"] == "forward and reverse mode"
        assert entry["builds_on"] == [{"id": MODES, "title": "Forward mode and reverse mode", "href": f"/lessons/{MODES}"}]
    finally:
        remove_added_lessons()


# ---------------------------------------------------------------- what an author or a learner may get wrong


BAD_PLOTS = [
    ({"kind": "scatter"}, "unknown kind 'scatter'; the kinds are line-fit, nudge, boundary, sweeps, contour"),
    ({"kind": "nudge", "expression": "x*y", "at": 1, "nudges": [{"name": "a", "h": 0.1}]}, "exactly one input name"),
    ({"kind": "nudge", "expression": "log(x)", "at": -1, "nudges": [{"name": "a", "h": 0.1}]}, "not finite"),
    ({"kind": "nudge", "expression": "x", "at": 1, "nudges": [{"name": "a", "h": 0}]}, "h must not be 0"),
    ({"kind": "boundary", "samples": 10 ** 9, "runs": []}, "samples must be a whole number from 4 to 200"),
    ({"kind": "boundary", "samples": 20, "runs": [{"name": "a", "label": "a", "sizes": [32, 32, 1], "lr": 1, "steps": 5}]},
     "at most 400"),
    ({"kind": "boundary", "samples": 20, "runs": [{"name": "a", "label": "a", "sizes": [4, 1], "lr": 1e300, "steps": 5}]},
     "overflows"),
    ({"kind": "sweeps", "functions": [{"name": "f", "label": "f", "inputs": {"x": 1}, "outputs": ["x*z"]}]},
     "uses z, which is neither an input nor defined before it"),
    ({"kind": "sweeps", "functions": [{"name": "f", "label": "f", "inputs": {f"x{i}": 1 for i in range(9)},
                                       "outputs": ["x1"]}]}, "1 to 8 input names"),
]


@pytest.mark.parametrize("number", range(len(BAD_PLOTS)))
def test_lessons_check_refuses_a_plot_it_cannot_compute(number, tmp_path):
    from chainrule.lessons.scaffold import write_lesson
    from chainrule.lessons.validate import check_lesson_folder

    spec, says = BAD_PLOTS[number]
    folder = write_lesson(f"plotted-{number}", "Plotted", tmp_path)  # exercise ids are global: one lesson id each
    meta = json.loads((folder / "lesson.json").read_text())
    meta["see_it_work"]["plot"] = spec
    (folder / "lesson.json").write_text(json.dumps(meta, indent=2))
    problems = check_lesson_folder(folder, grade=False)
    assert len(problems) == 1 and says in problems[0] and "lesson.json:" in problems[0], problems


def test_a_learners_odd_output_is_diagnosed_without_a_crash():
    """Whatever numbers a learner's function returns (none, too many, NaN, huge), every new kind's mistakes
    look at them and the grader says something, or nothing, but never fails itself."""
    odd = [[], [math.nan], [1e308] * 40, [-0.0, 0.0], [math.inf, -math.inf, 1.0]]
    for lesson in NEW:
        for exercise_id in EXERCISES[lesson]:
            exercise = get_exercise(exercise_id)
            cases = list(exercise.cases)
            for raw in odd:
                diagnosis = diagnose_run(exercise, cases, [raw] * len(cases), [True] * len(cases))
                assert len(diagnosis.hints) == len(cases)
