"""Driven plots (chainrule.lessons.plot_driven, web/routes_driven.py): every number the engine computes on
request against an independent run (a hand-written NumPy loop for gradient descent and for the network's
training, the exact derivative by hand for the nudge), the limits refused with a message that says what is
allowed, and driven.json checked by `lessons check`."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from chainrule.lessons.loader import lesson_folder
from chainrule.lessons.plot_driven import LIMITS, DrivenError, drive, driven_problems, read_driven
from chainrule.nn import MLP
from lesson_app_client import lesson_app_client

TOKEN = "driven-plots-token-0123456789"
DESCENT, NETWORK, SLOPES = "gradient-descent-linear-regression", "a-network-learns", "slopes-and-the-chain-rule"


def spec_of(lesson: str) -> dict:
    (spec,) = read_driven(lesson_folder(lesson))
    return spec


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with lesson_app_client(tmp_path_factory.mktemp("data"), TOKEN, 8766) as test_client:
        yield test_client


def numpy_descent(xs, ys, lr, steps, w, b):
    """Gradient descent on the mean squared error, its gradient written out by hand: d/dw = 2 mean(r x),
    d/db = 2 mean(r) with r = w x + b - y."""
    x, y = np.array(xs, dtype=float), np.array(ys, dtype=float)
    rows = []
    for _ in range(steps + 1):
        r = w * x + b - y
        rows.append((w, b, float(np.mean(r * r))))
        w, b = w - lr * 2 * float(np.mean(r * x)), b - lr * 2 * float(np.mean(r))
    return rows


@pytest.mark.parametrize("lr, w, b", [(0.08, -1.0, 2.0), (0.005, 3.0, -4.0), (0.16, 0.0, 0.0)])
def test_the_descent_is_the_numpy_loop_for_the_chosen_rate_and_start(lr, w, b):
    spec = spec_of(DESCENT)
    plot = drive(spec, {"lr": lr, "w": w, "b": b})
    expected = numpy_descent(spec["xs"], spec["ys"], lr, spec["steps"], w, b)
    assert len(plot["frames"]) == spec["steps"] + 1 and not plot["diverged"]
    for frame, (ew, eb, loss) in zip(plot["frames"], expected):
        assert frame["w"] == pytest.approx(ew, rel=1e-9, abs=1e-12)
        assert frame["b"] == pytest.approx(eb, rel=1e-9, abs=1e-12)
        assert frame["loss"] == pytest.approx(loss, rel=1e-9, abs=1e-12)
    last, first = plot["frames"][-1]["loss"], plot["frames"][0]["loss"]
    # The largest curvature of this loss is 13.4 (twice the larger eigenvalue of [[6, 2], [2, 1]]): a rate above
    # 2 / 13.4 = 0.149 overshoots further each step.
    assert (last > first) == (lr > 0.149)


def test_the_loss_map_is_the_loss_at_each_grid_point_and_its_lowest_point():
    spec = spec_of(DESCENT)
    surface = drive(spec, {})["surface"]
    (w0, w1), (b0, b1) = spec["surface"]["w"], spec["surface"]["b"]
    cells = surface["cells"]
    ws = np.linspace(w0, w1, cells + 1)
    bs = np.linspace(b1, b0, cells + 1)
    x, y = np.array(spec["xs"], dtype=float), np.array(spec["ys"], dtype=float)
    losses = np.array([[np.mean((w * x + b - y) ** 2) for w in ws] for b in bs]).ravel()
    levels = np.array(surface["levels"])
    assert levels[0] > losses.min() and levels[-1] < losses.max() and np.all(np.diff(np.log(levels)) > 0)
    assert surface["bands"] == [int((loss > levels).sum()) for loss in losses]
    best = int(losses.argmin())
    assert (surface["lowest"]["w"], surface["lowest"]["b"]) == pytest.approx((ws[best % (cells + 1)], bs[best // (cells + 1)]))


def test_a_diverging_rate_keeps_the_frames_it_could_compute():
    spec = dict(spec_of(DESCENT), steps=500)
    plot = drive(spec, {"lr": 1.0})
    assert plot["diverged"] and 1 < len(plot["frames"]) < 501
    assert plot["frames"][-1]["loss"] > 1e200


def numpy_network_losses(points, labels, model: MLP, lr: float, steps: int) -> list[float]:
    """The moons' training by hand in NumPy from the engine's starting weights: two ReLU layers and a linear
    output, the mean hinge loss, its gradient written out layer by layer, then w -= lr * grad."""
    (l1, l2, l3) = model.layers
    weights = [np.array([[v.data for v in n.w] for n in layer.neurons]) for layer in (l1, l2, l3)]
    biases = [np.array([n.b.data for n in layer.neurons]) for layer in (l1, l2, l3)]
    x, y = np.array(points, dtype=float), np.array(labels, dtype=float)
    losses = []
    for step in range(steps + 1):
        z1 = x @ weights[0].T + biases[0]
        h1 = np.maximum(z1, 0)
        z2 = h1 @ weights[1].T + biases[1]
        h2 = np.maximum(z2, 0)
        s = (h2 @ weights[2].T + biases[2])[:, 0]
        margin = 1 - y * s
        losses.append(float(np.mean(np.maximum(margin, 0))))
        if step == steps:
            break
        ds = (-y * (margin > 0) / len(y))[:, None]
        dz2 = (ds @ weights[2]) * (z2 > 0)
        dz1 = (dz2 @ weights[1]) * (z1 > 0)
        grads = [(dz1.T @ x, dz1.sum(0)), (dz2.T @ h1, dz2.sum(0)), (ds.T @ h2, ds.sum(0))]
        for k, (gw, gb) in enumerate(grads):
            weights[k] = weights[k] - lr * gw
            biases[k] = biases[k] - lr * gb
    return losses


@pytest.mark.parametrize("width, lr, seed", [(8, 1.0, 1), (3, 0.5, 7), (16, 0.1, 0)])
def test_the_network_trains_as_a_numpy_run_from_the_same_start(width, lr, seed):
    spec = spec_of(NETWORK)
    plot = drive(spec, {"width": width, "lr": lr, "seed": seed})
    run = plot["run"]
    model = MLP(2, [width, width, 1], activation="relu", rng=random.Random(seed))
    losses = numpy_network_losses(plot["points"], plot["labels"], model, lr, spec["steps"])
    assert [frame["step"] for frame in run["frames"]] == list(range(0, spec["steps"] + 1, spec["every"]))
    for frame in run["frames"]:
        assert frame["loss"] == pytest.approx(losses[frame["step"]], rel=1e-9, abs=1e-12), frame["step"]
    assert run["parameters"] == 3 * width + (width + 1) * width + width + 1
    assert len(run["frames"][-1]["scores"]) == (spec["cells"] + 1) ** 2


def test_the_nudge_error_against_the_exact_slope():
    """f = (2x + 1)^2 has slope 4 (2x + 1) exactly; (f(x + h) - f(x)) / h = 4 (2x + 1) + 4h by hand, so the
    error is 4h until rounding in f(x + h) - f(x) takes over, and it grows again at the tiniest h."""
    spec = spec_of(SLOPES)
    for at in (1.0, -1.5):
        plot = drive(spec, {"at": at, "h": 1e-3})
        assert plot["slope"] == 4 * (2 * at + 1)
        assert plot["chosen_nudge"]["error"] == pytest.approx(4e-3, rel=1e-6)
        by_h = {row["h"]: row["error"] for row in plot["nudges"]}
        assert sorted(by_h, reverse=True) == [10.0 ** -k for k in range(16)]
        for h in (1.0, 0.1, 1e-2, 1e-3, 1e-4):
            assert by_h[h] == pytest.approx(4 * h, rel=1e-6)
        smallest = min(by_h.values())
        assert by_h[1e-15] > 1000 * smallest  # the rounding error is visible at the tiny end


@pytest.mark.parametrize("lesson, values, says", [
    (DESCENT, {"lr": 2.0}, "lr (learning rate) = 2 is not allowed: choose a number from 0 to 1"),
    (DESCENT, {"rate": 0.1}, "unknown control 'rate': a descent plot's controls are lr, w, b"),
    (NETWORK, {"width": 17}, "width (neurons per hidden layer) = 17 is not allowed: choose a whole number from 1 to 16"),
    (NETWORK, {"seed": 2.5}, "seed (seed of the starting weights) = 2.5 is not allowed: choose a whole number from 0 to 1000"),
    (SLOPES, {"h": 0.0}, "h (the nudge h) = 0 is not allowed: choose a number from 1e-15 to 1"),
])
def test_values_out_of_their_limits_are_refused_saying_what_is_allowed(lesson, values, says):
    with pytest.raises(DrivenError) as refused:
        drive(spec_of(lesson), values)
    assert str(refused.value) == says


def test_the_api_serves_the_sliders_and_computes_a_plot_with_every_text(client):
    listed = client.get(f"/api/lessons/{DESCENT}/driven")
    assert listed.status_code == 200, listed.text
    (plot,) = listed.json()["plots"]
    lr = next(control for control in plot["controls"] if control["name"] == "lr")
    assert lr["label"] == LIMITS["descent"]["lr"][0] and lr["start_text"] == "0.05" and "0.16" in lr["values_text"]
    answer = client.post(f"/api/lessons/{DESCENT}/driven/descent", json={"values": {"lr": 0.08, "w": -1}})
    assert answer.status_code == 200, answer.text
    last = answer.json()["frames"][-1]
    assert {"w_text", "b_text", "loss_text"} <= set(last)
    assert len(answer.json()["surface"]["levels_text"]) == len(answer.json()["surface"]["levels"])
    nudge = client.post(f"/api/lessons/{SLOPES}/driven/nudge", json={"values": {"h": 1e-5}}).json()["chosen_nudge"]
    assert nudge["ratio_text"] != "12"  # 12.00004: an estimate never reads as exact


@pytest.mark.parametrize("body, status, says", [
    ({"values": {"lr": "0.1"}}, 422, "a control's value is a JSON number, such as 0.05 (not text, not true or false)"),
    ({"values": {"lr": True}}, 422, "a control's value is a JSON number, such as 0.05 (not text, not true or false)"),
    ({"values": {"lr": 5}}, 422, "lr (learning rate) = 5 is not allowed"),
    ({"lr": 0.1}, 422, "Extra inputs are not permitted"),
])
def test_the_api_refuses_bad_values_with_a_clear_message(client, body, status, says):
    answer = client.post(f"/api/lessons/{DESCENT}/driven/descent", json=body)
    assert answer.status_code == status and says in answer.json()["detail"], answer.text


def test_an_unknown_driven_plot_is_a_404_naming_those_there_are(client):
    answer = client.post(f"/api/lessons/{DESCENT}/driven/moons", json={})
    assert answer.status_code == 404
    assert answer.json()["detail"] == f"lesson {DESCENT!r} has no driven plot 'moons': its driven plots are descent"


def test_the_lessons_driven_plots_pass_the_check_and_bad_ones_are_named(tmp_path):
    for lesson in (DESCENT, NETWORK, SLOPES):
        found: list[str] = []
        driven_problems(lesson_folder(lesson), lambda path, message, **where: found.append(message))
        assert found == [], lesson
    bad = [
        dict(spec_of(DESCENT), steps=501),
        dict(spec_of(NETWORK), name="wide", controls={"width": {"values": [8, 32], "start": 8}}),
        dict(spec_of(SLOPES), name="flat", expression="2"),
        dict(spec_of(SLOPES), name="moved", section="09"),
        dict(spec_of(SLOPES), name="spin", controls={"spin": {"values": [1, 2], "start": 1}}),
    ]
    (tmp_path / "driven.json").write_text(json.dumps({"plots": bad}), encoding="utf-8")
    found = []
    driven_problems(tmp_path, lambda path, message, **where: found.append(message))
    assert found == [
        "driven plot 'descent': steps must be a whole number from 1 to 500",
        "driven plot 'wide': width (neurons per hidden layer) = 32 is not allowed: choose a whole number from 1 to 16",
        "driven plot 'flat': the expression must have exactly one input name, not []",
        "driven plot 'moved': needs a \"title\" and a \"section\", one of 02, 03, 04",
        "driven plot 'spin': controls must be an object whose keys are among at, h",
    ]
