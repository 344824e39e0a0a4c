// The animated line fit of a lesson's "see it work": the points and the line after each step on the
// left, the loss after each step on the right (log scale, so a falling loss and a diverging one both
// fit). Every number comes from the server (lesson.see_it_work.plot), computed by the engine.
import { el, keepFocus } from "./api.js";
import { numberText, reducedMotion } from "./graph.js";

const SVG_NS = "http://www.w3.org/2000/svg";
// A panel's size and margins, shared by the other plots (nudgeplot.js, boundaryplot.js).
export const W = 320;
export const H = 240;
export const PAD = 34;
export const TOP = 26;  // room for the y axis's name above the plot
const INTERVAL_MS = 250;
const REDUCED_INTERVAL_MS = 1000;  // with less motion asked for: one frame a second

export function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

export function scale(lo, hi, outLo, outHi) {
  const span = hi - lo || 1;
  return (v) => outLo + ((v - lo) / span) * (outHi - outLo);
}

export function axes(root, xLabel, yLabel, left = PAD) {
  root.append(
    svg("line", { x1: left, y1: H - PAD, x2: W - 8, y2: H - PAD, class: "fit-axis" }),
    svg("line", { x1: left, y1: TOP - 6, x2: left, y2: H - PAD, class: "fit-axis" }),
    svg("text", { x: W - 8, y: H - 8, "text-anchor": "end", class: "fit-axis-label" }, xLabel),
    svg("text", { x: 4, y: 13, class: "fit-axis-label" }, yLabel));
}

/** A frame around a table that may be wider than the screen: it scrolls sideways, and takes the keyboard focus
 * so that the arrow keys scroll it (named, so a screen reader says what it holds). */
export function tableFrame(table, label) {
  return el("div", { class: "plot-table-frame", tabindex: "0", role: "region", "aria-label": label }, table);
}

/** One data table of a plot: fill(caption, head, rows) draws it (head: the column headers; each row: its header,
 * then its cells, all texts from the server); mark(k) marks row k as the plot's current step. */
function dataTable() {
  const element = el("table", { class: "graph-table plot-table" });
  let rows = [];
  return {
    element,
    fill(caption, head, entries) {
      rows = entries.map(([header, ...cells]) => el("tr", {}, el("th", { scope: "row" }, header),
        ...cells.map((cell) => el("td", {}, cell))));
      element.replaceChildren(el("caption", {}, caption),
        el("thead", {}, el("tr", {}, ...head.map((name) => (name ? el("th", { scope: "col" }, name) : el("td", {}))))),
        el("tbody", {}, ...rows));
    },
    mark(k) {
      rows.forEach((row, i) => { if (i === k) row.setAttribute("aria-current", "step"); else row.removeAttribute("aria-current"); });
    },
  };
}

/** The table view of a plot, folded under it as a graph's is: `count` data tables of the numbers the plot
 * draws, for a learner who cannot see the picture. Returns {element, tables}. */
export function plotTableView(name, count = 1) {
  const tables = Array.from({ length: count }, dataTable);
  const element = el("details", { class: "plot-table-view" }, el("summary", {}, "Table view of the plot"),
    tableFrame(el("div", {}, ...tables.map((table) => table.element)), `${name} as a table`));
  return { element, tables };
}

/** Draw the points and an (empty) line; return update(frame). */
export function linePanel(plot) {
  const xMin = Math.min(...plot.xs), xMax = Math.max(...plot.xs);
  const yMin = Math.min(0, ...plot.ys), yMax = Math.max(...plot.ys);
  const margin = (yMax - yMin) * 0.15 || 1;
  const sx = scale(xMin, xMax, PAD + 10, W - 16);
  const yLow = yMin - margin, yHigh = yMax + margin;
  const sy = scale(yLow, yHigh, H - PAD, TOP);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "fit-panel", role: "img", "aria-label": "The points and the fitted line" });
  const clip = svg("clipPath", { id: "fit-clip" }, undefined);
  clip.append(svg("rect", { x: PAD, y: TOP, width: W - PAD - 8, height: H - PAD - TOP }));
  root.append(clip);
  axes(root, "x", "y");
  plot.xs.forEach((x, i) => root.append(svg("circle", { cx: sx(x), cy: sy(plot.ys[i]), r: 4.5, class: "fit-point" })));
  const line = svg("line", { class: "fit-line", "clip-path": "url(#fit-clip)" });
  const away = svg("text", { x: W / 2, y: TOP + 14, "text-anchor": "middle", class: "fit-away" }, "");
  root.append(line, away);
  const update = (frame) => {
    // A diverging line can leave the picture altogether: say so rather than show an empty plot.
    const atLeft = frame.w * xMin + frame.b, atRight = frame.w * xMax + frame.b;
    const inside = Math.max(atLeft, atRight) >= yLow && Math.min(atLeft, atRight) <= yHigh;
    away.textContent = inside ? "" : `The line is ${atLeft + atRight > 0 ? "above" : "below"} the picture.`;
    // Extend the line well past the data, so it still crosses the panel when it is steep.
    const left = xMin - (xMax - xMin), right = xMax + (xMax - xMin);
    line.setAttribute("x1", sx(left)); line.setAttribute("y1", sy(frame.w * left + frame.b));
    line.setAttribute("x2", sx(right)); line.setAttribute("y2", sy(frame.w * right + frame.b));
  };
  return { root, update };
}

/** The loss curve of one run, revealed up to the current step; return update(step). */
export function lossPanel(run) {
  const logs = run.frames.map((f) => Math.log10(Math.max(f.loss, 1e-12)));
  const lo = Math.floor(Math.min(...logs)), hi = Math.ceil(Math.max(...logs));
  const sx = scale(0, run.steps, PAD, W - 12);
  const sy = scale(lo, hi === lo ? lo + 1 : hi, H - PAD, TOP);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "fit-panel", role: "img", "aria-label": "The loss after each step (log scale)" });
  axes(root, "step", "loss (log scale)");
  for (let p = lo; p <= hi; p += 1) {
    root.append(svg("text", { x: PAD - 4, y: sy(p) + 4, "text-anchor": "end", class: "fit-tick" }, `1e${p}`));
  }
  const path = svg("polyline", { class: "fit-loss", fill: "none" });
  const dot = svg("circle", { r: 4, class: "fit-loss-dot" });
  root.append(path, dot);
  const update = (step) => {
    const points = logs.slice(0, step + 1).map((v, k) => `${sx(k)},${sy(v)}`);
    path.setAttribute("points", points.join(" "));
    dot.setAttribute("cx", sx(step)); dot.setAttribute("cy", sy(logs[step]));
  };
  return { root, update };
}

export function renderFitPlot(slot, plot) {
  const interval = reducedMotion() ? REDUCED_INTERVAL_MS : INTERVAL_MS;
  const holder = el("div", { class: "fit-plot", id: "fit-plot", "data-frame-ms": interval });
  const view = plotTableView("The line fit");
  const [numbers] = view.tables;
  const choices = el("fieldset", { class: "fit-runs" }, el("legend", {}, "Learning rate"));
  const caption = el("p", { class: "fit-caption", "aria-live": "polite" });
  const panels = el("div", { class: "fit-panels" });
  const playButton = el("button", { type: "button", class: "secondary", "data-action": "play" }, "Play");
  const nextButton = el("button", { type: "button", class: "secondary", "data-action": "next" }, "Next step");
  const resetButton = el("button", { type: "button", class: "secondary", "data-action": "reset" }, "Restart");
  const controls = el("div", { class: "player-controls" }, playButton, nextButton, resetButton);
  holder.append(choices, controls, panels, caption, view.element);
  slot.append(holder);

  let run = plot.runs.find((r) => r.name === "right") || plot.runs[0];
  let step = 0;
  let timer = null;
  let line = null;
  let loss = null;

  const show = () => {
    const frame = run.frames[step];
    line.update(frame);
    loss.update(step);
    holder.dataset.run = run.name;
    holder.dataset.step = String(step);
    caption.textContent = `Learning rate ${numberText(run, "lr")} (${run.label}), step ${step} of ${run.steps}: ` +
      `w = ${numberText(frame, "w")}, b = ${numberText(frame, "b")}, loss = ${numberText(frame, "loss")}.`;
    nextButton.disabled = step >= run.steps;
    keepFocus(nextButton, resetButton);  // the last step: focus stays on the controls, on Restart
    numbers.mark(step);
  };
  const stop = () => {
    if (timer !== null) clearInterval(timer);
    timer = null;
    playButton.textContent = "Play";
    caption.setAttribute("aria-live", "polite");  // a step at a time: each caption is read out
  };
  const choose = (chosen) => {
    stop();
    run = chosen;
    step = 0;
    line = linePanel(plot);
    loss = lossPanel(run);
    panels.replaceChildren(line.root, loss.root);
    numbers.fill(`Learning rate ${numberText(run, "lr")} (${run.label}): the line y = w x + b and its loss after each step, as the plot draws them`,
      ["step", "w", "b", "loss"],
      run.frames.map((frame) => [String(frame.step), numberText(frame, "w"), numberText(frame, "b"), numberText(frame, "loss")]));
    show();
  };
  plot.runs.forEach((candidate) => {
    const id = `fit-run-${candidate.name}`;
    const input = el("input", { type: "radio", name: "fit-run", id, value: candidate.name, checked: candidate === run,
      onchange: () => choose(candidate) });
    choices.append(el("label", { for: id, class: "fit-run" }, input, ` ${candidate.label} (${numberText(candidate, "lr")})`));
  });
  playButton.addEventListener("click", () => {
    if (timer !== null) { stop(); return; }
    if (step >= run.steps) step = 0;
    playButton.textContent = "Pause";
    caption.setAttribute("aria-live", "off");  // playing: not a caption read out per frame
    timer = setInterval(() => {
      step += 1;
      show();
      if (step >= run.steps) stop();
    }, interval);
  });
  nextButton.addEventListener("click", () => { stop(); if (step < run.steps) { step += 1; show(); } });
  resetButton.addEventListener("click", () => { stop(); step = 0; show(); });
  choose(run);
  return holder;
}

/** Play, next step and restart for a plot that steps through frames 0..last: show(k) draws frame k, and
 * `caption` (read out a step at a time, not while playing) says what it shows. As the line fit does, it
 * plays one frame a second when the learner asks for less motion.
 * Returns {controls (the buttons' row), goTo(k), stop(), setLast(k)}; the holder's data-step says where it is. */
export function frameStepper(holder, last, show, caption) {
  const interval = reducedMotion() ? REDUCED_INTERVAL_MS : INTERVAL_MS;
  holder.dataset.frameMs = interval;
  const playButton = el("button", { type: "button", class: "secondary", "data-action": "play" }, "Play");
  const nextButton = el("button", { type: "button", class: "secondary", "data-action": "next" }, "Next step");
  const resetButton = el("button", { type: "button", class: "secondary", "data-action": "reset" }, "Restart");
  const controls = el("div", { class: "player-controls" }, playButton, nextButton, resetButton);
  let step = 0;
  let end = last;
  let timer = null;
  const stop = () => {
    if (timer !== null) clearInterval(timer);
    timer = null;
    playButton.textContent = "Play";
    caption.setAttribute("aria-live", "polite");
  };
  const goTo = (k) => {
    step = Math.max(0, Math.min(end, k));
    holder.dataset.step = String(step);
    nextButton.disabled = step >= end;
    keepFocus(nextButton, resetButton);  // the last step: focus stays on the controls, on Restart
    show(step);
  };
  playButton.addEventListener("click", () => {
    if (timer !== null) { stop(); return; }
    if (step >= end) goTo(0);
    playButton.textContent = "Pause";
    caption.setAttribute("aria-live", "off");
    timer = setInterval(() => {
      goTo(step + 1);
      if (step >= end) stop();
    }, interval);
  });
  nextButton.addEventListener("click", () => { stop(); goTo(step + 1); });
  resetButton.addEventListener("click", () => { stop(); goTo(0); });
  return { controls, goTo, stop, setLast: (k) => { end = k; } };
}

/** A group of radio buttons, one per choice ({id, label}); onChoose(choice) when the learner picks one. */
export function choiceGroup(legend, name, choices, chosen, onChoose) {
  const group = el("fieldset", { class: "fit-runs" }, el("legend", {}, legend));
  for (const choice of choices) {
    const id = `${name}-${choice.id}`;
    const input = el("input", { type: "radio", name, id, value: choice.id, checked: choice === chosen,
      onchange: () => onChoose(choice) });
    group.append(el("label", { for: id, class: "fit-run" }, input, ` ${choice.label}`));
  }
  return group;
}
