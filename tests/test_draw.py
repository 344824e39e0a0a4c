"""Pictures: SVG that parses as XML and shows every node, DOT and text that name every node."""

from __future__ import annotations

import math
import random
import re
import xml.etree.ElementTree as ET

import pytest

import chainrule
from chainrule import Value
from chainrule.drawing import draw
from chainrule.expr import parse
from chainrule.traces import trace

SVG = "{http://www.w3.org/2000/svg}"


def section03():
    a, b, c, f = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c"), Value(-2.0, label="f")
    e = a * b
    e.label = "e"
    d = e + c
    d.label = "d"
    L = d * f
    L.label = "L"
    return L


def mlp(seed=0, hidden=4):
    """A small one-hidden-layer net as an expression: about 60 nodes."""
    rng = random.Random(seed)
    terms = []
    for h in range(hidden):
        s = " + ".join(f"w{h}{i}*x{i}" for i in range(3)) + f" + b{h}"
        terms.append(f"v{h}*tanh({s})")
    expr = parse(" + ".join(terms))
    out, _ = expr.build({n: rng.uniform(-1, 1) for n in expr.names})
    return out


def groups(root, cls):
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


def test_svg_is_xml_with_every_node_op_and_edge():
    out = mlp()
    t = trace(out)
    root = ET.fromstring(draw(out, format="svg"))
    assert root.tag == f"{SVG}svg"
    values = {g.get("data-node"): g for g in groups(root, "value")}
    assert set(values) == {n["id"] for n in t["nodes"]}
    ops = {g.get("data-node") for g in groups(root, "op")}
    assert ops == {n["id"] for n in t["nodes"] if n["inputs"]}
    for g in groups(root, "op"):
        assert g.find(f"{SVG}ellipse") is not None
    edges = [(p.get("data-from"), p.get("data-to")) for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]
    expected = [(src, n["id"]) for n in t["nodes"] for src in n["inputs"]]
    assert sorted(edges) == sorted(expected)
    assert len(t["nodes"]) >= 55


def test_svg_boxes_show_label_data_and_grad_of_the_spec_graph():
    root = ET.fromstring(chainrule.draw(section03()))
    texts = {g.get("data-label"): [t.text for t in g.iter(f"{SVG}text")] for g in groups(root, "value")}
    # Spec section 03: dL/da = 6, dL/db = -4, e = -6 with gradient -2.
    assert texts["a"] == ["a", "data 2", "grad 6"]
    assert texts["b"] == ["b", "data -3", "grad -4"]
    assert texts["e"] == ["e", "data -6", "grad -2"]
    assert "output" in next(g for g in groups(root, "value") if g.get("data-label") == "L").get("class")


def box_rects(svg_text):
    root = ET.fromstring(svg_text)
    rects = []
    for g in groups(root, "value"):
        r = g.find(f"{SVG}rect")
        rects.append((float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height"))))
    view = [float(v) for v in root.get("viewBox").split()]
    return rects, view


@pytest.mark.parametrize("seed", [0, 1])
def test_svg_layout_has_no_overlapping_boxes_and_fits_the_picture(seed):
    rects, (_, _, width, height) = box_rects(draw(mlp(seed), format="svg"))
    for i, (x, y, w, h) in enumerate(rects):
        assert 0 <= x and x + w <= width and 0 <= y and y + h <= height
        for x2, y2, w2, h2 in rects[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y, "boxes overlap"


def test_inputs_left_output_right():
    out = section03()
    root = ET.fromstring(draw(out))
    x = {g.get("data-label"): float(g.find(f"{SVG}rect").get("x")) for g in groups(root, "value")}
    assert x["a"] < x["e"] < x["d"] < x["L"]
    assert x["L"] == max(x.values())


def test_labels_are_escaped():
    a = Value(1.0, label='<b>&"quote"')
    b = Value(2.0, label="x]]>y")
    out = a * b
    svg = draw(out)
    root = ET.fromstring(svg)
    labels = {g.get("data-label") for g in groups(root, "value")}
    assert '<b>&"quote"' in labels and "x]]>y" in labels
    dot = draw(out, format="dot")
    assert 'label="<b>&\\"quote\\"\\ndata 1' in dot
    assert ET.fromstring(svg).get("aria-label") is not None


def test_dot_names_every_node_and_edge():
    out = mlp()
    t = trace(out)
    dot = draw(out, format="dot")
    assert dot.startswith("digraph chainrule {") and dot.rstrip().endswith("}")
    for n in t["nodes"]:
        assert re.search(rf"^  {n['id']} \[.*label=\"{re.escape(n['label'])}\\n", dot, re.M), n["id"]
        for src in n["inputs"]:
            assert f"  {src} -> {n['id']}_op;" in dot
    assert dot.count("{") == dot.count("}")


def test_text_table_lists_every_node():
    out = section03()
    text = draw(out, format="text")
    lines = text.splitlines()
    assert lines[0].split() == ["node", "label", "op", "formula", "data", "grad"]
    rows = {line.split()[1]: line.split() for line in lines[2:]}
    assert set(rows) == {"a", "b", "c", "f", "e", "d", "L"}
    assert rows["a"][-2:] == ["2", "6"] and rows["b"][-2:] == ["-3", "-4"]
    assert "e = a × b" in text


def test_repr_svg_and_stored_grads():
    out = section03()
    assert ET.fromstring(out._repr_svg_()).tag == f"{SVG}svg"
    # Before backward() every stored .grad is 0; "trace" shows d out/d node anyway.
    stored = draw(out, format="text", grads="stored")
    assert {line.split()[-1] for line in stored.splitlines()[2:]} == {"0"}


def test_bad_format_is_a_clear_error():
    with pytest.raises(ValueError, match="svg, dot, text"):
        draw(section03(), format="png")


def test_chainrule_draw_stays_the_function_after_module_import():
    import importlib

    module = importlib.import_module("chainrule.drawing")

    out = section03()
    assert chainrule.draw(out, format="text") == module.draw(out, format="text")


def test_narrow_layout_runs_top_to_bottom_without_overlaps():
    from chainrule.drawing import geometry

    g = geometry(trace(section03()), "narrow")
    y = {n["label"]: g["boxes"][n["id"]]["y"] for n in trace(section03())["nodes"]}
    assert y["a"] < y["e"] < y["d"] < y["L"] and y["L"] == max(y.values())
    for seed in (0, 1):
        g = geometry(trace(mlp(seed)), "narrow")
        w, h = g["box"]["w"], g["box"]["h"]
        corners = list(g["boxes"].values())
        for i, a in enumerate(corners):
            assert 0 <= a["x"] and a["x"] + w <= g["width"] and 0 <= a["y"] and a["y"] + h <= g["height"]
            for b in corners[i + 1:]:
                assert a["x"] + w <= b["x"] or b["x"] + w <= a["x"] or a["y"] + h <= b["y"] or b["y"] + h <= a["y"]


@pytest.mark.parametrize("shape", ["wide", "narrow"])
def test_edge_labels_stay_clear_of_arrowheads(shape):
    """An edge label (at most "+= -0.1234", 10 characters of the page's 13 px monospace font: 80 px by
    15 px) starts next to the box its edge leaves; the arrowhead (9 px) sits at the edge's other end."""
    from chainrule.drawing import geometry

    label_w, label_h, arrow = 80, 15, 9
    for out in (section03(), mlp(0)):
        g = geometry(trace(out), shape)
        for edge in g["edges"]:
            end_x, end_y = (float(v) for v in edge["d"].split(",")[-1].split())
            x, y = edge["label"]["x"], edge["label"]["y"]
            left = x if edge["label"]["anchor"] == "start" else x - label_w
            box = (left, y - label_h + 3, left + label_w, y + 3)  # text sits on its baseline y
            apart = (box[0] > end_x + arrow or box[2] < end_x - arrow
                     or box[1] > end_y + arrow or box[3] < end_y - arrow)
            assert apart, (shape, edge)


def test_lesson_graphs_fit_a_phone_and_a_desktop_frame():
    """Every lesson graph fits the frame a page gives it: about 340 px on a 390 px phone (narrow) and
    1,170 px on a 1280 px desktop (wide), with boxes sized to their own text (issue 32 item 1)."""
    from chainrule.drawing import geometry
    from chainrule.lessons import build_lesson_graph, lesson_data

    for lesson in ("computational-graphs", "backprop", "gradient-descent-linear-regression"):
        for name in lesson_data(lesson)["graphs"]:
            t = trace(build_lesson_graph(lesson, name))
            assert geometry(t, "narrow")["width"] <= 340, (lesson, name)
            assert geometry(t, "wide")["width"] <= 1160, (lesson, name)


def test_every_box_is_as_wide_as_the_longest_text_it_shows():
    """Issue 32 item 2: the layout reads every text a box will show while the steps play (label, each
    value and gradient, "?") and sizes the box so that "data"/"grad" and the longest number fit side by
    side, and the label fits (at 12 px at least); long numbers widen the boxes that show them."""
    from chainrule.drawing import SHAPES, geometry, shown_texts, text_width

    a, b = Value(-999.9876, label="a"), Value(123.4567, label="a_long_name")
    out = (a * b).tanh() + a * b * 1e-9
    for t in (trace(out), trace(section03()), trace(mlp(1))):
        texts = shown_texts(t)
        for shape in ("wide", "narrow"):
            g, kind = geometry(t, shape), SHAPES[shape]["type"]
            for node in t["nodes"]:
                box, shown = g["boxes"][node["id"]], texts[node["id"]]
                room = box["w"] - 2 * g["type"]["pad"]
                assert box["label_size"] >= 12 and text_width(node["label"], box["label_size"]) <= room + 0.01
                for slot in ("data", "grad"):
                    widest = max(text_width(x, kind["number"]) for x in shown[slot])
                    assert text_width(slot, kind["slot"]) + widest + 4 <= room, (shape, node["label"], slot)
    # The product's data, -123455.1691 (12 characters), is in its box's texts and widens it.
    t = trace(out)
    product = next(n for n in t["nodes"] if n.get("formula", "").endswith("a × a_long_name"))
    assert "-123455.1691" in shown_texts(t)[product["id"]]["data"]
    narrow_boxes = geometry(trace(section03()), "narrow")["boxes"]
    assert geometry(t, "narrow")["boxes"][product["id"]]["w"] > max(b["w"] for b in narrow_boxes.values())


@pytest.mark.parametrize("shape", ["wide", "narrow"])
def test_edge_labels_are_clear_of_boxes_ops_and_each_other(shape):
    """An edge's label (its "+= ..." at a backward step, as wide as its longest text) touches no box and
    no op ellipse, and no other label shown at the same step (the edges into the same op)."""
    from chainrule.drawing import SHAPES, geometry, shown_texts, text_width

    size = SHAPES[shape]["type"]["edge"]
    x = Value(-0.123456, label="x")
    for out in (section03(), mlp(0), x * x * 3.5, (x * x).tanh() * x):
        t = trace(out)
        g, texts = geometry(t, shape), shown_texts(t)
        h = g["box"]["h"]
        obstacles = [(b["x"], b["y"], b["x"] + b["w"], b["y"] + h) for b in g["boxes"].values()]
        obstacles += [(o["cx"] - o["rx"], o["cy"] - o["ry"], o["cx"] + o["rx"], o["cy"] + o["ry"]) for o in g["ops"].values()]
        by_step: dict[str, list] = {}
        for edge in g["edges"]:
            w = text_width(texts[edge["to"]]["edges"][edge["input"]], size)
            left = edge["label"]["x"] - (w if edge["label"]["anchor"] == "end" else 0)
            r = (left, edge["label"]["y"] - 0.8 * size, left + w, edge["label"]["y"] + 0.25 * size)
            assert 0 <= r[0] and r[2] <= g["width"] and 0 <= r[1] and r[3] <= g["height"], (shape, edge)
            for o in obstacles + by_step.get(edge["to"], []):
                assert r[2] <= o[0] or o[2] <= r[0] or r[3] <= o[1] or o[3] <= r[1], (shape, edge, o)
            by_step.setdefault(edge["to"], []).append(r)


def test_every_lesson_graph_fits_the_lesson_frame_shortening_its_edges_if_it_must() -> None:
    """Issue 42 item 10: the forward-mode lesson's tangent graph, laid out with the usual runs, is wider than
    `most` (a lesson's frame at 1280 px); drawn with shorter runs, it and every other lesson graph fit, their
    boxes side by side in the same order and never overlapping."""
    from chainrule import drawing
    from chainrule.lessons import build_lesson_graph, lesson_data, lesson_ids

    size = drawing.SHAPES["wide"]
    tangent = trace(build_lesson_graph("forward-and-reverse-mode", "dual"))
    assert drawing._geometry(tangent, "wide", size)["width"] > size["most"]
    for lesson_id in lesson_ids():
        for name in lesson_data(lesson_id)["graphs"]:
            drawn = drawing.geometry(trace(build_lesson_graph(lesson_id, name)), "wide")
            assert drawn["width"] <= size["most"], (lesson_id, name, drawn["width"])
            columns = sorted({(box["x"], box["x"] + box["w"]) for box in drawn["boxes"].values()})
            assert all(right < next_left for (_, right), (next_left, _) in zip(columns, columns[1:])), (lesson_id, name)


# Section 03's graph as a learner's engine walks it (topological order: a, b, e = a*b, c, d = e + c, f, L = d*f),
# with the numbers of the spec worked by hand: L = -8; dL/dd = f = -2, dL/df = d = 4, dL/de = dL/dc = -2,
# dL/da = b × -2 = 6, dL/db = a × -2 = -4.
WALKED = [(op, data, grad, inputs) for op, data, grad, inputs in (
    ("", 2.0, 6.0, []), ("", -3.0, -4.0, []), ("*", -6.0, -2.0, [0, 1]), ("", 10.0, -2.0, []),
    ("+", 4.0, -2.0, [2, 3]), ("", -2.0, 4.0, []), ("*", -8.0, 1.0, [4, 5]))]


def walked_nodes():
    return [{"id": i, "op": op, "data": data, "grad": grad, "inputs": inputs,
             "data_text": f"{data:g}", "grad_text": f"{grad:g}"} for i, (op, data, grad, inputs) in enumerate(WALKED)]


def test_a_walked_graph_is_drawn_box_for_box_with_its_own_texts():
    from chainrule.drawing import geometry, page_layout, upright_layout, walked_trace

    t = walked_trace(walked_nodes(), 40)
    assert t is not None and len(t["nodes"]) == len(WALKED) and t["forward"] == t["backward"] == []
    by_walk = {n["walked"]: n for n in t["nodes"]}
    assert [by_walk[k]["label"] for k in range(len(WALKED))] == [
        "leaf 1", "leaf 2", "node 1", "leaf 3", "node 2", "leaf 4", "output"]
    assert by_walk[6]["formula"] == "output = node 2 × leaf 4" and by_walk[6]["id"] == t["output"]
    assert by_walk[4]["formula"] == "node 2 = node 1 + leaf 3"
    for k, (_, data, grad, inputs) in enumerate(WALKED):
        assert [n["walked"] for i in by_walk[k]["inputs"] for n in t["nodes"] if n["id"] == i] == inputs
        assert (by_walk[k]["data_text"], by_walk[k]["grad_text"]) == (f"{data:g}", f"{grad:g}")
    svg_texts = {g.get("data-label"): [x.text for x in g.iter(f"{SVG}text")]
                 for g in groups(ET.fromstring(chainrule.drawing.to_svg(t)), "value")}
    assert svg_texts["leaf 1"] == ["leaf 1", "data 2", "grad 6"] and svg_texts["output"] == ["output", "data -8", "grad 1"]
    assert len(geometry(t, "wide")["edges"]) == 6
    assert upright_layout(t) == page_layout(t)  # a shallow graph runs left to right on a desktop


def _changed(k, **fields):
    nodes = walked_nodes()
    nodes[k] = nodes[k] | fields
    return nodes


def _chain(count):
    """A chain of count nodes: a leaf, then tanh after tanh (each number's text its own)."""
    nodes, x = [{"id": 0, "op": "", "data": 0.5, "grad": 1.0, "inputs": [], "data_text": "0.5", "grad_text": "1"}], 0.5
    for i in range(1, count):
        x = math.tanh(x)
        nodes.append({"id": i, "op": "tanh", "data": x, "grad": 1.0, "inputs": [i - 1], "data_text": repr(x), "grad_text": "1"})
    return nodes


@pytest.mark.parametrize("nodes", [
    "not a list", [], _chain(41), walked_nodes()[:3] + ["a node"],
    _changed(2, id=7), _changed(2, inputs=[0, 2]), _changed(2, inputs=[0, -1]), _changed(2, inputs=[True, 1]),
    _changed(2, inputs="01"), _changed(2, op="<script>"), _changed(2, op="+", inputs=[0]),
    _changed(4, op="tanh"), _changed(0, op="+"), _changed(2, op=""), _changed(2, op=None),
    _changed(1, data=math.nan), _changed(1, data=math.inf, data_text="inf"), _changed(1, data=True), _changed(1, data="-3"),
    _changed(1, data_text="<b>-3</b>"), _changed(1, data_text="-2.5"), _changed(1, grad_text=None),
    _changed(1, data_text="-3.0000000000000000000000"), _changed(1, data_text=" -3"),
    walked_nodes()[:5] + [walked_nodes()[5] | {"inputs": [], "op": ""}, walked_nodes()[6] | {"inputs": [4, 3]}],
], ids=lambda nodes: str(len(nodes)) if isinstance(nodes, list) else "text")
def test_a_malformed_or_oversized_walked_graph_is_refused(nodes):
    """Each way a carried graph can be wrong (the page gets nothing to draw, and nothing raises): not a list, no
    nodes, more than the bound, an id out of place, an input that is not an earlier node, an op the table does not
    have or with the wrong number of inputs, a number that is not finite or not a number, a text that is not its
    number's or is too long, a node the output does not depend on (leaf 4, after the last node's inputs change)."""
    from chainrule.drawing import walked_trace
    from chainrule.web.drawn_graphs import with_drawn_graphs

    assert walked_trace(nodes, 40) is None
    result = {"tests": [{"name": "drawn", "status": "pass", "graph": {"nodes": nodes}}]}
    assert "drawing" not in with_drawn_graphs(result)["tests"][0]


def test_only_a_passing_test_within_the_bound_is_drawn():
    from chainrule.drawing import walked_trace
    from chainrule.web.drawn_graphs import with_drawn_graphs

    assert walked_trace(_chain(40), 40) is not None and walked_trace(_chain(40), 39) is None
    tests = [{"name": "drawn", "status": status, "graph": {"nodes": walked_nodes()}} for status in ("pass", "fail")]
    shown = with_drawn_graphs({"tests": tests})["tests"]
    assert "drawing" in shown[0] and "drawing" not in shown[1]
    assert with_drawn_graphs({"status": "error"}) == {"status": "error"}
