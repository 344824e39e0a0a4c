// Draw a computation graph from a trace (contracts section 1) as SVG and step through it.
//
// Layout: layered by depth. An interior node sits in column 1 + max(column of its inputs);
// a leaf sits one column left of its first consumer, so constants join where they are used.
// Boxes have a fixed size and every text slot exists from the start, so nothing moves while
// values and gradients appear: the animation only changes text and classes.
import { el, fmt } from "./api.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const BOX_W = 150;
const BOX_H = 72;
const COL_GAP = 60;
const ROW_GAP = 26;
const PAD = 14;
const START_CAPTION = "Press Next or Play: values flow forward first, then gradients flow backward.";

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Columns and rows for every node: {positions: Map(id -> {x, y}), width, height}. */
export function layoutGraph(trace) {
  const byId = new Map(trace.nodes.map((node) => [node.id, node]));
  const consumers = new Map(trace.nodes.map((node) => [node.id, []]));
  for (const node of trace.nodes) for (const input of node.inputs) consumers.get(input).push(node.id);

  const column = new Map();
  for (const node of trace.nodes) {  // topological order: inputs come first
    if (!node.inputs.length) continue;
    column.set(node.id, 1 + Math.max(...node.inputs.map((id) => (byId.get(id).inputs.length ? column.get(id) : 0))));
  }
  for (const node of trace.nodes) {
    if (node.inputs.length) continue;
    const uses = consumers.get(node.id).map((id) => column.get(id));
    column.set(node.id, uses.length ? Math.max(0, Math.min(...uses) - 1) : 0);
  }
  const columnCount = Math.max(...column.values()) + 1;
  const columns = Array.from({ length: columnCount }, () => []);
  const order = new Map(trace.nodes.map((node, index) => [node.id, index]));
  for (const node of trace.nodes) columns[column.get(node.id)].push(node.id);

  // Order each column by where its consumers sit (right to left), to keep edges short and uncrossed.
  const row = new Map();
  for (let c = columnCount - 1; c >= 0; c -= 1) {
    const centre = (id) => {
      const placed = consumers.get(id).filter((other) => row.has(other)).map((other) => row.get(other));
      return placed.length ? placed.reduce((s, v) => s + v, 0) / placed.length : order.get(id);
    };
    columns[c].sort((p, q) => centre(p) - centre(q) || order.get(p) - order.get(q));
    columns[c].forEach((id, index) => row.set(id, index));
  }
  const rows = Math.max(...columns.map((ids) => ids.length));
  const height = PAD * 2 + rows * BOX_H + (rows - 1) * ROW_GAP;
  const width = PAD * 2 + columnCount * BOX_W + (columnCount - 1) * COL_GAP;
  const positions = new Map();
  columns.forEach((ids, c) => {
    const used = ids.length * BOX_H + (ids.length - 1) * ROW_GAP;
    const top = (height - used) / 2;  // centre short columns vertically
    ids.forEach((id, r) => positions.set(id, { x: PAD + c * (BOX_W + COL_GAP), y: top + r * (BOX_H + ROW_GAP) }));
  });
  return { positions, width, height };
}

/** The trace's steps in play order: forward steps, then backward steps. */
export function playSteps(trace) {
  return [
    ...trace.forward.map((step, index) => ({ ...step, phase: "forward", index })),
    ...trace.backward.map((step, index) => ({ ...step, phase: "backward", index })),
  ];
}

/** Values and gradients known after the first `position` steps. */
export function stateAt(steps, position) {
  const values = new Map();
  const grads = new Map();
  for (const step of steps.slice(0, position)) {
    if (step.phase === "forward") {
      values.set(step.node, step.value);
    } else {
      grads.set(step.node, step.grad);
      for (const c of step.contributions || []) grads.set(c.input, c.grad_after);
    }
  }
  return { values, grads };
}

/**
 * An animated graph with previous / play / next buttons, a scrubber and a caption.
 * options.gate(stepIndex) -> true blocks that step from playing (section 04 predictions).
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
    this.onChange = options.onChange || (() => {});
    this.intervalMs = options.intervalMs || 800;
    this.byId = new Map(trace.nodes.map((node) => [node.id, node]));
    this.name = options.name || "graph";
    this.container = container;
    container.classList.add("graph-player");
    this.#build(options.title || "Computation graph");
    this.render();
    this.reserveCaptionHeight();
    let resizeTimer = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => this.reserveCaptionHeight(), 150);
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
      copy.removeAttribute("aria-live");
      copy.style.minHeight = "0px";
      copy.append(el("span", { class: `phase-badge ${phase}` }, badge), el("span", { class: "caption-text" }, text));
      probe.append(copy);
    }
    this.caption.parentElement.append(probe);
    const tallest = Math.max(...Array.from(probe.children, (copy) => copy.getBoundingClientRect().height));
    probe.remove();
    this.caption.style.minHeight = `${Math.ceil(tallest)}px`;
  }

  #build(title) {
    const { positions, width, height } = layoutGraph(this.trace);
    this.positions = positions;
    const drawing = svg("svg", {
      viewBox: `0 0 ${width} ${height}`, class: "graph-svg", role: "img",
      "aria-label": `${title}: ${this.trace.nodes.length} boxes. The caption below says what each step does.`,
    });
    drawing.style.aspectRatio = `${width} / ${height}`;
    const defs = svg("defs");
    for (const kind of ["idle", "fwd", "bwd"]) {
      const marker = svg("marker", {
        id: `${this.name}-arrow-${kind}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
        markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse",
      });
      marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: `arrow arrow-${kind}` }));
      defs.append(marker);
    }
    drawing.append(defs);

    // Edges first so boxes sit on top of them.
    this.edges = [];
    const edgeLayer = svg("g", { class: "edges" });
    for (const node of this.trace.nodes) {
      node.inputs.forEach((inputId, slot) => {
        const from = positions.get(inputId);
        const to = positions.get(node.id);
        const spread = node.inputs.length > 1 ? (slot / (node.inputs.length - 1) - 0.5) * 24 : 0;
        const x1 = from.x + BOX_W, y1 = from.y + BOX_H / 2;
        const x2 = to.x, y2 = to.y + BOX_H / 2 + spread;
        const bend = Math.max(24, (x2 - x1) / 2);
        const path = svg("path", {
          d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`,
          class: "edge", "marker-end": `url(#${this.name}-arrow-idle)`,
        });
        // The label shows what flows back along this edge during a backward step.
        // Placed at the middle of the edge, above it (edges into one box start from different boxes).
        const t = 0.5;
        const along = (p0, p1, p2, p3) => (1 - t) ** 3 * p0 + 3 * (1 - t) ** 2 * t * p1 + 3 * (1 - t) * t ** 2 * p2 + t ** 3 * p3;
        const label = svg("text", {
          x: along(x1, x1 + bend, x2 - bend, x2), y: along(y1, y1, y2, y2) - 7, class: "edge-label", "text-anchor": "middle",
        }, "");
        edgeLayer.append(path, label);
        this.edges.push({ from: inputId, to: node.id, slot, path, label });
      });
    }
    drawing.append(edgeLayer);

    this.boxes = new Map();
    const boxLayer = svg("g", { class: "boxes" });
    for (const node of this.trace.nodes) {
      const { x, y } = positions.get(node.id);
      const group = svg("g", {
        class: `node ${node.leaf ? "leaf" : "op"}`, transform: `translate(${x},${y})`,
        "data-node-id": node.id, "data-label": node.label,
      });
      group.append(svg("rect", { width: BOX_W, height: BOX_H, rx: 8, class: "box" }));
      // Long labels (e.g. "x1*w1 + x2*w2") get a smaller font so they fit the fixed box.
      const room = node.symbol ? 12 : 16;
      const labelClass = node.label.length > room ? "node-label long" : "node-label";
      group.append(svg("text", { x: 10, y: 20, class: labelClass }, node.label));
      if (node.symbol) {
        group.append(svg("text", { x: BOX_W - 10, y: 20, class: "node-op", "text-anchor": "end" }, node.symbol));
      }
      group.append(svg("text", { x: 10, y: 42, class: "slot-name" }, "value"));
      const value = svg("text", { x: BOX_W - 10, y: 42, class: "node-value", "text-anchor": "end" }, "");
      group.append(svg("text", { x: 10, y: 62, class: "slot-name" }, "grad"));
      const grad = svg("text", { x: BOX_W - 10, y: 62, class: "node-grad", "text-anchor": "end" }, "");
      group.append(value, grad);
      const title = svg("title", {}, node.formula || `${node.label} (input)`);
      group.append(title);
      boxLayer.append(group);
      this.boxes.set(node.id, { group, value, grad });
    }
    drawing.append(boxLayer);

    const figure = el("figure", { class: "graph-figure" }, drawing);
    this.prevButton = el("button", { type: "button", class: "prev", onclick: () => { this.pause(); this.goTo(this.position - 1); } }, "◀ Previous");
    this.playButton = el("button", { type: "button", class: "play", "aria-pressed": "false", onclick: () => this.toggle() }, "▶ Play");
    this.nextButton = el("button", { type: "button", class: "next", onclick: () => { this.pause(); this.goTo(this.position + 1); } }, "Next ▶");
    const scrubberId = `${this.name}-scrubber`;
    this.scrubber = el("input", {
      type: "range", id: scrubberId, class: "scrubber", min: "0", max: String(this.total), step: "1", value: "0",
    });
    this.scrubber.addEventListener("input", () => { this.pause(); this.goTo(Number(this.scrubber.value)); });
    this.stepCount = el("output", { class: "step-count", for: scrubberId, "aria-live": "off" });
    const controls = el("div", { class: "player-controls", role: "group", "aria-label": `${title} controls` },
      this.prevButton, this.playButton, this.nextButton,
      el("label", { for: scrubberId, class: "scrubber-label" }, "Step"), this.scrubber, this.stepCount);
    this.phaseBadge = el("span", { class: "phase-badge" });
    this.captionText = el("span", { class: "caption-text" });
    this.caption = el("p", { class: "caption", "aria-live": "polite" }, this.phaseBadge, this.captionText);
    this.hint = el("p", { class: "gate-hint", "aria-live": "polite" });
    this.container.append(figure, controls, this.caption, this.hint);
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
    this.playButton.textContent = "⏸ Pause";
    this.playButton.setAttribute("aria-pressed", "true");
    this.timer = setInterval(() => {
      if (this.position >= this.reachable()) { this.pause(); return; }
      this.goTo(this.position + 1);
      if (this.position >= this.reachable()) this.pause();
    }, this.intervalMs);
  }

  pause() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = "▶ Play";
    this.playButton.setAttribute("aria-pressed", "false");
  }

  /** Redraw texts and highlights for the current position (no geometry changes). */
  render() {
    const { values, grads } = stateAt(this.steps, this.position);
    const step = this.position > 0 ? this.steps[this.position - 1] : null;
    for (const [id, box] of this.boxes) {
      const hasValue = values.has(id);
      const hasGrad = grads.has(id);
      box.value.textContent = hasValue ? fmt(values.get(id)) : "?";
      box.grad.textContent = hasGrad ? fmt(grads.get(id)) : "?";
      box.group.classList.toggle("has-value", hasValue);
      box.group.classList.toggle("has-grad", hasGrad);
      box.group.classList.toggle("active", Boolean(step && step.node === id));
      const receiving = Boolean(step && step.phase === "backward" && (step.contributions || []).some((c) => c.input === id));
      box.group.classList.toggle("receiving", receiving);
    }
    const usedContribution = new Set();
    for (const edge of this.edges) {
      let kind = "idle";
      edge.label.textContent = "";
      if (step && step.phase === "forward" && edge.to === step.node) kind = "fwd";
      if (step && step.phase === "backward" && edge.to === step.node) {
        kind = "bwd";
        // Pair each edge with its own contribution (an input used twice has two edges and two contributions).
        const contributions = step.contributions || [];
        const index = contributions.findIndex((c, i) => c.input === edge.from && !usedContribution.has(i));
        if (index >= 0) {
          usedContribution.add(index);
          edge.label.textContent = `+= ${fmt(contributions[index].contribution)}`;
        }
      }
      edge.path.setAttribute("class", `edge edge-${kind}`);
      edge.path.setAttribute("marker-end", `url(#${this.name}-arrow-${kind})`);
    }
    const limit = this.reachable();
    this.prevButton.disabled = this.position <= 0;
    this.nextButton.disabled = this.position >= limit;
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
    this.container.dataset.position = String(this.position);
    this.container.dataset.total = String(this.total);
    this.container.classList.toggle("at-end", this.position >= this.total);
    this.onChange(this.position, step);
  }
}
