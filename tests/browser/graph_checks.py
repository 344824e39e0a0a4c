"""Measurements of a graph as the browser drew it, shared by the lesson, explore and playground tests.

overprints(page, root): every text of every box inside its box and clear of the box's other texts on its
line, and every edge label clear of every box, op and other label (issue 32 item 2).
ASKED_IN_VIEW (a page function of the holder's id): at a prediction's gate, how much of the asked box and of each box it depends
on the graph's frame and the screen show (issue 32 item 1).
"""

from __future__ import annotations

OVERPRINTS = """(rootSelector) => {
  const out = [];
  const rect = (el) => { const r = el.getBoundingClientRect(); return { l: r.left, t: r.top, r: r.right, b: r.bottom }; };
  const apart = (a, b) => a.r <= b.l + 0.5 || b.r <= a.l + 0.5 || a.b <= b.t + 0.5 || b.b <= a.t + 0.5;
  for (const root of document.querySelectorAll(rootSelector)) {
    for (const svg of root.querySelectorAll('svg.graph-svg')) {
      const where = svg.closest('[id]').id;
      const boxes = [];
      for (const g of svg.querySelectorAll('g.node')) {
        const box = rect(g.querySelector('rect'));
        boxes.push(box);
        const texts = Array.from(g.querySelectorAll('text')).filter((t) => t.textContent).map((t) => [t.textContent, rect(t)]);
        for (const [text, r] of texts) {
          const over = Math.max(box.l + 1 - r.l, r.r - (box.r - 1), box.t - r.t, r.b - box.b);
          if (over > 0) out.push(`${where} ${g.dataset.label}: "${text}" sticks ${over.toFixed(1)} px out of its box`);
        }
        texts.forEach(([t1, a], i) => texts.slice(i + 1).forEach(([t2, b]) => {
          const sameLine = Math.abs((a.t + a.b) / 2 - (b.t + b.b) / 2) < 4;
          if (sameLine && !(a.r <= b.l - 2 || b.r <= a.l - 2)) out.push(`${where} ${g.dataset.label}: "${t1}" over "${t2}"`);
        }));
      }
      const ops = Array.from(svg.querySelectorAll('.op-node ellipse')).map(rect);
      const labels = Array.from(svg.querySelectorAll('.edge-label')).filter((t) => t.textContent).map((t) => [t.textContent, rect(t)]);
      labels.forEach(([text, r], i) => {
        if (boxes.some((b) => !apart(r, b))) out.push(`${where} edge label "${text}" over a box`);
        if (ops.some((b) => !apart(r, b))) out.push(`${where} edge label "${text}" over an op`);
        labels.slice(i + 1).forEach(([other, q]) => { if (!apart(r, q)) out.push(`${where} edge label "${text}" over "${other}"`); });
      });
    }
  }
  return out;
}"""

ASKED_IN_VIEW = """(holder) => {
  const root = document.getElementById(holder);
  const figure = root.querySelector('.graph-figure').getBoundingClientRect();
  // The share of an element's area that is inside the frame and on the screen.
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    const w = Math.max(0, Math.min(r.right, figure.right, innerWidth) - Math.max(r.left, figure.left, 0));
    const h = Math.max(0, Math.min(r.bottom, figure.bottom, innerHeight) - Math.max(r.top, figure.top, 0));
    return (w * h) / (r.width * r.height);
  };
  const asked = root.querySelector('g.node.asked');
  const depends = Array.from(root.querySelectorAll('g.node.depends'));
  if (!asked) return null;
  const all = [asked, ...depends].map((el) => el.querySelector('rect').getBoundingClientRect());
  const width = Math.max(...all.map((r) => r.right)) - Math.min(...all.map((r) => r.left));
  const height = Math.max(...all.map((r) => r.bottom)) - Math.min(...all.map((r) => r.top));
  return {
    asked: asked.dataset.label, askedShown: shown(asked.querySelector('rect')),
    depends: Object.fromEntries(depends.map((el) => [el.dataset.label, shown(el.querySelector('rect'))])),
    // Whether the asked box and its inputs fit in the frame together (else the frame shows the asked box whole).
    fitTogether: width + 20 <= figure.width && height + 20 <= Math.min(figure.height, innerHeight),
    lookAt: (document.querySelector('.look-at') || {}).textContent || '',
  };
}"""


def overprints(page, root: str = "body") -> list[str]:
    return page.evaluate(OVERPRINTS, root)


def depends_on(graph: dict, label: str, kind: str) -> set[str]:
    """What a prediction about `label` depends on, from the lesson's graph spec (leaves, nodes
    [label, op, inputs...]): its inputs (forward), or the nodes that use it and their inputs (backward)."""
    nodes = {node[0]: node[2:] for node in graph["nodes"]}
    if kind == "forward":
        return set(nodes.get(label, []))
    users = [name for name, inputs in nodes.items() if label in inputs]
    return ({*users} | {i for user in users for i in nodes[user]}) - {label}


def assert_asked_in_view(seen: dict | None, graph: dict, label: str, kind: str, where) -> None:
    """`seen`, what ASKED_IN_VIEW measured: the asked box is whole on screen in its frame; the boxes it depends on
    are marked, named, and whole in view when they fit the frame together with it (else in view as far as the
    frame allows)."""
    assert seen is not None, (where, "no box is marked as asked")
    expected = depends_on(graph, label, kind)
    assert seen["asked"] == label and set(seen["depends"]) == expected, (where, seen)
    assert seen["askedShown"] > 0.99, (where, seen)
    if seen["fitTogether"]:
        assert all(share > 0.99 for share in seen["depends"].values()), (where, seen)
    else:
        assert any(share > 0 for share in seen["depends"].values()), (where, seen)
    assert all(name in seen["lookAt"] for name in [label, *expected]), (where, seen["lookAt"])
