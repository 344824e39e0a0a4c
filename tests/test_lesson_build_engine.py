"""The capstone, "Build the engine and train it", last on the path: the learner's own Value (+ and *, then the
other operations, then backward in topological order), a network on top of it and a training loop on the two
moons, each step graded on its own with the learner's code carried into the next.

Every expected number is checked against an independent source: PyTorch in float64 (the graphs, the network's
outputs and gradients, the training losses) and sums worked out by hand. Every exercise is graded in the real
sandbox in all three languages (once per session, through grade_once), and the classic mistakes are graded
there too, in Python and in JavaScript, and must be named by their diagnosis."""

from __future__ import annotations

import math
import re

import pytest

from chainrule.grading import get_exercise, reference_source, starter_source
from chainrule.grading.kinds.engine_build import simulate_graph, train_variant
from chainrule.lessons import check_prediction, check_quiz_answer, get_lesson, lesson_data, lesson_numbers
from chainrule.lessons.loader import DATA_DIR
from exercise_mistakes import assert_odd_output_is_diagnosed, graded_reference_and_starter, typed_numbers
from reference_torch import needs_torch, torch

pytestmark = pytest.mark.timeout(900)

CAPSTONE = "build-the-engine"
EXERCISES = ["engine-value", "engine-ops", "engine-backward", "engine-network", "engine-training"]
LANGUAGES = ("python", "javascript", "typescript")
F64 = None if torch is None else torch.float64


def close(got, want, rel=1e-9, abs_=1e-12):
    return len(got) == len(want) and all(math.isclose(g, w, rel_tol=rel, abs_tol=abs_) for g, w in zip(got, want))


def test_the_lesson_does_everything_a_lesson_does_and_comes_last():
    lesson = get_lesson(CAPSTONE)
    assert [s["slug"] for s in lesson["sections"]] == [
        "why", "key-parts", "see-it-work", "predict", "try-it", "check-yourself", "explain", "recap"]
    assert [e["id"] for e in lesson["exercises"]] == EXERCISES
    assert all(e["languages"] == list(LANGUAGES) and e["hint_count"] >= 3 for e in lesson["exercises"])
    quiz = lesson_data(CAPSTONE)["quiz"]
    assert len(quiz) == 5 and {q["kind"] for q in quiz} == {"number", "choice"}
    assert all("fresh" in q for q in quiz if q["kind"] == "number")
    assert len(lesson["explain"]["key_ideas"]) >= 5 and len(lesson["recap"]["points"]) >= 4
    path = lesson_data(CAPSTONE)  # the lesson is on the path, last
    from chainrule.lessons import get_path

    lessons = get_path()["lessons"]
    assert lessons[-1]["id"] == CAPSTONE and path["id"] == CAPSTONE
    assert {b["id"] for b in lessons[-1]["builds_on"]} == {"backprop", "a-network-learns"}


def test_each_step_continues_the_one_before():
    from chainrule.lessons import continued_exercise

    assert [continued_exercise(e) for e in EXERCISES] == [None, *EXERCISES[:-1]]
    assert continued_exercise("stable-softmax") is None


def test_lessons_check_refuses_a_step_that_continues_no_earlier_exercise(tmp_path):
    import json
    import shutil

    from chainrule.lessons.validate import check_lesson_folder

    folder = tmp_path / CAPSTONE
    shutil.copytree(DATA_DIR / CAPSTONE, folder)
    manifest = folder / "exercises" / "2-ops" / "exercise.json"
    manifest.write_text(json.dumps(json.loads(manifest.read_text()) | {"continues": "engine-training"}, indent=2))
    try:
        problems = check_lesson_folder(folder, grade=False)
    finally:
        from chainrule.grading import register_exercise_folder
        from chainrule.lessons import register_exercises

        register_exercises()
        for step in sorted((DATA_DIR / CAPSTONE / "exercises").iterdir()):  # the built-in folders back in place
            register_exercise_folder(step, replaces=folder)
    assert len(problems) == 1 and "continues names 'engine-training', which is no earlier exercise" in problems[0]
    assert "(the earlier ones: engine-value)" in problems[0]


def test_the_prose_types_no_numbers_of_its_own():
    files = sorted((DATA_DIR / CAPSTONE).glob("sections/*.md")) + sorted((DATA_DIR / CAPSTONE).glob("exercises/*/exercise.md"))
    assert len(files) == 8 + len(EXERCISES)
    for path in files:
        assert typed_numbers(path) <= {"0", "1", "2"}, path.name


def torch_graph(case: dict) -> list[float]:
    """data and grad of every leaf and node of an engine-graph case, by PyTorch autograd in float64."""
    env = {name: torch.tensor(float(x), dtype=F64, requires_grad=True) for name, x in zip(case["leaves"], case["values"])}
    for label, op, *ins in case["nodes"]:
        a = env[ins[0]]
        if op == "pow":
            out = a ** ins[1]
        elif op in ("add", "mul", "sub", "div"):
            b = env[ins[1]]
            out = {"add": a + b, "mul": a * b, "sub": a - b, "div": a / b}[op]
        else:
            out = {"neg": lambda: -a, "exp": a.exp, "tanh": a.tanh, "relu": a.relu}[op]()
        out.retain_grad()
        env[label] = out
    env[case["output"]].backward()
    names = case["leaves"] + [n[0] for n in case["nodes"]]
    return [x for name in names for x in (env[name].item(), env[name].grad.item())]


def torch_mlp(sizes: list[int], params: list[float]) -> tuple[list, callable]:
    """The network as (weight, bias) tensors per layer from the parameters in the engine's order, and its forward."""
    layers, at = [], 0
    for nin, nout in zip(sizes, sizes[1:]):
        rows = [params[at + j * (nin + 1): at + (j + 1) * (nin + 1)] for j in range(nout)]
        w = torch.tensor([r[:nin] for r in rows], dtype=F64, requires_grad=True)
        b = torch.tensor([r[nin] for r in rows], dtype=F64, requires_grad=True)
        layers.append((w, b))
        at += nout * (nin + 1)

    def forward(x):
        for k, (w, b) in enumerate(layers):
            x = w @ x + b
            x = x if k == len(layers) - 1 else torch.tanh(x)
        return x

    return layers, forward


def grads_in_engine_order(layers) -> list[float]:
    return [g for w, b in layers for j in range(w.shape[0]) for g in [*w.grad[j].tolist(), b.grad[j].item()]]


@needs_torch
def test_every_case_matches_torch():
    for exercise_id in EXERCISES[:3]:
        for case in get_exercise(exercise_id).cases:
            assert close(case.expected, torch_graph(case.inputs), rel=1e-9, abs_=1e-9), (exercise_id, case.name)
    for case in get_exercise("engine-network").cases:
        task = case.args[1]
        layers, forward = torch_mlp(task["sizes"], task["params"])
        outputs = torch.cat([forward(torch.tensor(p, dtype=F64)) for p in task["points"]])
        outputs.sum().backward()
        assert close(case.expected, outputs.tolist() + grads_in_engine_order(layers)), case.name
    for case in get_exercise("engine-training").cases:
        task = case.args[1]
        layers, forward = torch_mlp(task["sizes"], task["params"])
        points = [torch.tensor(p, dtype=F64) for p in task["points"]]
        losses = []
        for _ in range(task["steps"]):
            for w, b in layers:
                w.grad = b.grad = None
            loss = sum((forward(x)[0] - y) ** 2 for x, y in zip(points, task["labels"])) / len(points)
            loss.backward()
            with torch.no_grad():
                for w, b in layers:
                    w -= task["lr"] * w.grad
                    b -= task["lr"] * b.grad
            losses.append(loss.item())
        right = sum((1 if forward(x)[0].item() > 0 else -1) == y for x, y in zip(points, task["labels"]))
        assert close(case.expected[:-1], losses, rel=1e-8), case.name
        assert case.expected[-1] == right / len(points)


def test_the_moons_are_learned_and_the_replays_are_exact():
    moons = next(c for c in get_exercise("engine-training").cases if c.name == "the two moons")
    assert moons.expected[-1] >= 0.8 and moons.expected[-2] < moons.expected[0] / 2
    for exercise_id in EXERCISES[:3]:
        for case in get_exercise(exercise_id).cases:
            assert close(simulate_graph(case.inputs), case.expected), case.name
    assert train_variant(moons.inputs) == moons.expected


@needs_torch
def test_the_lesson_graphs_match_torch():
    numbers = lesson_numbers(CAPSTONE)
    x1, w1, x2, w2, b = (torch.tensor(v, dtype=F64, requires_grad=True) for v in (1.5, -0.8, -0.5, 0.6, 0.4))
    n = x1 * w1 + x2 * w2 + b
    n.retain_grad()
    o = torch.tanh(n)
    o.backward()
    assert math.isclose(numbers["neuron"]["o"]["data"], o.item(), rel_tol=1e-12)
    assert math.isclose(numbers["neuron"]["n"]["grad"], n.grad.item(), rel_tol=1e-12)
    assert math.isclose(numbers["neuron"]["w1"]["grad"], w1.grad.item(), rel_tol=1e-12)
    assert math.isclose(numbers["neuron"]["x1"]["grad"], x1.grad.item(), rel_tol=1e-12)
    assert numbers["twice"]["a"]["grad"] == -2 + 1  # by hand: b from the product, 1 from the sum


def test_predictions_and_quiz_keys_by_hand():
    for key, value in {"c": 3 * -2, "L": 3 * -2 + 3, "da": -2 + 1}.items():
        assert check_prediction(CAPSTONE, key, value)["correct"], key
        assert not check_prediction(CAPSTONE, key, value + 0.05)["correct"], key
    slip = check_prediction(CAPSTONE, "da", -2)
    assert not slip["correct"] and "the sum sends a share too" in slip["hint"]
    keys = {"value-used-twice": -2 + 1, "tanh-local-gradient": (1 - 0.36) * 2, "product-local-gradient": -3 * 2}
    for question in lesson_data(CAPSTONE)["quiz"]:
        qid = question["id"]
        if question["kind"] == "number":
            assert math.isclose(question["answer"], keys[qid], rel_tol=1e-12)
            result = check_quiz_answer(CAPSTONE, qid, repr(keys[qid]))
        else:
            result = check_quiz_answer(CAPSTONE, qid, str(question["answer_index"] + 1))
        assert result["correct"] and "{{" not in result["reason"], qid
    one_share = check_quiz_answer(CAPSTONE, "value-used-twice", "1")
    assert not one_share["correct"] and "+=" in one_share["hint"]


ALL = [(exercise, language) for exercise in EXERCISES for language in LANGUAGES]
STARTER_SAYS = {  # what a failing test of each starter says, in every language
    "engine-value": "no gradient moved",
    "engine-ops": "tanh is yours to write",
    "engine-backward": "backward is yours to write",
    "engine-network": "gave 0 parameters",
    "engine-training": "one loss per step",
}


@pytest.mark.parametrize("exercise_id,language", ALL, ids=[f"{e}-{lang}" for e, lang in ALL])
def test_reference_passes_and_starter_fails(exercise_id, language, grade_once):
    _, failed = graded_reference_and_starter(grade_once, exercise_id, language)
    assert failed["verdict"] in ("failed", "error"), failed["message"]
    said = " ".join(str(t.get("hint") or t.get("message") or "") for t in failed["tests"]) + str(failed.get("message"))
    assert STARTER_SAYS[exercise_id] in said, failed["tests"]


def test_the_lesson_passes_lessons_check(grade_once):
    from chainrule.lessons.validate import check_lesson_folder

    assert check_lesson_folder(DATA_DIR / CAPSTONE, grade_with=grade_once) == []


def assigned(source: str, language: str) -> str:
    """= instead of += in every _backward."""
    changed = re.sub(r"\b(self|this|other)\.grad \+= ", r"\1.grad = ", source)
    assert changed != source
    return changed


RECURSIVE = {
    "python": ("    def backward(self):\n        self.grad = 1.0\n        self._visit()\n\n"
               "    def _visit(self):\n        self._backward()\n        for child in self._prev:\n            child._visit()\n"),
    "javascript": ("  backward() {\n    this.grad = 1;\n    this._visit();\n  }\n\n"
                   "  _visit() {\n    this._backward();\n    for (const child of this._prev) child._visit();\n  }\n"),
}


def recursive(source: str, language: str) -> str:
    """A backward that runs its own step and then recurses into each input: no topological order."""
    if language == "python":
        start, last = source.index("    def backward(self):"), "            node._backward()\n"
    else:
        start, last = source.index("  backward() {"), "order[i]._backward();\n  }\n"
    return source[:start] + RECURSIVE[language] + source[source.index(last) + len(last):]


def never_zeroed(source: str, language: str) -> str:
    line = {"python": "        for p in model.parameters():\n            p.grad = 0.0   # last step's gradient must not add to this one's\n",
            "javascript": "    for (const p of model.parameters()) p.grad = 0; // last step's gradient must not add to this one's\n"}[language]
    assert line in source
    return source.replace(line, "")


MISTAKES = [
    ("engine-value", assigned, "assigned-not-added", "= where it must add with +="),
    ("engine-backward", recursive, "recursive-not-topological", "Build a topological order first"),
    ("engine-training", never_zeroed, "not-zeroed", "never set back to 0"),
]
MISTAKE_RUNS = [(*m, language) for m in MISTAKES for language in ("python", "javascript")]


@pytest.mark.parametrize("exercise_id,mistake,name,says,language", MISTAKE_RUNS,
                         ids=[f"{m[2]}-{m[4]}" for m in MISTAKE_RUNS])
def test_each_classic_mistake_is_named_for_real(exercise_id, mistake, name, says, language, grade_once):
    result = grade_once(exercise_id, language, mistake(reference_source(exercise_id, language), language))
    assert result["verdict"] == "failed", result["message"]
    failing = [t for t in result["tests"] if t["status"] != "pass" and not t.get("hidden")]
    assert failing and all(t.get("mistake") == name and says in t["message"] for t in failing), failing


def test_a_learners_odd_output_is_diagnosed_without_a_crash():
    assert_odd_output_is_diagnosed(EXERCISES)


# TypeScript compiled the way grading compiles it: type-checked by the bundled TypeScript compiler (no error
# allowed), then its types stripped by the bundled sucrase; the JavaScript left is what node runs.
COMPILE_TYPESCRIPT = """
const fs = require("fs");
const [checker, transpiler, source, target] = process.argv.slice(1);
const text = fs.readFileSync(source, "utf8");
const errors = require(checker).typeCheck(text, source);
if (errors.length) { console.error(JSON.stringify(errors)); process.exit(1); }
fs.writeFileSync(target, require(transpiler).transform(text, { transforms: ["typescript"], filePath: source }).code);
"""


def run_on_its_own(tmp_path, language: str, text: str) -> str:
    import subprocess
    import sys

    from chainrule.grading import grader
    from chainrule.grading.exercise_folder import LANGUAGES as EXTENSIONS

    path = tmp_path / f"engine.{EXTENSIONS[language]}"
    path.write_text(text, encoding="utf-8")
    if language == "typescript":
        compiled = tmp_path / "engine-compiled.js"
        ran = subprocess.run(["node", "-e", COMPILE_TYPESCRIPT, str(grader.TYPE_CHECKER), str(grader.TRANSPILER),
                              str(path), str(compiled)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        path = compiled
    command = [sys.executable, "-I", str(path)] if language == "python" else ["node", str(path)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_the_carried_code_reaches_the_next_starter_and_the_last_step_downloads_as_one_file(tmp_path):
    """Through a real lesson server: a passing run of one step becomes the next step's starter (same language
    only; a failing run later changes nothing), and the last step's passing code downloads as a file that runs (TypeScript once compiled as grading compiles it)."""
    import local_http
    from web_process import start, stop, wait_for_url

    process = start(["--port", "0", "--data-dir", str(tmp_path / "data")])
    try:
        match = wait_for_url(process)
        transport = local_http.transport(retries=10)  # uvicorn may take a moment to answer on its bound socket
        with local_http.client(base_url=f"http://127.0.0.1:{match['port']}", transport=transport, timeout=300,
                          headers={"X-Chainrule-Token": match["token"]}) as client:
            def starter(exercise_id: str, language: str) -> dict:
                answer = client.get(f"/api/exercises/{exercise_id}/starter", params={"language": language})
                assert answer.status_code == 200, answer.text
                return answer.json()

            def run(exercise_id: str, language: str, source: str) -> dict:
                answer = client.post("/api/grade", json={"exercise": exercise_id, "language": language, "source": source})
                assert answer.status_code == 200, answer.text
                return answer.json()

            ours = starter("engine-ops", "javascript")
            assert ours["carried_from"] is None and ours["source"] == starter_source("engine-ops", "javascript")
            mine = reference_source("engine-value", "javascript").replace("class Value {", "class Value {\n  // my own", 1)
            assert run("engine-value", "javascript", mine)["status"] == "pass"
            assert run("engine-value", "javascript", starter_source("engine-value", "javascript"))["status"] == "fail"
            carried = starter("engine-ops", "javascript")
            assert carried["carried_from"] == "engine-value" and "// my own" in carried["source"]
            assert "chainrule exercise: engine-ops" in carried["source"]
            assert "chainrule exercise: engine-value" not in carried["source"]
            assert starter("engine-ops", "python")["carried_from"] is None  # each language carries its own code
            page = client.get(f"/api/lessons/{CAPSTONE}").json()
            steps = {e["id"]: e for e in page["exercises"]}
            assert steps["engine-ops"]["continues"] == "engine-value" and steps["engine-value"]["continues"] is None
            assert steps["engine-training"]["downloads"] == ["python", "javascript", "typescript"]

            download = "/api/exercises/engine-training/passing-code"
            assert client.get(download, params={"language": "python"}).status_code == 404
            for language in LANGUAGES:
                assert run("engine-training", language, reference_source("engine-training", language))["status"] == "pass"
                got = client.get(download, params={"language": language})
                assert got.status_code == 200 and "attachment" in got.headers["content-disposition"]
                said = run_on_its_own(tmp_path, language, got.text)
                assert re.search(r"\d+ of 40 points on the right side", said), said
    finally:
        stop(process)


@pytest.mark.parametrize("exercise_id,variant,name", [
    ("engine-value", "assigned", "assigned-not-added"), ("engine-value", "no-chain", "not-times-out-grad"),
    ("engine-value", "mul-swapped", "mul-swapped"), ("engine-ops", "tanh-of-input", "tanh-of-input"),
    ("engine-ops", "pow-not-lowered", "pow-not-lowered"), ("engine-backward", "recursive", "recursive-not-topological"),
])
def test_the_other_replayed_mistakes_are_told_apart(exercise_id, variant, name):
    """A run whose numbers are a replayed mistake's: every test it fails names that mistake (the graphs' numbers
    by the float replay, independent of the engine that computed the expected ones)."""
    from chainrule.grading.diagnoses import diagnose_run
    from chainrule.grading.rounding import all_same_graded

    exercise = get_exercise(exercise_id)
    cases = list(exercise.cases)
    raws = [simulate_graph(case.inputs, variant) for case in cases]
    failing = [not all_same_graded(raw, case.expected) for raw, case in zip(raws, cases)]
    assert any(failing)
    mistakes = diagnose_run(exercise, cases, raws, failing).mistakes
    assert {m for m, fails in zip(mistakes, failing) if fails} == {name}


@pytest.mark.parametrize("variant,name", [("not-zeroed", "not-zeroed"), ("summed", "summed"), ("ascent", "ascent"),
                                          ("zeroed-after-backward", "not-moved")])
def test_the_training_mistakes_are_told_apart(variant, name):
    from chainrule.grading.diagnoses import diagnose_run

    exercise = get_exercise("engine-training")
    cases = list(exercise.cases)
    raws = [train_variant(case.inputs, variant) for case in cases]
    mistakes = diagnose_run(exercise, cases, raws, [True] * len(cases)).mistakes
    assert set(mistakes) == {name}


@needs_torch
@pytest.mark.parametrize("language", ["python", "javascript"])
def test_the_drawn_network_is_the_learners_own_graph_and_matches_torch(language, grade_once):
    """The case marked "drawn" walks the learner's own graph of a 2-2-1 network at one point (through the real
    sandbox): its output and every parameter's leaf hold the numbers PyTorch gives for the same weights."""
    passed, _ = graded_reference_and_starter(grade_once, "engine-network", language)
    drawn = next(t for t in passed["tests"] if t["name"] == "the network drawn")
    assert drawn["status"] == "pass" and all("graph" not in t for t in passed["tests"] if t is not drawn)
    nodes = drawn["graph"]["nodes"]
    assert 20 <= len(nodes) <= 40 and {n["op"] for n in nodes} == {"", "+", "*", "tanh"}
    assert all(all(i < n["id"] for i in n["inputs"]) and (n["op"] == "") == (not n["inputs"]) for n in nodes)
    task = next(c for c in get_exercise("engine-network").cases if c.name == "the network drawn").args[1]
    layers, forward = torch_mlp(task["sizes"], task["params"])
    out = forward(torch.tensor(task["points"][0], dtype=F64))
    out.sum().backward()
    assert close([nodes[-1]["data"], nodes[-1]["grad"]], [out.item(), 1.0], rel=1e-9, abs_=1e-9)
    leaves = {n["data"]: n["grad"] for n in nodes if not n["inputs"]}
    for param, grad in zip(task["params"], grads_in_engine_order(layers)):
        assert math.isclose(leaves[param], grad, rel_tol=1e-8, abs_tol=1e-9), param
    assert all(isinstance(n["data_text"], str) and isinstance(n["grad_text"], str) for n in nodes)


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_the_page_draws_the_carried_graph_box_for_box(language, grade_once):
    """What the page gets to draw of the carried graph (web/drawn_graphs.py): one box per node of the learner's
    walk, one edge per input, each box with the result's own texts, laid out to fit a lesson's frame at 1280 px
    (upright: the network is too deep to run left to right) and in the narrow shape for a phone."""
    from chainrule.drawing import SHAPES
    from chainrule.web.drawn_graphs import with_drawn_graphs

    passed, _ = graded_reference_and_starter(grade_once, "engine-network", language)
    shown = with_drawn_graphs(passed)
    drawn = next(t for t in shown["tests"] if t["name"] == "the network drawn")
    assert all("drawing" not in t for t in shown["tests"] if t is not drawn)
    nodes, drawing = drawn["graph"]["nodes"], drawn["drawing"]
    assert sorted(n["walked"] for n in drawing["nodes"]) == list(range(len(nodes)))
    by_id = {n["id"]: n for n in drawing["nodes"]}
    symbols = {"": "", "+": "+", "*": "*", "tanh": "tanh"}
    for entry in drawing["nodes"]:
        carried = nodes[entry["walked"]]
        assert [by_id[i]["walked"] for i in entry["inputs"]] == carried["inputs"]
        assert (entry["data_text"], entry["grad_text"]) == (carried["data_text"], carried["grad_text"])
        assert entry["symbol"] == symbols[carried["op"]] and entry["leaf"] == (carried["op"] == "")
    assert by_id[drawing["output"]]["walked"] == len(nodes) - 1 and by_id[drawing["output"]]["label"] == "output"
    edges = sorted((i, n["id"]) for n in drawing["nodes"] for i in n["inputs"])
    for layout in drawing["layout"].values():
        assert set(layout["boxes"]) == set(by_id) and sorted((e["from"], e["to"]) for e in layout["edges"]) == edges
        assert set(layout["ops"]) == {n["id"] for n in drawing["nodes"] if n["inputs"]}
    assert drawing["layout"]["wide"]["width"] <= SHAPES["wide"]["most"]
    assert drawing["layout"]["wide"]["shape"] == "narrow"  # upright on a desktop too
