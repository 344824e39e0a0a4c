"""The path-sum view (chainrule.lessons.plot_paths): every path's local derivatives and product against a hand
derivation, every input's sum of products against PyTorch autograd, the shared inner node's gradient against
PyTorch's gradient of that node, the multiplication counts counted by hand, and bad specs refused with a clear
message (by `lesson_plot` and by `chainrule lessons check`)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chainrule.lessons.loader import lesson_folder, loaded_lesson
from chainrule.lessons.plot_paths import MAX_PATHS
from chainrule.lessons.plots import lesson_plot, plot_number
from chainrule.lessons.text import LessonDataError
from reference_torch import needs_torch, torch

ROOT = Path(__file__).resolve().parent.parent
LESSON = "forward-and-reverse-mode"


@pytest.fixture(scope="module")
def plot():
    """The lesson's own sweeps plot, with its path-sum view, computed once."""
    return lesson_plot(loaded_lesson(LESSON)["see_it_work"]["plot"])


def function(plot, name):
    return next(f for f in plot["paths"]["functions"] if f["name"] == name)


def test_the_plain_graph_path_by_path_by_hand(plot):
    """y = x·o, o = tanh(u), u = w·x at x = 0.5, w = 2: the local derivatives are du/dx = w, du/dw = x,
    do/du = 1 - o², dy/do = x and dy/dx (y's own x) = o. Three paths: x→u→o→y, x→y, w→u→o→y."""
    x, w = 0.5, 2.0
    o = math.tanh(w * x)
    plain = function(plot, "plain")
    found = {tuple(p["nodes"]): p for p in plain["paths"]}
    expected = {("x", "u", "o", "y"): [w, 1 - o * o, x], ("x", "y"): [o], ("w", "u", "o", "y"): [x, 1 - o * o, x]}
    assert set(found) == set(expected)
    for nodes, locals_ in expected.items():
        path = found[nodes]
        assert [s["local"] for s in path["steps"]] == pytest.approx(locals_, rel=1e-12)
        assert path["product"] == pytest.approx(math.prod(locals_), rel=1e-12)
    # u is the inner node two paths pass: both share u→o→y, whose gradient dy/du = (1 - o²)·x.
    assert found[("x", "u", "o", "y")]["shared_node"] == found[("w", "u", "o", "y")]["shared_node"] == "u"
    assert found[("x", "u", "o", "y")]["shared_from"] == 1
    assert found[("w", "u", "o", "y")]["shared_gradient"] == pytest.approx((1 - o * o) * x, rel=1e-12)
    assert found[("x", "y")]["shared_node"] is None
    # 5 edges (w→u, x→u, u→o, o→y, x→y); path by path 3 + 1 + 3 multiplications.
    assert (len(plain["paths"]), plain["edges"], plain["path_multiplications"], plain["reverse_multiplications"]) \
        == (3, 5, 7, 5)


@needs_torch
def test_every_sum_of_paths_is_pytorchs_gradient_and_the_backward_pass(plot):
    """The six-input function: every input's path products add up to PyTorch's gradient, and to the engine's
    backward pass; every path's product is the hand chain x_j' · (1 - h²) · (h, h or 1)."""
    gather = function(plot, "gather-paths")
    values = {"x1": 0.5, "x2": -1.0, "x3": 2.0, "x4": 0.25, "x5": 1.0, "x6": -0.5}
    leaves = {name: torch.tensor(v, dtype=torch.float64, requires_grad=True) for name, v in values.items()}
    t = {name: leaves[name] for name in leaves}
    pair = t["x1"] * t["x2"]
    pair.retain_grad()
    h = torch.tanh(pair + t["x3"] * t["x4"] + t["x5"] * t["x6"])
    y = h * h + h
    y.backward()
    partner = {"x1": "x2", "x2": "x1", "x3": "x4", "x4": "x3", "x5": "x6", "x6": "x5"}
    hv = h.item()
    for entry in gather["inputs"]:
        assert entry["path_sum"] == pytest.approx(leaves[entry["name"]].grad.item(), rel=1e-12)
        assert entry["gradient"] == pytest.approx(entry["path_sum"], rel=1e-12)
        own = sorted(p["product"] for p in gather["paths"] if p["input"] == entry["name"])
        inner = values[partner[entry["name"]]] * (1 - hv * hv)
        assert own == pytest.approx(sorted([inner * hv, inner * hv, inner]), rel=1e-12)
    first = gather["paths"][0]
    assert first["shared_node"] == "t1" and first["shared_gradient"] == pytest.approx(pair.grad.item(), rel=1e-12)


def test_the_counts_by_hand(plot):
    """Each input reaches h by one chain, then y by three paths (h·h's two operands and h itself): x1..x4 pass
    two sums (paths of 6, 6 and 5 edges), x5 and x6 one (5, 5, 4): 18 paths, 4·17 + 2·14 = 96 multiplications.
    Edges: 6 into the products, 2 + 2 into the sums, 1 into tanh, 2 into h·h, 2 into y: 15."""
    assert [plot_number(plot, "gather-paths", f) for f in
            ("paths", "edges", "path_multiplications", "reverse_multiplications")] == [18, 15, 96, 15]
    assert plot_number(plot, "gather", "reverse_sweeps") == 1  # the sweeps' own placeholders still answer


def spec(**changes):
    return {"kind": "paths", "functions": [{"name": "f", "label": "f", "inputs": {"x": 0.5}, "output": "x * x"} | changes]}


@pytest.mark.parametrize(("bad", "message"), [
    (spec(let=[["a", "x * x"], ["b", "a * a"], ["c", "b * b"], ["d", "c * c"]], output="d * d"),
     f"more than {MAX_PATHS} paths"),
    (spec(output="relu(x - 0.5)"), "sits on a kink"),
    (spec(output="x"), "not be one of them"),
    (spec(inputs={"y": 1}, output="y * y"), "the output is called y"),
    (spec(let=[["a", "x"]], output="a * a"), "not rename a value"),
    (spec(output=None), "output must be one expression"),
    (spec(output="x * z"), "uses z"),
    ({"kind": "paths"}, "needs \"functions\""),
    ({"kind": "sweeps", "functions": [{"name": "f", "label": "f", "inputs": {"x": 1}, "outputs": ["x * x"]}],
      "paths": spec()}, "both a sweeps function and a paths function"),
])
def test_bad_specs_are_refused_with_what_is_wrong(bad, message):
    with pytest.raises(LessonDataError, match=message.replace("(", r"\(")):
        lesson_plot(bad)


def test_lessons_check_refuses_a_bad_paths_spec(tmp_path):
    folder = tmp_path / LESSON
    shutil.copytree(lesson_folder(LESSON), folder)
    data = json.loads((folder / "lesson.json").read_text(encoding="utf-8"))
    data["see_it_work"]["plot"]["paths"]["functions"][0]["output"] = "relu(x - 0.5)"
    (folder / "lesson.json").write_text(json.dumps(data), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "chainrule", "lessons", "check", "--no-grading", str(folder)],
                            capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "sits on a kink" in result.stdout + result.stderr


def test_the_docs_state_the_limit_the_code_keeps():
    assert f"more than {MAX_PATHS} paths is refused" in (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")


def test_the_docs_example_is_a_spec_the_engine_computes():
    """authoring.md's example of the kind is the lesson's plain graph: its three paths and five edges."""
    text = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    block = next(part.split("```", 1)[0] for part in text.split("```json\n")[1:] if '"kind": "paths"' in part)
    example = lesson_plot(json.loads("{" + block + "}")["plot"])
    assert [plot_number(example, "plain", f) for f in ("paths", "edges")] == [3, 5]
