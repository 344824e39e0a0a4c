"""Pictures of a graph that need nothing installed: SVG, Graphviz DOT text and a plain-text table.

`draw(output, format="svg")` lays the graph out in layers, inputs on the left and the output on the
right (`geometry(t, "narrow")`: inputs at the top, for a phone). Each value is a box showing its label, data and gradient; each op is an ellipse with its symbol
just left of the box it produces. The layout is our own (no Graphviz needed):

* layer of an interior node = 1 + the largest layer among its inputs; a leaf sits one layer left of
  its first user, so a bias added late is drawn next to where it is used;
* within a layer, nodes are ordered by the mean position of their neighbours (a few barycentre sweeps),
  which removes most edge crossings on the graphs of a lesson.

Every SVG element carries the trace node id (`data-node="n4"`, edges `data-from`/`data-to`), so a page
that animates `chainrule.trace` can light up the same picture.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any, Callable

from chainrule.engine import Value
from chainrule.ops import OPS, Op, apply
from chainrule.traces import format_number, graph_nodes, trace

__all__ = ["draw", "to_svg", "to_dot", "to_text", "layout", "geometry", "page_layout", "upright_layout", "walked_trace", "MOST_TEXT", "shown_texts", "text_width", "SHAPES"]

FORMATS = ("svg", "dot", "text")


def draw(output: Value, format: str = "svg", grads: str = "trace") -> str:
    """The graph behind `output` as SVG, DOT or a text table.

    grads="trace" shows d output/d node for every node (computed by `chainrule.trace`, whether or not
    `backward()` was called); grads="stored" shows each Value's own `.grad`.
    """
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; choose one of: {', '.join(FORMATS)}")
    if grads not in ("trace", "stored"):
        raise ValueError(f"grads must be 'trace' or 'stored', not {grads!r}")
    t = trace(output)
    if grads == "stored":
        for entry, value in zip(t["nodes"], graph_nodes(output)):
            entry["grad"] = value.grad
    if format == "svg":
        return to_svg(t)
    if format == "dot":
        return to_dot(t)
    return to_text(t)


def _num(node: dict[str, Any], key: str) -> str:
    """A node's data or grad as short text; null in the trace is nan or an infinity (see *_text)."""
    x = node[key]
    return node.get(f"{key}_text", "nan") if x is None else format_number(x)


# --- layout --------------------------------------------------------------------------------------

# Two shapes of the same layered layout: "wide" runs left to right (a desktop page, the CLI's SVG),
# "narrow" runs top to bottom (a phone). The lesson page receives both as data (`page_layout`) and only
# renders them, so the page and `chainrule graph` draw the same picture.
#
# Every box is as wide as the longest text it will ever show: the layout reads every text of the trace
# (the label, each value and gradient a step writes into the box, "?" before it has one), so no number
# prints over a label or out of its box. The text is set in a monospace font, whose characters all have
# one width, CHAR_EM of the font size (DejaVu Sans Mono, Menlo, Consolas and Liberation Mono: 0.55-0.61).
CHAR_EM = 0.62
MIN_TEXT = 12.0  # px: no text of the picture is smaller (a long label shrinks to this, then its box widens)

SHAPES: dict[str, dict[str, Any]] = {
    # type: font sizes in px of a box's label, its "data" and "grad" names, its numbers, an edge's label and
    # an op's symbol. pad: inside a box; slot_gap: between "data" and its number; gap: between boxes side by
    # side; run: the shortest edge before an op ellipse; link: from an ellipse to its box (arrowhead
    # included); margin: around it all; min_digits: the room for a number, at least (a box never looks
    # cramped); fit (wide only): the width a graph spreads out to when it can, by at most stretch per gap;
    # most (wide only): the width a graph shrinks its runs to keep within, down to shortest_run: a lesson's
    # graph frame at a 1280 px window is 1171 px wide, so no box is cut off there (issue 42 item 10); 5 px spare
    # (the softmax lesson's seven columns need 1,165 at the shortest run).
    "wide": {"type": {"label": 14.0, "slot": 13.0, "number": 14.0, "edge": 13.0, "symbol": 15.0},
             "pad": 7.0, "slot_gap": 8.0, "gap": 26.0, "run": 26.0, "link": 16.0, "fit": 900.0,
             "stretch": 64.0, "most": 1166.0, "shortest_run": 10.0, "margin": 12.0, "min_digits": 3},
    "narrow": {"type": {"label": 13.0, "slot": 12.0, "number": 13.0, "edge": 12.0, "symbol": 13.0},
               "pad": 6.0, "slot_gap": 6.0, "gap": 10.0, "run": 20.0, "link": 16.0, "margin": 12.0,
               "min_digits": 1},
}
BOX_H = 58.0
BASELINES = {"label": 17.0, "data": 35.0, "grad": 52.0}  # from a box's top
OP_RY = 15.0
EDGE_SPREAD = 10.0  # two inputs meet an op ellipse this far apart
EDGE_GAP = 5.0      # an edge label keeps this far from the box it belongs to


def text_width(text: str, size: float) -> float:
    """The width in px of `text` at font size `size` in a monospace font (a wide character, as in CJK, is
    two cells)."""
    cells = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1
                for ch in text)
    return cells * size * CHAR_EM


def _text(entry: dict[str, Any], key: str) -> str:
    """The text a page shows for entry[key]: the trace's own "<key>_text" (or the playground's display
    text) when it has one, else the one rule (format_number); null is nan or an infinity."""
    if f"{key}_text" in entry:
        return str(entry[f"{key}_text"])
    display = entry.get("display")
    if isinstance(display, dict) and key in display:
        return str(display[key])
    return "nan" if entry.get(key) is None else format_number(entry[key])


def shown_texts(t: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every text each box shows while the steps play, by node id: {"label", "data": {texts}, "grad": {texts},
    "edges": {position among the node's inputs: the longest "+= ..." its edge from that input shows}}."""
    texts: dict[str, dict[str, Any]] = {
        n["id"]: {"label": n["label"], "data": {"?", _text(n, "data")}, "grad": {"?", _text(n, "grad")}, "edges": {}}
        for n in t["nodes"]}
    inputs = {n["id"]: n["inputs"] for n in t["nodes"]}
    for step in t.get("forward", []):
        texts[step["node"]]["data"].add(_text(step, "value"))
    for step in t.get("backward", []):
        texts[step["node"]]["grad"].add(_text(step, "grad"))
        used: set[int] = set()
        for c in step.get("contributions", []):
            texts[c["input"]]["grad"].add(_text(c, "grad_after"))
            # The edge of this use: the first position of the node's inputs holding it not paired yet.
            position = next((k for k, p in enumerate(inputs[step["node"]]) if p == c["input"] and k not in used), None)
            if position is None:
                continue
            used.add(position)
            label = f"+= {_text(c, 'contribution')}"
            edges = texts[step["node"]]["edges"]
            if len(label) > len(edges.get(position, "")):
                edges[position] = label
    return texts


def _layer_numbers(nodes: list[dict[str, Any]], position: dict[str, int], users: list[list[int]]) -> list[int]:
    """Each node's layer: one past its latest input; a leaf just before its first user."""
    layer = [0] * len(nodes)
    for i, n in enumerate(nodes):  # nodes are in topological order
        if n["inputs"]:
            layer[i] = 1 + max(layer[position[p]] for p in n["inputs"])
    for i, n in enumerate(nodes):
        if not n["inputs"] and users[i]:
            layer[i] = max(0, min(layer[u] for u in users[i]) - 1)
    return layer


def _layers(t: dict[str, Any]) -> tuple[list[int], list[list[int]], list[float]]:
    """(layer of each node, node indices per layer in drawing order, rank of each node in its layer)."""
    nodes = t["nodes"]
    position = {n["id"]: i for i, n in enumerate(nodes)}
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for p in n["inputs"]:
            users[position[p]].append(i)

    layer = _layer_numbers(nodes, position, users)
    depth = max(layer) + 1
    columns: list[list[int]] = [[] for _ in range(depth)]
    for i in range(len(nodes)):
        columns[layer[i]].append(i)
    rank = [0.0] * len(nodes)
    for column in columns:
        for r, i in enumerate(column):
            rank[i] = r - (len(column) - 1) / 2

    def neighbours_mean(i: int, neighbours: list[int]) -> float:
        return sum(rank[j] for j in neighbours) / len(neighbours) if neighbours else rank[i]

    # Barycentre sweeps: right to left by users, then left to right by inputs.
    for _ in range(3):
        for column in reversed(columns):
            column.sort(key=lambda i: neighbours_mean(i, users[i]))
            for r, i in enumerate(column):
                rank[i] = r - (len(column) - 1) / 2
        for column in columns:
            column.sort(key=lambda i: neighbours_mean(i, [position[p] for p in nodes[i]["inputs"]]))
            for r, i in enumerate(column):
                rank[i] = r - (len(column) - 1) / 2
    return layer, columns, rank


def layout(t: dict[str, Any], shape: str = "wide") -> dict[str, tuple[float, float]]:
    """Top-left corner (x, y) of each value box, by node id, for a trace `t`."""
    return {node_id: (box["x"], box["y"]) for node_id, box in geometry(t, shape)["boxes"].items()}


def _box_widths(shown: dict[str, dict[str, Any]], size: dict[str, Any]) -> dict[str, float]:
    """The width each box needs for its longest texts (its label at MIN_TEXT at least), by node id."""
    kind = size["type"]
    widths = {}
    for node_id, texts in shown.items():
        numbers = max(text_width(slot, kind["slot"]) + size["slot_gap"] + max(text_width(x, kind["number"]) for x in texts[slot] | {"0" * size["min_digits"]})
                      for slot in ("data", "grad"))
        # A label longer than the numbers' room is set smaller (see _label_size) before its box widens.
        label = min(text_width(texts["label"], kind["label"]), text_width(texts["label"], MIN_TEXT))
        widths[node_id] = math.ceil(max(numbers, label) + 2 * size["pad"])
    return widths


def _across(box: dict[str, Any], wide: bool) -> float:
    """Where a box sits across the direction the graph runs: its top (left to right), its middle (upward)."""
    return float(box["y"]) if wide else float(box["x"] + box["w"] / 2)


def _label_size(label: str, box_w: float, size: dict[str, Any]) -> float:
    """The label's font size in a box of width box_w: the shape's own, or smaller down to MIN_TEXT."""
    own = float(size["type"]["label"])
    full, room = text_width(label, own), box_w - 2 * size["pad"]
    return own if full <= room else round(max(MIN_TEXT, own * room / full), 2)


def _op_rx(symbol: str, size: dict[str, Any]) -> float:
    return round(max(OP_RY, text_width(symbol, size["type"]["symbol"]) / 2 + 7), 1)


def _wide_boxes(nodes: list[dict[str, Any]], columns: list[list[int]], rank: list[float], width_of: list[float],
                size: dict[str, Any], op_room: Callable[[list[int]], float]) -> dict[str, dict[str, float]]:
    """Wide: one column per layer, as wide as its widest box, the columns spread to fit the shape's width."""
    margin = size["margin"]
    boxes: dict[str, dict[str, float]] = {}
    column_w = [max(width_of[i] for i in column) for column in columns]
    needs = [op_room(column) for column in columns[1:]]
    spare = size["fit"] - 2 * margin - sum(column_w) - sum(needs)
    extra = max(0.0, min(size["stretch"], spare / len(needs))) if needs else 0.0
    tallest = max(len(c) for c in columns)
    spread = BOX_H + size["gap"]
    x = margin
    for index, column in enumerate(columns):
        if index:
            x += column_w[index - 1] + needs[index - 1] + extra
        for i in column:
            y = margin + ((tallest - 1) / 2 + rank[i]) * spread
            boxes[nodes[i]["id"]] = {"x": round(x, 1), "y": round(y, 1), "w": column_w[index]}
    return boxes


def _narrow_boxes(nodes: list[dict[str, Any]], columns: list[list[int]], rank: list[float], width_of: list[float],
                  size: dict[str, Any], op_room: Callable[[list[int]], float]) -> dict[str, dict[str, float]]:
    """Narrow: one row per layer, its boxes side by side in rank order, each as wide as its own texts,
    every row centred on one axis."""
    margin = size["margin"]
    boxes: dict[str, dict[str, float]] = {}
    rows = []
    for column in columns:
        ordered = sorted(column, key=lambda i: rank[i])
        centres, at = {}, 0.0
        for before, i in zip([None, *ordered], ordered):
            at += 0.0 if before is None else (width_of[before] + width_of[i]) / 2 + size["gap"]
            centres[i] = at
        middle = (centres[ordered[0]] - width_of[ordered[0]] / 2 + centres[ordered[-1]] + width_of[ordered[-1]] / 2) / 2
        rows.append({i: centre - middle for i, centre in centres.items()})
    half = max(abs(centre) + width_of[i] / 2 for row in rows for i, centre in row.items())
    y = margin
    for index, column in enumerate(columns):
        if index:
            y += BOX_H + EDGE_LABEL_ROOM + op_room(column)
        for i in column:
            x = margin + half + rows[index][i] - width_of[i] / 2
            boxes[nodes[i]["id"]] = {"x": round(x, 1), "y": round(y, 1), "w": width_of[i]}
    return boxes


def _ops_and_edge_ends(nodes: list[dict[str, Any]], boxes: dict[str, dict[str, float]], rx: dict[str, float],
                       size: dict[str, Any], wide: bool) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Each op's ellipse beside its box, and each edge's two ends (its path is written once all shapes moved)."""
    ops: dict[str, dict[str, Any]] = {}
    ends: list[dict[str, Any]] = []
    for n in nodes:
        if not n["inputs"]:
            continue
        box = boxes[n["id"]]
        r = rx[n["id"]]
        if wide:
            cx, cy = box["x"] - size["link"] - r, box["y"] + BOX_H / 2
        else:
            cx, cy = box["x"] + box["w"] / 2, box["y"] - size["link"] - OP_RY
        ops[n["id"]] = {"cx": cx, "cy": cy, "rx": r, "ry": OP_RY}
        count = len(n["inputs"])
        # Two inputs meet the ellipse at two points, the nearer box at the nearer point (no crossing).
        slots = sorted(range(count), key=lambda k: (_across(boxes[n["inputs"][k]], wide), k))
        for k, source in enumerate(n["inputs"]):
            s = boxes[source]
            offset = (slots.index(k) - (count - 1) / 2) * EDGE_SPREAD
            if wide:
                start, end = (s["x"] + s["w"], s["y"] + BOX_H / 2), (cx - r, cy + offset)
            else:
                start, end = (s["x"] + s["w"] / 2, s["y"] + BOX_H), (cx + offset, cy - OP_RY)
            ends.append({"from": source, "to": n["id"], "input": k, "start": start, "end": end})
    return ops, ends


def geometry(t: dict[str, Any], shape: str = "wide") -> dict[str, Any]:
    """Every shape of the picture in one coordinate system (the one layout of a graph).

    {"shape", "width", "height", "box": {"w" (the widest box), "h"},
     "type": {"label", "slot", "number", "edge", "symbol": font sizes in px, "pad", "baselines"},
     "boxes": {id: {"x", "y", "w", "label_size"}}        top-left corners, widths, label font sizes,
     "ops": {id: {"cx", "cy", "rx", "ry", "link"}}     op ellipses, link: path from ellipse to its box,
     "edges": [{"from", "to", "input", "d", "label": {"x", "y", "anchor"}}]}
    Wide: one column per layer, as wide as its widest box; narrow: one row per layer, each box as wide as
    its own texts. An edge runs from its input's box to the op ellipse and ends in an arrowhead; its label
    (what flows back along it) sits beside the box the edge leaves, clear of every box, ellipse and
    arrowhead and of the labels shown with it.
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown layout shape {shape!r}; choose one of: {', '.join(SHAPES)}")
    size = SHAPES[shape]
    drawn = _geometry(t, shape, size)
    gaps = len(_layers(t)[1]) - 1
    if shape == "wide" and drawn["width"] > size["most"] and gaps:
        # Too wide for the page's frame: shorter edges between the layers, never shorter than shortest_run.
        shorter = max(size["shortest_run"], size["run"] - math.ceil((drawn["width"] - size["most"]) / gaps))
        drawn = _geometry(t, shape, {**size, "run": shorter})
    return drawn


def _geometry(t: dict[str, Any], shape: str, size: dict[str, Any]) -> dict[str, Any]:
    """geometry() with the sizes given."""
    wide = shape == "wide"
    nodes = t["nodes"]
    by_id = {n["id"]: n for n in nodes}
    layer, columns, rank = _layers(t)
    shown = shown_texts(t)
    needed = _box_widths(shown, size)
    width_of = [needed[n["id"]] for n in nodes]
    rx = {n["id"]: _op_rx(n["symbol"], size) for n in nodes if n["inputs"]}
    # The room before the boxes of a layer: the shortest edge, then the widest op ellipse and its link.
    def op_room(column: list[int]) -> float:
        ellipses = [(rx[nodes[i]["id"]] if wide else OP_RY) for i in column if nodes[i]["inputs"]]
        return float(size["run"]) + (2 * max(ellipses) + size["link"] if ellipses else 0.0)

    margin = size["margin"]
    place = _wide_boxes if wide else _narrow_boxes
    boxes = place(nodes, columns, rank, width_of, size, op_room)
    for node_id, box in boxes.items():
        box["label_size"] = _label_size(by_id[node_id]["label"], box["w"], size)
    ops, ends = _ops_and_edge_ends(nodes, boxes, rx, size, wide)
    labels = _edge_labels(ends, boxes, ops, shown, size, wide)

    # Everything moves right and down so that the leftmost and topmost shape (a label too) keeps the margin.
    lefts = [b["x"] for b in boxes.values()] + [o["cx"] - o["rx"] for o in ops.values()] + [r[0] for r in labels]
    tops = [b["y"] for b in boxes.values()] + [o["cy"] - o["ry"] for o in ops.values()] + [r[1] for r in labels]
    dx, dy = margin - min(lefts), margin - min(tops)
    for box in boxes.values():
        box["x"], box["y"] = round(box["x"] + dx, 1), round(box["y"] + dy, 1)
    for op in ops.values():
        op["cx"], op["cy"] = round(op["cx"] + dx, 1), round(op["cy"] + dy, 1)
        cx, cy, r = op["cx"], op["cy"], op["rx"]
        op["link"] = (f"M {cx + r:.1f} {cy:.1f} L {cx + r + size['link']:.1f} {cy:.1f}" if wide
                      else f"M {cx:.1f} {cy + OP_RY:.1f} L {cx:.1f} {cy + OP_RY + size['link']:.1f}")
    edges: list[dict[str, Any]] = []
    for edge, (_, _, _, _, x, y, anchor) in zip(ends, labels):
        (x1, y1), (x2, y2) = ((a + dx, b + dy) for a, b in (edge["start"], edge["end"]))
        if wide:
            bend = max(12.0, (x2 - x1) / 2)
            c1, c2 = (x1 + bend, y1), (x2 - bend, y2)
        else:
            bend = max(12.0, (y2 - y1) / 2)
            c1, c2 = (x1, y1 + bend), (x2, y2 - bend)
        edges.append({
            "from": edge["from"], "to": edge["to"], "input": edge["input"],
            "d": f"M {x1:.1f} {y1:.1f} C {c1[0]:.1f} {c1[1]:.1f}, {c2[0]:.1f} {c2[1]:.1f}, {x2:.1f} {y2:.1f}",
            "label": {"x": round(x + dx, 1), "y": round(y + dy, 1), "anchor": anchor},
        })
    rights = [b["x"] + b["w"] for b in boxes.values()] + [o["cx"] + o["rx"] for o in ops.values()] + [r[2] + dx for r in labels]
    bottoms = [b["y"] + BOX_H for b in boxes.values()] + [o["cy"] + o["ry"] for o in ops.values()] + [r[3] + dy for r in labels]
    return {"shape": shape, "width": round(max(rights) + margin), "height": round(max(bottoms) + margin),
            "box": {"w": max(b["w"] for b in boxes.values()), "h": BOX_H},
            "type": {**size["type"], "pad": size["pad"], "baselines": BASELINES},
            "boxes": boxes, "ops": ops, "edges": edges}


EDGE_LABEL_ROOM = 18.0  # below each row (narrow): where the labels of the edges leaving it go


# (left, top, right, bottom, x, y, anchor): an edge label's extent and where its text goes.
EdgeLabel = tuple[float, float, float, float, float, float, str]


def _edge_labels(ends: list[dict[str, Any]], boxes: dict[str, dict[str, float]], ops: dict[str, dict[str, Any]],
                 texts: dict[str, dict[str, Any]], size: dict[str, Any], wide: bool) -> list[EdgeLabel]:
    """A place for each edge's label beside the box the edge leaves, clear of every box and ellipse, of
    the edge's own arrowhead, and of the labels of the same step (the edges into the same op). Returns
    per edge (left, top, right, bottom, x, y, anchor): the label's extent and where its text goes."""
    font = size["type"]["edge"]
    obstacles = [(b["x"], b["y"], b["x"] + b["w"], b["y"] + BOX_H) for b in boxes.values()]
    obstacles += [(o["cx"] - o["rx"], o["cy"] - o["ry"], o["cx"] + o["rx"], o["cy"] + o["ry"]) for o in ops.values()]
    placed: dict[str, list[tuple[float, float, float, float]]] = {}

    def extent(x: float, y: float, anchor: str, w: float) -> tuple[float, float, float, float]:
        left = x if anchor == "start" else x - w
        return (left, y - font * 0.8, left + w, y + font * 0.25)

    def clear(r: tuple[float, float, float, float], others: list[tuple[float, float, float, float]]) -> bool:
        return all(r[2] <= o[0] or o[2] <= r[0] or r[3] <= o[1] or o[3] <= r[1] for o in others)

    labels: list[EdgeLabel] = []
    for edge in ends:
        s = boxes[edge["from"]]
        w = text_width(texts[edge["to"]]["edges"].get(edge["input"], "+= 0"), font)
        end_x, end_y = edge["end"]
        arrow = (end_x - 10, end_y - 10, end_x + 10, end_y + 10)
        below = s["y"] + BOX_H + EDGE_GAP + font * 0.8
        beside = s["y"] + BOX_H / 2 + font * 0.3
        if wide:
            right = s["x"] + s["w"]
            candidates = [(right, s["y"] - EDGE_GAP, "end"), (right, below, "end"),
                          (s["x"], s["y"] - EDGE_GAP, "start"), (s["x"], below, "start")]
        else:
            centre = s["x"] + s["w"] / 2
            away = "end" if end_x < centre - 1 else "start"
            step = -EDGE_GAP if away == "end" else EDGE_GAP
            candidates = [(centre + step, below, away), (centre - step, below, "start" if away == "end" else "end"),
                          (s["x"] + s["w"], below, "end"), (s["x"], below, "start"),
                          (s["x"] - EDGE_GAP, beside, "end"), (s["x"] + s["w"] + EDGE_GAP, beside, "start")]
        same_step = placed.setdefault(edge["to"], [])
        x, y, anchor = next((c for c in candidates if clear(extent(c[0], c[1], c[2], w), obstacles + same_step + [arrow])),
                            candidates[0])
        same_step.append(extent(x, y, anchor, w))
        labels.append((*extent(x, y, anchor, w), x, y, anchor))
    return labels


def page_layout(t: dict[str, Any]) -> dict[str, Any]:
    """The layouts a page needs for a trace: {"wide": geometry, "narrow": geometry} (see `geometry`)."""
    return {shape: geometry(t, shape) for shape in SHAPES}


# The narrow shape with all its type at MIN_TEXT and its spacing tight: a deep graph upright on a desktop.
UPRIGHT = {**SHAPES["narrow"], "type": {key: MIN_TEXT for key in SHAPES["narrow"]["type"]},
           "pad": 4.0, "slot_gap": 4.0, "gap": 6.0}


def upright_layout(t: dict[str, Any]) -> dict[str, Any]:
    """page_layout(t), but a graph whose wide layout is wider than a lesson's frame (`most`, even with the
    shortest runs) is drawn top to bottom on a desktop too (a network's graph is deep, and upright it is
    narrower): in the narrow shape when that fits the frame, else in UPRIGHT's smaller type and tighter
    spacing. What fits nothing (a long number in every box of a wide row) scrolls in its frame on the page."""
    most = SHAPES["wide"]["most"]
    wide, narrow = geometry(t, "wide"), geometry(t, "narrow")
    if wide["width"] <= most:
        return {"wide": wide, "narrow": narrow}
    return {"wide": narrow if narrow["width"] <= most else _geometry(t, "narrow", UPRIGHT), "narrow": narrow}


# --- a graph another engine walked -------------------------------------------------------------------

MOST_TEXT = 24  # characters of a walked number's text at most (a float's text at 9 decimals takes 16)
WalkedNode = tuple[Op | None, list[int], float, float, str, str]  # op, inputs, data, grad, their texts


def _walked_number(node: dict[str, Any], key: str) -> tuple[float, str] | None:
    """A walked node's number and its text, when the number is finite and the text is that number's, short."""
    x, text = node.get(key), node.get(f"{key}_text")
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    if not isinstance(text, str) or not 0 < len(text) <= MOST_TEXT or not _NUMBER_TEXT.fullmatch(text):
        return None
    return (float(x), text) if math.isclose(float(text), x, rel_tol=1e-6, abs_tol=1e-9) else None


_NUMBER_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?")


def _walked_nodes(nodes: object, most: int) -> list[WalkedNode] | None:
    """The walked nodes read and checked (see `walked_trace`), or None."""
    if not isinstance(nodes, list) or not 0 < len(nodes) <= most:
        return None
    by_symbol = {(op.symbol, op.arity): op for op in OPS.values()}
    read: list[WalkedNode] = []
    for index, node in enumerate(nodes):
        if not isinstance(node, dict) or node.get("id") != index or not isinstance(node.get("inputs"), list):
            return None
        inputs = node["inputs"]
        if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < index for i in inputs):
            return None
        symbol = node.get("op")
        op = by_symbol.get((symbol, len(inputs))) if isinstance(symbol, str) and symbol else None
        data, grad = _walked_number(node, "data"), _walked_number(node, "grad")
        if data is None or grad is None or (op is None) != (symbol == "" and not inputs):
            return None
        read.append((op, inputs, data[0], grad[0], data[1], grad[1]))
    return read


def walked_trace(nodes: object, most: int) -> dict[str, Any] | None:
    """A graph walked in another engine (a learner's Values, read through their own `_prev` and `_op`), as a
    trace a page draws without steps: {"schema", "output", "nodes", "forward": [], "backward": []}. None
    when it is not such a graph: more than `most` nodes, a node that is not {"id" (its position), "op" ("" for
    a leaf, else the symbol of an op of the table), "inputs" (earlier positions, as many as the op takes),
    "data", "grad" (finite), "data_text", "grad_text" (those numbers' texts, at most MOST_TEXT characters)},
    or a node the last one does not depend on. Its leaves are named "leaf 1", "leaf 2", ..., the other
    nodes "node 1", ..., the last "output", and their formulas are this engine's; the boxes show the walked
    numbers and texts as they came, and each node's "walked" is its position in the walk."""
    read = _walked_nodes(nodes, most)
    if read is None:
        return None
    built: list[Value] = []
    counts = {"leaf": 0, "node": 0}
    for op, inputs, data, *_ in read:
        kind = "node" if op is not None else "leaf"
        counts[kind] += 1
        value = Value(data) if op is None else apply(op, *[built[i] for i in inputs])
        value.label = f"{kind} {counts[kind]}"
        built.append(value)
    built[-1].label = "output"
    t = trace(built[-1])
    position = {id(v): k for k, v in enumerate(built)}
    order = graph_nodes(built[-1])
    if len(order) != len(built):
        return None
    for entry, value in zip(t["nodes"], order):
        walked = position[id(value)]
        _, _, data, grad, data_text, grad_text = read[walked]
        entry.update(walked=walked, data=data, grad=grad, data_text=data_text, grad_text=grad_text)
    return {"schema": t["schema"], "output": t["output"], "nodes": t["nodes"], "forward": [], "backward": []}


# --- SVG ----------------------------------------------------------------------------------------------

_STYLE = """
.node rect { stroke: #33415c; stroke-width: 1.2; }
.value rect { fill: #ffffff; }
.value.leaf rect { fill: #e6f0ff; }
.value.constant rect { fill: #f1f1f1; }
.value.output rect { fill: #fff1dc; stroke-width: 2; }
.node text { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; fill: #1b263b; }
.node text.label { font-weight: bold; }
.op ellipse { fill: #fdf6c9; stroke: #7d6b14; stroke-width: 1.2; }
.op text { font-weight: bold; text-anchor: middle; dominant-baseline: central; }
.edge, .op-link { fill: none; stroke: #6c7a96; stroke-width: 1.3; }
""".strip()


def to_svg(t: dict[str, Any], shape: str = "wide") -> str:
    """A standalone SVG picture of a trace (valid XML, labels escaped, no external resources), in the
    monospace type its layout sized every box for."""
    from xml.sax.saxutils import escape, quoteattr  # here: it loads urllib and email, which a text table never needs

    nodes = t["nodes"]
    by_id = {n["id"]: n for n in nodes}
    g = geometry(t, shape)
    box_h, kind = g["box"]["h"], g["type"]
    pad, baseline = kind["pad"], kind["baselines"]
    width, height = g["width"], g["height"]
    sizes = f".node text {{ font-size: {kind['slot']:g}px; }} .op text {{ font-size: {kind['symbol']:g}px; }}"
    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chainrule-graph" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label={quoteattr("computation graph of " + by_id[t["output"]]["label"])}>',
        "<defs><marker id=\"chainrule-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
        "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
        "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#6c7a96\"/></marker></defs>",
        f"<style>{escape(_STYLE)} {escape(sizes)}</style>",
    ]
    edges: list[str] = []
    shapes: list[str] = []
    for n in nodes:
        box = g["boxes"][n["id"]]
        x, y = box["x"], box["y"]
        classes = ["node", "value"]
        if n["leaf"]:
            classes.append("constant" if n.get("constant") else "leaf")
        if n["id"] == t["output"]:
            classes.append("output")
        title = n.get("formula") or f"{n['label']} (input)"
        shapes.append(
            f'<g class="{" ".join(classes)}" id="value-{n["id"]}" data-node="{n["id"]}" '
            f'data-label={quoteattr(n["label"])}>'
            f"<title>{escape(title)}</title>"
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{box["w"]:g}" height="{box_h:g}" rx="6"/>'
            f'<text class="label" x="{x + pad:.1f}" y="{y + baseline["label"]:.1f}" '
            f'font-size="{box["label_size"]:g}">{escape(n["label"])}</text>'
            f'<text class="data" x="{x + pad:.1f}" y="{y + baseline["data"]:.1f}">data {escape(_num(n, "data"))}</text>'
            f'<text class="grad" x="{x + pad:.1f}" y="{y + baseline["grad"]:.1f}">grad {escape(_num(n, "grad"))}</text>'
            "</g>"
        )
        if not n["inputs"]:
            continue
        op = g["ops"][n["id"]]
        shapes.append(
            f'<g class="node op" id="op-{n["id"]}" data-node="{n["id"]}" data-op={quoteattr(n["op"])}>'
            f"<title>{escape(n.get('formula', ''))}</title>"
            f'<ellipse cx="{op["cx"]:.1f}" cy="{op["cy"]:.1f}" rx="{op["rx"]:.1f}" ry="{op["ry"]}"/>'
            f'<text x="{op["cx"]:.1f}" y="{op["cy"]:.1f}">{escape(n["symbol"])}</text></g>'
        )
        edges.append(f'<path class="op-link" data-node="{n["id"]}" d="{op["link"]}" '
                     'marker-end="url(#chainrule-arrow)"/>')
    for edge in g["edges"]:
        edges.append(
            f'<path class="edge" data-from="{edge["from"]}" data-to="{edge["to"]}" data-input="{edge["input"]}" '
            f'd="{edge["d"]}" marker-end="url(#chainrule-arrow)"/>'
        )
    parts.append('<g class="edges">' + "".join(edges) + "</g>")
    parts.append('<g class="nodes">' + "".join(shapes) + "</g>")
    parts.append("</svg>")
    return "\n".join(parts)


# --- DOT ----------------------------------------------------------------------------------------------


def _dot_string(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, no raw newlines."""
    clean = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace("\r", " ")
    return f'"{clean}"'


def to_dot(t: dict[str, Any]) -> str:
    """Graphviz DOT text (render with `dot -Tsvg`): value boxes, op ellipses, edges left to right."""
    lines = [
        "digraph chainrule {",
        "  rankdir=LR;",
        '  node [fontname="Helvetica", fontsize=11];',
    ]
    for n in t["nodes"]:
        parts = (n["label"], f"data {_num(n, 'data')}", f"grad {_num(n, 'grad')}")
        # Escape each line, then join with the \n line break DOT understands.
        label = "\\n".join(_dot_string(part)[1:-1] for part in parts)
        shape = 'shape=box, style="rounded,filled", fillcolor='
        fill = '"#e6f0ff"' if n["leaf"] else ('"#fff1dc"' if n["id"] == t["output"] else '"#ffffff"')
        lines.append(f'  {n["id"]} [{shape}{fill}, label="{label}"];')
        if n["inputs"]:
            lines.append(f'  {n["id"]}_op [shape=ellipse, style=filled, fillcolor="#fdf6c9", '
                         f'label={_dot_string(n["symbol"])}];')
            lines.append(f"  {n['id']}_op -> {n['id']};")
            for source in n["inputs"]:
                lines.append(f"  {source} -> {n['id']}_op;")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- text -------------------------------------------------------------------------------------------


def to_text(t: dict[str, Any], digits: int = 6) -> str:
    """A plain-text table, one row per node: id, label, op, formula, data, grad."""
    header = ("node", "label", "op", "formula", "data", "grad")
    rows = [header]
    for n in t["nodes"]:
        if n["leaf"]:
            formula = "constant" if n.get("constant") else "input"
        else:
            formula = n["formula"]
        rows.append((
            n["id"], n["label"], n["op"] or "-", formula,
            _num(n, "data") if n["data"] is None else format_number(n["data"], digits),
            _num(n, "grad") if n["grad"] is None else format_number(n["grad"], digits),
        ))
    widths = [max(len(str(row[c])) for row in rows) for c in range(len(header))]
    right = {4, 5}  # numbers line up on the right

    def line(row: tuple[object, ...]) -> str:
        cells = [str(cell).rjust(widths[c]) if c in right else str(cell).ljust(widths[c])
                 for c, cell in enumerate(row)]
        return "  ".join(cells).rstrip()

    out = [line(rows[0]), "  ".join("-" * w for w in widths)]
    out.extend(line(row) for row in rows[1:])
    return "\n".join(out) + "\n"


def _value_repr_svg(self: Value) -> str:
    """Jupyter shows a Value as the picture of its graph."""
    return draw(self, format="svg")


# Pictures build on the engine, so the engine does not import them: this module teaches Value to draw itself.
Value._repr_svg_ = _value_repr_svg  # type: ignore[attr-defined]  # added from here: Value's class does not name it
