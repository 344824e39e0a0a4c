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

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from chainrule.engine import Value
from chainrule.trace import format_number, graph_nodes, trace

__all__ = ["draw", "to_svg", "to_dot", "to_text", "layout", "geometry", "page_layout", "SHAPES"]

FORMATS = ("svg", "dot", "text")

BOX_W, BOX_H = 132, 58   # a value box
COLUMN = BOX_W + 118     # horizontal distance between layers (the gap holds the op ellipse)
ROW = BOX_H + 26         # vertical distance between boxes in a layer
MARGIN = 24
OP_RY = 17
MAX_LABEL = 16           # longer labels are shortened in the picture (the full one is in <title>)


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


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "\u2026"


# --- layout --------------------------------------------------------------------------------------

# Two shapes of the same layered layout: "wide" runs left to right (a desktop page, the CLI's SVG),
# "narrow" runs top to bottom with slimmer boxes (a phone). The lesson page receives both as data
# (`page_layout`) and only renders them, so the page and `chainrule graph` draw the same picture.
SHAPES: dict[str, dict[str, float]] = {
    # box: value box size; step: distance between layers; spread: distance between boxes in a layer;
    # op_offset: distance from a box's edge facing its inputs to the centre of its op ellipse.
    "wide": {"box_w": BOX_W, "box_h": BOX_H, "step": BOX_W + 160, "spread": BOX_H + 26, "op_offset": 42},
    "narrow": {"box_w": 92, "box_h": BOX_H, "step": BOX_H + 92, "spread": 100, "op_offset": 28},
}
EDGE_SPREAD = 10  # two inputs meet an op ellipse this far apart
LABEL_GAP = 6     # an edge label starts this far from the box its edge leaves


def _layers(t: dict[str, Any]) -> tuple[list[int], list[list[int]], list[float]]:
    """(layer of each node, node indices per layer in drawing order, rank of each node in its layer)."""
    nodes = t["nodes"]
    position = {n["id"]: i for i, n in enumerate(nodes)}
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for p in n["inputs"]:
            users[position[p]].append(i)

    layer = [0] * len(nodes)
    for i, n in enumerate(nodes):  # nodes are in topological order
        if n["inputs"]:
            layer[i] = 1 + max(layer[position[p]] for p in n["inputs"])
    for i, n in enumerate(nodes):
        if not n["inputs"] and users[i]:
            layer[i] = max(0, min(layer[u] for u in users[i]) - 1)

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


def _point(p0: float, p1: float, p2: float, p3: float, s: float) -> float:
    """One coordinate of a cubic Bezier curve at parameter s."""
    return (1 - s) ** 3 * p0 + 3 * (1 - s) ** 2 * s * p1 + 3 * (1 - s) * s ** 2 * p2 + s ** 3 * p3


def geometry(t: dict[str, Any], shape: str = "wide") -> dict[str, Any]:
    """Every shape of the picture in one coordinate system (the one layout of a graph).

    {"shape", "width", "height", "box": {"w", "h"},
     "boxes": {id: {"x", "y"}}                         top-left corners of the value boxes,
     "ops": {id: {"cx", "cy", "rx", "ry", "link"}}     op ellipses, link: path from ellipse to its box,
     "edges": [{"from", "to", "input", "d", "label": {"x", "y", "anchor"}}]}
    An edge runs from its input's box to the op ellipse and ends in an arrowhead; its label (what
    flows back along it) starts next to the box the edge leaves, so it never covers the arrowhead.
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown layout shape {shape!r}; choose one of: {', '.join(SHAPES)}")
    size = SHAPES[shape]
    box_w, box_h, step, spread, op_offset = (size[k] for k in ("box_w", "box_h", "step", "spread", "op_offset"))
    wide = shape == "wide"
    nodes = t["nodes"]
    layer, columns, rank = _layers(t)
    tallest = max(len(c) for c in columns)
    boxes: dict[str, dict[str, float]] = {}
    for i, n in enumerate(nodes):
        along = MARGIN + layer[i] * step
        across = MARGIN + ((tallest - 1) / 2 + rank[i]) * spread
        x, y = (along, across) if wide else (across, along)
        boxes[n["id"]] = {"x": round(x, 1), "y": round(y, 1)}

    ops: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []
    for n in nodes:
        if not n["inputs"]:
            continue
        x, y = boxes[n["id"]]["x"], boxes[n["id"]]["y"]
        rx = _op_width(n["symbol"])
        if wide:
            cx, cy = x - op_offset, y + box_h / 2
            link = f"M {cx + rx:.1f} {cy:.1f} L {x:.1f} {cy:.1f}"
        else:
            cx, cy = x + box_w / 2, y - op_offset
            link = f"M {cx:.1f} {cy + OP_RY:.1f} L {cx:.1f} {y:.1f}"
        ops[n["id"]] = {"cx": round(cx, 1), "cy": round(cy, 1), "rx": round(rx, 1), "ry": OP_RY, "link": link}
        count = len(n["inputs"])
        across_of = (lambda b: b["y"]) if wide else (lambda b: b["x"])
        # Two inputs meet the ellipse at two points, the nearer box at the nearer point (no crossing).
        slots = sorted(range(count), key=lambda k: (across_of(boxes[n["inputs"][k]]), k))
        for k, source in enumerate(n["inputs"]):
            sx, sy = boxes[source]["x"], boxes[source]["y"]
            offset = (slots.index(k) - (count - 1) / 2) * EDGE_SPREAD
            if wide:
                x1, y1 = sx + box_w, sy + box_h / 2
                x2, y2 = cx - rx, cy + offset
                bend = max(30.0, (x2 - x1) / 2)
                c1, c2 = (x1 + bend, y1), (x2 - bend, y2)
                label = {"x": round(x1 + LABEL_GAP, 1), "y": round(y1 - LABEL_GAP, 1), "anchor": "start"}
            else:
                x1, y1 = sx + box_w / 2, sy + box_h
                x2, y2 = cx + offset, cy - OP_RY
                bend = max(20.0, (y2 - y1) / 2)
                c1, c2 = (x1, y1 + bend), (x2, y2 - bend)
                # Beside the start of the edge, on the side away from where the edge heads.
                side = -1 if x2 < x1 - 1 else 1
                label = {"x": round(x1 + side * LABEL_GAP, 1), "y": round(y1 + 14, 1),
                         "anchor": "end" if side < 0 else "start"}
            edges.append({
                "from": source, "to": n["id"], "input": k, "label": label,
                "d": f"M {x1:.1f} {y1:.1f} C {c1[0]:.1f} {c1[1]:.1f}, {c2[0]:.1f} {c2[1]:.1f}, {x2:.1f} {y2:.1f}",
            })
    width = max(b["x"] for b in boxes.values()) + box_w + MARGIN
    height = max(b["y"] for b in boxes.values()) + box_h + MARGIN
    return {"shape": shape, "width": round(width), "height": round(height), "box": {"w": box_w, "h": box_h},
            "boxes": boxes, "ops": ops, "edges": edges}


def page_layout(t: dict[str, Any]) -> dict[str, Any]:
    """The layouts a page needs for a trace: {"wide": geometry, "narrow": geometry} (see `geometry`)."""
    return {shape: geometry(t, shape) for shape in SHAPES}


# --- SVG ----------------------------------------------------------------------------------------------

_STYLE = """
.node rect { stroke: #33415c; stroke-width: 1.2; rx: 6; }
.value rect { fill: #ffffff; }
.value.leaf rect { fill: #e6f0ff; }
.value.constant rect { fill: #f1f1f1; }
.value.output rect { fill: #fff1dc; stroke-width: 2; }
.node text { font-family: Helvetica, Arial, sans-serif; font-size: 12px; fill: #1b263b; }
.node text.label { font-weight: bold; font-size: 13px; }
.op ellipse { fill: #fdf6c9; stroke: #7d6b14; stroke-width: 1.2; }
.op text { font-weight: bold; text-anchor: middle; dominant-baseline: central; }
.edge, .op-link { fill: none; stroke: #6c7a96; stroke-width: 1.3; }
""".strip()


def _op_width(symbol: str) -> float:
    return max(17.0, 5.0 + 4.2 * len(symbol))


def to_svg(t: dict[str, Any], shape: str = "wide") -> str:
    """A standalone SVG picture of a trace (valid XML, labels escaped, no external resources)."""
    nodes = t["nodes"]
    by_id = {n["id"]: n for n in nodes}
    g = geometry(t, shape)
    box_w, box_h = g["box"]["w"], g["box"]["h"]
    width, height = g["width"], g["height"]
    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chainrule-graph" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label={quoteattr("computation graph of " + by_id[t["output"]]["label"])}>',
        "<defs><marker id=\"chainrule-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
        "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
        "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#6c7a96\"/></marker></defs>",
        f"<style>{escape(_STYLE)}</style>",
    ]
    edges: list[str] = []
    shapes: list[str] = []
    for n in nodes:
        x, y = g["boxes"][n["id"]]["x"], g["boxes"][n["id"]]["y"]
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
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{box_w}" height="{box_h}" rx="6"/>'
            f'<text class="label" x="{x + 8:.1f}" y="{y + 17:.1f}">{escape(_short(n["label"]))}</text>'
            f'<text class="data" x="{x + 8:.1f}" y="{y + 34:.1f}">data {escape(_num(n, "data"))}</text>'
            f'<text class="grad" x="{x + 8:.1f}" y="{y + 50:.1f}">grad {escape(_num(n, "grad"))}</text>'
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

    def line(row: tuple) -> str:
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
Value._repr_svg_ = _value_repr_svg
