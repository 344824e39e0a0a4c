// Draw a computation graph from a trace and step through it.
//
// The layout is not computed here: the server sends it with the trace (trace.layout.wide and
// trace.layout.narrow, made by chainrule.draw, the same layout `chainrule graph` draws), and this
// file only renders it and animates it. Narrow screens get the top-to-bottom layout. Every box is already
// as wide as the longest text it will show (the layout read them all), and every text slot exists from
// the start, so nothing moves while values and gradients appear. Numbers are shown as the server wrote
// them (the "<key>_text" beside each number, web/page_numbers.py): the page formats none itself. Beside the
// picture: a table view of the same boxes, and a live region that says each step, for screen readers.
import { el, keepFocus, plural } from "./api.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const NARROW = "(max-width: 40rem)";
// What a picture's name says after its box count: where its words are (a drawing without steps says its own).
const STEPS_SAID = "The caption below says what each step does; the table view lists every box.";
const START_CAPTION = "Press Next or Play: values flow forward first, then gradients flow backward.";
// Play speed: a step stays on screen long enough to read its caption (about 20 characters a second
// at "Normal"), and never shorter than the speed's own minimum (so a short caption is faster at "Fast").
export const SPEEDS = [
  { id: "slow", label: "Slow", msPerChar: 75, minMs: 2000 },
  { id: "normal", label: "Normal", msPerChar: 50, minMs: 1200 },
  { id: "fast", label: "Fast", msPerChar: 20, minMs: 500 },
];

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The layout shape for the current screen width: "narrow" (top to bottom) or "wide". */
export function currentShape() {
  return window.matchMedia(NARROW).matches ? "narrow" : "wide";
}

/** The trace's steps in play order: forward steps, then backward steps. */
export function playSteps(trace) {
  return [
    ...trace.forward.map((step, index) => ({ ...step, phase: "forward", index })),
    ...trace.backward.map((step, index) => ({ ...step, phase: "backward", index })),
  ];
}

/** The server's text of `entry[key]` (entry[key + "_text"]; every trace carries them); "?" without one. */
export function numberText(entry, key) {
  const text = entry[`${key}_text`];
  return typeof text === "string" ? text : "?";
}

/** Values and gradients known after the first `position` steps, as the texts to show (node id -> text). */
export function stateAt(steps, position) {
  const values = new Map();
  const grads = new Map();
  for (const step of steps.slice(0, position)) {
    if (step.phase === "forward") {
      values.set(step.node, numberText(step, "value"));
    } else {
      grads.set(step.node, numberText(step, "grad"));
      for (const c of step.contributions || []) grads.set(c.input, numberText(c, "grad_after"));
    }
  }
  return { values, grads };
}

/** How long a step stays on screen while playing, at a speed (see SPEEDS). */
export function stepDuration(step, speedId) {
  const speed = SPEEDS.find((s) => s.id === speedId) || SPEEDS[1];
  const length = step && step.caption ? step.caption.length : 0;
  return Math.max(speed.minMs, length * speed.msPerChar);
}

/**
 * The SVG picture of a trace in one layout shape: boxes, op ellipses, edges and edge labels, all
 * placed where the server's layout says. show(values, grads, step) updates only texts and classes.
 */
export class GraphView {
  constructor(trace, { name = "graph", title = "Computation graph", shape = currentShape(), said = STEPS_SAID } = {}) {
    this.trace = trace;
    this.name = name;
    this.shape = shape;
    const layout = trace.layout && trace.layout[shape];
    if (!layout) throw new Error(`the graph has no ${shape} layout`);
    this.layout = layout;
    const { width, height } = layout;
    const boxH = layout.box.h;
    // Type as the layout sized every box for it (inline, so no style sheet can make a text outgrow its box).
    const type = layout.type || { label: 13, slot: 12, number: 13, edge: 12, symbol: 13, pad: 7, baselines: { label: 17, data: 35, grad: 52 } };
    const sized = (px) => `font-size:${px}px`;
    this.element = svg("svg", {
      viewBox: `0 0 ${width} ${height}`, class: `graph-svg graph-${shape}`, role: "img",
      "aria-label": `${title}: ${plural(trace.nodes.length, "box", "boxes")}. ${said}`,
      "data-shape": shape,
    });
    // Drawn at the layout's own size, never scaled down (text stays at its size, 12 px and more):
    // the figure holding it scrolls when it is larger than the screen.
    this.element.setAttribute("width", String(width));
    this.element.setAttribute("height", String(height));
    this.element.style.width = `${width}px`;
    this.element.style.aspectRatio = `${width} / ${height}`;
    const defs = svg("defs");
    for (const kind of ["idle", "fwd", "bwd"]) {
      const marker = svg("marker", {
        id: `${name}-${shape}-arrow-${kind}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
        markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse",
      });
      marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: `arrow arrow-${kind}` }));
      defs.append(marker);
    }
    this.element.append(defs);

    const edgeLayer = svg("g", { class: "edges" });
    const labelLayer = svg("g", { class: "edge-labels" });
    this.links = new Map();
    for (const node of trace.nodes) {
      const op = layout.ops[node.id];
      if (!op) continue;
      const link = svg("path", { d: op.link, class: "op-link", "marker-end": `url(#${name}-${shape}-arrow-idle)` });
      edgeLayer.append(link);
      this.links.set(node.id, link);
    }
    this.edges = layout.edges.map((edge) => {
      const path = svg("path", {
        d: edge.d, class: "edge", "data-from": edge.from, "data-to": edge.to,
        "marker-end": `url(#${name}-${shape}-arrow-idle)`,
      });
      const label = svg("text", {
        x: edge.label.x, y: edge.label.y, class: "edge-label", "text-anchor": edge.label.anchor,
        "data-from": edge.from, "data-to": edge.to, style: sized(type.edge),
      }, "");
      edgeLayer.append(path);
      labelLayer.append(label);
      return { from: edge.from, to: edge.to, slot: edge.input, path, label };
    });
    this.element.append(edgeLayer);

    this.boxes = new Map();
    const boxLayer = svg("g", { class: "boxes" });
    const { pad, baselines } = type;
    for (const node of trace.nodes) {
      const place = layout.boxes[node.id];
      const boxW = place.w || layout.box.w;
      const group = svg("g", {
        class: `node ${node.leaf ? "leaf" : "op"}`, transform: `translate(${place.x},${place.y})`,
        "data-node-id": node.id, "data-label": node.label,
      });
      group.append(svg("rect", { width: boxW, height: boxH, rx: 7, class: "box" }));
      group.append(svg("text", { x: pad, y: baselines.label, class: "node-label", style: sized(place.label_size || type.label) }, node.label));
      group.append(svg("text", { x: pad, y: baselines.data, class: "slot-name", style: sized(type.slot) }, "data"));
      const value = svg("text", { x: boxW - pad, y: baselines.data, class: "node-value", "text-anchor": "end", style: sized(type.number) }, "");
      group.append(svg("text", { x: pad, y: baselines.grad, class: "slot-name", style: sized(type.slot) }, "grad"));
      const grad = svg("text", { x: boxW - pad, y: baselines.grad, class: "node-grad", "text-anchor": "end", style: sized(type.number) }, "");
      group.append(value, grad, svg("title", {}, node.formula || `${node.label} (input)`));
      boxLayer.append(group);
      const entry = { group, value, grad, x: place.x, y: place.y, w: boxW, h: boxH };
      const op = layout.ops[node.id];
      if (op) {
        const opGroup = svg("g", { class: "op-node", "data-node-id": node.id });
        opGroup.append(svg("ellipse", { cx: op.cx, cy: op.cy, rx: op.rx, ry: op.ry }),
          svg("text", { x: op.cx, y: op.cy, class: "op-symbol", "text-anchor": "middle", "dominant-baseline": "central", style: sized(type.symbol) }, node.symbol));
        boxLayer.append(opGroup);
        entry.op = opGroup;
      }
      this.boxes.set(node.id, entry);
    }
    this.element.append(boxLayer, labelLayer);
  }

  /** Show values and gradients (node id -> text), and light up what `step` (or nothing, when null) does. */
  show(values, grads, step) {
    for (const [id, box] of this.boxes) {
      const hasValue = values.has(id);
      const hasGrad = grads.has(id);
      box.value.textContent = hasValue ? values.get(id) : "?";
      box.grad.textContent = hasGrad ? grads.get(id) : "?";
      box.group.classList.toggle("has-value", hasValue);
      box.group.classList.toggle("has-grad", hasGrad);
      const active = Boolean(step && step.node === id);
      box.group.classList.toggle("active", active);
      if (box.op) box.op.classList.toggle("active", active);
      const receiving = Boolean(step && step.phase === "backward" && (step.contributions || []).some((c) => c.input === id));
      box.group.classList.toggle("receiving", receiving);
    }
    const used = new Set();
    for (const edge of this.edges) {
      let kind = "idle";
      edge.label.textContent = "";
      if (step && step.phase === "forward" && edge.to === step.node) kind = "fwd";
      if (step && step.phase === "backward" && edge.to === step.node) {
        kind = "bwd";
        // Pair each edge with its own contribution (an input used twice has two edges and two contributions).
        const contributions = step.contributions || [];
        const index = contributions.findIndex((c, i) => c.input === edge.from && !used.has(i));
        if (index >= 0) {
          used.add(index);
          edge.label.textContent = `+= ${numberText(contributions[index], "contribution")}`;
        }
      }
      edge.path.setAttribute("class", `edge edge-${kind}`);
      edge.path.setAttribute("marker-end", `url(#${this.name}-${this.shape}-arrow-${kind})`);
    }
    for (const [id, link] of this.links) {
      const kind = step && step.node === id ? (step.phase === "forward" ? "fwd" : "bwd") : "idle";
      link.setAttribute("class", `op-link edge-${kind}`);
      link.setAttribute("marker-end", `url(#${this.name}-${this.shape}-arrow-${kind})`);
    }
  }

  /**
   * Mark the boxes a prediction asks about: `asked` (a node id, or null) and the boxes it depends on.
   * Both are drawn with their own outline, and said in words by the caller.
   */
  mark(asked, depends = []) {
    for (const [id, box] of this.boxes) {
      box.group.classList.toggle("asked", id === asked);
      box.group.classList.toggle("depends", depends.includes(id));
    }
  }

  /** Where the box (and, for `withOp`, its op ellipse) of a node is, in the picture's own units. */
  extent(id, withOp = false) {
    const box = this.boxes.get(id);
    if (!box) return null;
    const rect = { left: box.x, top: box.y, right: box.x + box.w, bottom: box.y + box.h };
    const op = withOp ? this.layout.ops[id] : null;
    if (op) {
      rect.left = Math.min(rect.left, op.cx - op.rx);
      rect.top = Math.min(rect.top, op.cy - op.ry);
    }
    return rect;
  }
}

/** The boxes a step is about: its node, then the boxes it reads (forward) or sends its gradient to (backward). */
export function stepFocus(trace, step) {
  if (!step) return null;
  const node = trace.nodes.find((entry) => entry.id === step.node);
  const related = step.phase === "forward" ? (node ? node.inputs : []) : (step.contributions || []).map((c) => c.input);
  return { primary: step.node, related: [...new Set(related)].filter((id) => id !== step.node) };
}

/**
 * What a prediction about `nodeId`'s data (forward) or gradient (backward) depends on: the boxes it is
 * computed from, or the boxes that use it (they send its gradient back) and their other inputs (the
 * local slopes read their values). Returns node ids, the graph's order.
 */
export function dependsOn(trace, nodeId, kind) {
  const node = trace.nodes.find((entry) => entry.id === nodeId);
  if (!node) return [];
  if (kind === "forward") return trace.nodes.filter((entry) => node.inputs.includes(entry.id)).map((entry) => entry.id);
  const users = trace.nodes.filter((entry) => entry.inputs.includes(nodeId));
  const wanted = new Set(users.flatMap((user) => [user.id, ...user.inputs]));
  wanted.delete(nodeId);
  return trace.nodes.filter((entry) => wanted.has(entry.id)).map((entry) => entry.id);
}

/**
 * Scroll `frame` (the figure holding `view`) so that the boxes of `focus` are in it: all of them, centred,
 * when they fit; otherwise the primary box whole, on the side that leaves the most of the others in view.
 * The page itself does not move.
 */
export function revealBoxes(frame, view, focus) {
  if (!focus) return;
  const primary = view.extent(focus.primary, true);
  if (!primary) return;
  const all = [primary, ...focus.related.map((id) => view.extent(id)).filter(Boolean)];
  const svgRect = view.element.getBoundingClientRect();
  const frameRect = frame.getBoundingClientRect();
  // The picture's origin in the frame's scrolled content (it is centred when narrower than the frame).
  const originX = svgRect.left - frameRect.left - frame.clientLeft + frame.scrollLeft;
  const originY = svgRect.top - frameRect.top - frame.clientTop + frame.scrollTop;
  const margin = 10;
  const place = (low, high, size, pLow, pHigh, centre) => {
    if (high - low + 2 * margin <= size) return (low + high) / 2 - size / 2;
    if (centre < pLow) return pHigh + margin - size;  // the others are before it: it sits at the far edge
    if (centre > pHigh) return pLow - margin;
    return (pLow + pHigh) / 2 - size / 2;
  };
  const others = all.slice(1);
  const middle = (key1, key2) => (others.length
    ? others.reduce((sum, r) => sum + (r[key1] + r[key2]) / 2, 0) / others.length
    : (primary[key1] + primary[key2]) / 2);
  const left = Math.min(...all.map((r) => r.left));
  const right = Math.max(...all.map((r) => r.right));
  const top = Math.min(...all.map((r) => r.top));
  const bottom = Math.max(...all.map((r) => r.bottom));
  frame.scrollLeft = Math.max(0, originX + place(left, right, frame.clientWidth, primary.left, primary.right, middle("left", "right")));
  frame.scrollTop = Math.max(0, originY + place(top, bottom, frame.clientHeight, primary.top, primary.bottom, middle("top", "bottom")));
}

/**
 * A figure whose graph is larger than the screen scrolls; then it takes the keyboard focus (arrow keys
 * scroll it) and says so. Call after drawing and after a resize.
 */
export function markScrolling(figure, title) {
  const scrolls = figure.scrollWidth > figure.clientWidth + 1 || figure.scrollHeight > figure.clientHeight + 1;
  figure.dataset.scrolls = String(scrolls);
  if (scrolls) {
    figure.tabIndex = 0;
    figure.setAttribute("role", "group");
    figure.setAttribute("aria-label", `${title} (larger than the screen: scroll to see all of it)`);
  } else {
    figure.removeAttribute("tabindex");
    figure.removeAttribute("role");
    figure.removeAttribute("aria-label");
  }
}

/** Show the whole trace at once: every value and every gradient (for the explorable graph). */
export function finalState(trace) {
  const values = new Map(trace.nodes.map((node) => [node.id, numberText(node, "data")]));
  const grads = new Map(trace.nodes.map((node) => [node.id, numberText(node, "grad")]));
  return { values, grads };
}

/** True when the learner asked the system for less motion (then nothing moves faster than it must). */
export function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/**
 * The graph as a table, for a screen reader and for anyone who prefers rows to a picture: one row per box
 * (its label, how it is computed, its value and its gradient), following the steps as the picture does.
 */
export class GraphTable {
  constructor(trace, { title = "Computation graph", open = false } = {}) {
    this.rows = new Map();
    const body = el("tbody");
    for (const node of trace.nodes) {
      const value = el("td", { class: "table-value" });
      const grad = el("td", { class: "table-grad" });
      const row = el("tr", { "data-node-id": node.id },
        el("th", { scope: "row" }, node.label),
        el("td", { class: "table-formula" }, node.formula || (node.constant ? "a constant" : "an input")),
        value, grad);
      body.append(row);
      this.rows.set(node.id, { row, value, grad });
    }
    this.table = el("table", { class: "graph-table" },
      el("caption", { class: "visually-hidden" }, `${title}: every box, its value (data) and its gradient (grad)`),
      el("thead", {}, el("tr", {},
        el("th", { scope: "col" }, "Box"), el("th", { scope: "col" }, "Computed as"),
        el("th", { scope: "col" }, "data"), el("th", { scope: "col" }, "grad"))),
      body);
    this.element = el("details", { class: "graph-table-view", open },
      el("summary", {}, "Table view of the graph"),
      el("div", { class: "graph-table-frame", tabindex: "0", role: "region", "aria-label": `${title} as a table` }, this.table));
  }

  /** Show the texts (node id -> text; "?" while unknown), and mark the step's row and the asked box. */
  show(values, grads, step, asked = null) {
    for (const [id, { row, value, grad }] of this.rows) {
      value.textContent = values.has(id) ? values.get(id) : "?";
      grad.textContent = grads.has(id) ? grads.get(id) : "?";
      const active = Boolean(step && step.node === id);
      row.classList.toggle("active", active);
      if (active) row.setAttribute("aria-current", "step"); else row.removeAttribute("aria-current");
      row.classList.toggle("asked", id === asked);
    }
  }
}

/**
 * An animated graph with previous / play / next buttons, a speed choice, a scrubber, a caption and a
 * table view. Each step's caption is announced (a polite live region says the step and its caption).
 * options.gate(stepIndex) -> true blocks that step from playing (section 04 predictions).
 * options.focus(position, step) -> {primary, related} | null: the boxes to keep in view (default: the
 * step's box and the boxes it reads or sends to).
 * options.onChange(position, step) is called after every move.
 */
export class GraphPlayer {
  constructor(container, trace, options = {}) {
    this.trace = trace;
    this.steps = playSteps(trace);
    this.total = this.steps.length;
    this.position = 0;
    this.timer = null;
    this.gate = options.gate || (() => false);
    this.focus = options.focus || (() => null);
    this.onChange = options.onChange || (() => {});
    // Kept on screen with the graph and its caption at every step (e.g. section 04's prediction panel).
    this.alsoInView = options.alsoInView || null;
    // Less motion asked for: steps play at the slowest speed unless the learner picks another.
    this.speed = reducedMotion() ? "slow" : "normal";
    this.name = options.name || "graph";
    this.title = options.title || "Computation graph";
    this.container = container;
    container.classList.add("graph-player");
    this.#build();
    this.render();
    this.reserveCaptionHeight();
    markScrolling(this.figure, this.title);
    let resizeTimer = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => { this.reserveCaptionHeight(); markScrolling(this.figure, this.title); }, 150);
    });
    // Crossing the phone-width breakpoint swaps in the other layout (same steps, same position).
    window.matchMedia(NARROW).addEventListener("change", () => {
      this.#drawGraph();
      markScrolling(this.figure, this.title);
      this.render();
    });
  }

  /**
   * Give the caption the height of its longest text at the current width, so the page below it
   * never moves while the steps play (measured once per width, not per step).
   */
  reserveCaptionHeight() {
    if (!this.caption.isConnected) return;
    // One hidden copy of the caption per step, measured together: a single layout pass.
    const width = this.caption.getBoundingClientRect().width;
    const probe = el("div", { class: "caption-probe", "aria-hidden": "true" });
    probe.style.cssText = `position:absolute;visibility:hidden;left:-10000px;top:0;width:${width}px`;
    const texts = [["", "Start", START_CAPTION], ...this.steps.map((step) =>
      [step.phase, step.phase === "forward" ? "Forward" : "Backward", step.caption])];
    for (const [phase, badge, text] of texts) {
      const copy = this.caption.cloneNode(false);
      copy.style.minHeight = "0px";
      copy.append(el("span", { class: `phase-badge ${phase}` }, badge), el("span", { class: "caption-text" }, text));
      probe.append(copy);
    }
    this.caption.parentElement.append(probe);
    const tallest = Math.max(...Array.from(probe.children, (copy) => copy.getBoundingClientRect().height));
    probe.remove();
    this.caption.style.minHeight = `${Math.ceil(tallest)}px`;
  }

  #drawGraph() {
    this.view = new GraphView(this.trace, { name: this.name, title: this.title });
    this.figure.replaceChildren(this.view.element);
    this.container.dataset.shape = this.view.shape;
  }

  /** Draw the trace again (new numbers, perhaps a new layout), keeping the position. */
  redraw(trace) {
    this.trace = trace;
    this.steps = playSteps(trace);
    this.#drawGraph();
    markScrolling(this.figure, this.title);
    this.render();
    this.reserveCaptionHeight();
  }

  #build() {
    this.figure = el("figure", { class: "graph-figure" });
    this.#drawGraph();
    this.prevButton = el("button", { type: "button", class: "prev", onclick: () => { this.pause(); this.goTo(this.position - 1); } }, "◀ Previous");
    this.playButton = el("button", { type: "button", class: "play", "aria-pressed": "false", onclick: () => this.toggle() }, "▶ Play");
    this.nextButton = el("button", { type: "button", class: "next", onclick: () => { this.pause(); this.goTo(this.position + 1); } }, "Next ▶");
    const scrubberId = `${this.name}-scrubber`;
    this.scrubber = el("input", {
      type: "range", id: scrubberId, class: "scrubber", min: "0", max: String(this.total), step: "1", value: "0",
    });
    this.scrubber.addEventListener("input", () => { this.pause(); this.goTo(Number(this.scrubber.value)); });
    this.stepCount = el("output", { class: "step-count", for: scrubberId, "aria-live": "off" });
    const speedId = `${this.name}-speed`;
    this.speedChoice = el("select", { id: speedId, class: "speed" },
      ...SPEEDS.map((speed) => el("option", { value: speed.id, selected: speed.id === this.speed }, speed.label)));
    this.speedChoice.addEventListener("change", () => { this.speed = this.speedChoice.value; });
    const controls = el("div", { class: "player-controls", role: "group", "aria-label": `${this.title} controls` },
      this.prevButton, this.playButton, this.nextButton,
      el("span", { class: "speed-control" }, el("label", { for: speedId }, "Speed"), this.speedChoice),
      el("label", { for: scrubberId, class: "scrubber-label" }, "Step"), this.scrubber, this.stepCount);
    this.phaseBadge = el("span", { class: "phase-badge" });
    this.captionText = el("span", { class: "caption-text" });
    // The caption is read out by the live region below (with the step number), not twice.
    this.caption = el("p", { class: "caption" }, this.phaseBadge, this.captionText);
    this.announcer = el("p", { class: "visually-hidden step-announcer", role: "status", "aria-live": "polite", "aria-atomic": "true" });
    this.hint = el("p", { class: "gate-hint", "aria-live": "polite" });
    this.table = new GraphTable(this.trace, { title: this.title });
    this.container.append(this.figure, controls, this.caption, this.announcer, this.hint, this.table.element);
  }

  /** Index one past the last step that may play now (the first blocked step, or the end). */
  reachable() {
    for (let index = 0; index < this.total; index += 1) if (this.gate(index)) return index;
    return this.total;
  }

  goTo(position) {
    const limit = this.reachable();
    this.position = Math.max(0, Math.min(position, limit, this.total));
    this.render();
  }

  next() { this.goTo(this.position + 1); }

  toggle() { if (this.timer) this.pause(); else this.play(); }

  play() {
    if (this.position >= this.reachable()) {
      if (this.position >= this.total) this.goTo(0); else return;
    }
    // The pause sign is drawn (CSS), not a character: U+23F8 is a box in fonts without it (DejaVu).
    this.playButton.replaceChildren(el("span", { class: "pause-icon", "aria-hidden": "true" }), " Pause");
    this.playButton.setAttribute("aria-pressed", "true");
    const tick = () => {
      if (this.position >= this.reachable()) { this.pause(); return; }
      this.goTo(this.position + 1);
      if (this.position >= this.reachable()) { this.pause(); return; }
      this.timer = setTimeout(tick, stepDuration(this.steps[this.position - 1], this.speed));
    };
    // The first step comes quickly; each later one waits for its caption to be read.
    this.timer = setTimeout(tick, this.position > 0 ? stepDuration(this.steps[this.position - 1], this.speed) : 300);
  }

  pause() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.playButton.textContent = "▶ Play";
    this.playButton.setAttribute("aria-pressed", "false");
  }

  /**
   * Keep the boxes in focus, the controls and the caption (and alsoInView) on screen together: the graph
   * scrolls inside its frame to the boxes, then the page scrolls only if that block is not all visible.
   */
  #keepInView(focus) {
    revealBoxes(this.figure, this.view, focus);
    const last = this.alsoInView && this.alsoInView.isConnected && this.alsoInView.getClientRects().length ? this.alsoInView : this.hint;
    // The highest of the focused boxes, as far as the frame shows it.
    const frameTop = this.figure.getBoundingClientRect().top;
    const tops = [focus.primary, ...focus.related].map((id) => this.view.boxes.get(id)).filter(Boolean)
      .map((box) => Math.max(frameTop, box.group.getBoundingClientRect().top));
    const top = tops.length ? Math.min(...tops) : frameTop;
    const bottom = Math.max(this.caption.getBoundingClientRect().bottom, last.getBoundingClientRect().bottom);
    const room = window.innerHeight;
    if (top >= 0 && bottom <= room) return;
    // Align the block's bottom with the screen's (or its top, when it is the top that is hidden).
    const shift = bottom > room ? Math.min(bottom - room + 8, top - 8) : top - 8;
    if (shift !== 0) window.scrollBy({ top: shift, behavior: "instant" });
  }

  /** Redraw texts and highlights for the current position (no geometry changes). */
  render() {
    const { values, grads } = stateAt(this.steps, this.position);
    const step = this.position > 0 ? this.steps[this.position - 1] : null;
    this.view.show(values, grads, step);
    const limit = this.reachable();
    this.prevButton.disabled = this.position <= 0;
    this.nextButton.disabled = this.position >= limit;
    // A button that turns disabled while it has focus would drop focus to the page: hand it to the other one.
    keepFocus(this.nextButton, this.prevButton);
    keepFocus(this.prevButton, this.nextButton);
    this.scrubber.value = String(this.position);
    this.stepCount.textContent = `${this.position} / ${this.total}`;
    this.scrubber.setAttribute("aria-valuetext", `step ${this.position} of ${this.total}`);
    if (step) {
      this.phaseBadge.textContent = step.phase === "forward" ? "Forward" : "Backward";
      this.phaseBadge.className = `phase-badge ${step.phase}`;
      this.captionText.textContent = step.caption;
    } else {
      this.phaseBadge.textContent = "Start";
      this.phaseBadge.className = "phase-badge";
      this.captionText.textContent = START_CAPTION;
    }
    const said = step ? `Step ${this.position} of ${this.total}, ${this.phaseBadge.textContent.toLowerCase()}: ${step.caption}`
      : `Start: ${START_CAPTION}`;
    if (this.announcer.textContent !== said && (step || this.announcer.textContent)) this.announcer.textContent = said;
    this.container.dataset.position = String(this.position);
    this.container.dataset.total = String(this.total);
    this.container.dataset.activeNode = step ? step.node : "";
    this.container.classList.toggle("at-end", this.position >= this.total);
    const asked = this.focus(this.position, step);
    this.view.mark(asked ? asked.primary : null, asked ? asked.related : []);
    this.table.show(values, grads, step, asked ? asked.primary : null);
    this.onChange(this.position, step);
    const focus = asked || stepFocus(this.trace, step);
    if (focus) this.#keepInView(focus);
  }
}

/**
 * Light up the term of a rendered chain-rule formula (KaTeX) that a backward step computes: the
 * fraction ∂top/∂bottom where top is the step's node and bottom one of the inputs it sends to.
 * Returns a function(step, labels) to call after every move.
 */
export function formulaHighlighter(formulaNode) {
  const terms = Array.from(formulaNode.querySelectorAll(".katex-html .mfrac")).map((frac) => {
    // KaTeX writes a fraction's denominator before its numerator: "∂a∂L" is ∂L/∂a.
    const parts = frac.textContent.replace(/[\u200b\s]/g, "").split("∂").filter(Boolean);
    return { frac, top: parts[1], bottom: parts[0] };
  });
  return (step, labelOf) => {
    let lit = null;
    if (step && step.phase === "backward") {
      const top = labelOf(step.node);
      const bottoms = new Set((step.contributions || []).map((c) => labelOf(c.input)));
      // The formula's first fraction is the left-hand side (the whole gradient), not a step's term.
      lit = terms.slice(1).find((term) => term.top === top && bottoms.has(term.bottom)) || null;
    }
    for (const term of terms) term.frac.classList.toggle("term-active", term === lit);
    formulaNode.dataset.activeTerm = lit ? `${lit.top}/${lit.bottom}` : "";
  };
}
