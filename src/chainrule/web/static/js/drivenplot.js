// Driven plots: plots a learner drives with sliders (a lesson folder's driven.json). Each slider's stops and
// their texts come from the server; every change asks the server, which runs the engine, for the plot again
// (POST /api/lessons/{id}/driven/{name}). Each plot has a live caption and a table view of its numbers.
import { el, get, post, debounce, plural } from "./api.js";
import { numberText, reducedMotion } from "./graph.js";
import { svg, scale, axes, plotTableView, linePanel, lossPanel, W, H, PAD, TOP } from "./fitplot.js";
import { planePanel, lossPanel as boundaryLossPanel, fillSides } from "./boundaryplot.js";
import { curvePanel, errorPanel } from "./nudgeplot.js";

const ASK_AFTER_MS = 150;  // a slider held down asks once it rests, not at every stop
const TRAIN_FRAME_MS = 90;  // the boundary redrawn as the network trains, a recorded step at a time
// What each kind's table view holds (its region's name: "... as a table").
const TABLE_NAMES = { descent: "The descent you chose", network: "The network you trained", slope: "The nudges you chose" };

/** A panel cloned from another plot keeps its clip path's id: give it one of its own on this page. */
function ownClip(root, id) {
  const clip = root.querySelector("clipPath");
  if (!clip) return root;
  const old = clip.id;
  clip.id = id;
  for (const node of root.querySelectorAll(`[clip-path="url(#${old})"]`)) node.setAttribute("clip-path", `url(#${id})`);
  return root;
}

/** The lesson's driven plots, each in its section's slot (slots: section number -> element). */
export async function renderDrivenPlots(slots, base) {
  const { plots } = await get(`${base}/driven`, "load the plots you can drive");
  await Promise.all(plots.filter((spec) => slots.has(spec.section))
    .map((spec) => renderDriven(slots.get(spec.section), spec, base)));
}

function slider(spec, control, onChange) {
  const id = `driven-${spec.name}-${control.name}`;
  const start = control.values.indexOf(control.start);
  const shown = el("output", { for: id, class: "driven-value", id: `${id}-value` }, control.values_text[start]);
  const input = el("input", { type: "range", id, min: 0, max: control.values.length - 1, step: 1, value: start,
    "aria-valuetext": control.values_text[start], "data-control": control.name });
  input.addEventListener("input", () => {
    const k = Number(input.value);
    input.setAttribute("aria-valuetext", control.values_text[k]);
    shown.textContent = control.values_text[k];
    onChange();
  });
  const row = el("div", { class: "driven-control" }, el("label", { for: id }, control.label), input, shown);
  return { row, value: () => control.values[Number(input.value)] };
}

async function renderDriven(slot, spec, base) {
  const holder = el("div", { class: "fit-plot driven-plot", id: `driven-${spec.name}`, "data-kind": spec.kind,
    role: "group", "aria-labelledby": `driven-${spec.name}-title` });
  const caption = el("p", { class: "fit-caption driven-caption", "aria-live": "polite" });
  const panels = el("div", { class: "fit-panels" });
  const view = plotTableView(TABLE_NAMES[spec.kind], spec.kind === "network" ? 2 : 1);
  const draw = { descent: drawDescent, network: drawNetwork, slope: drawSlope }[spec.kind];
  let asked = 0;
  let stopTraining = () => {};
  const sliders = [];
  const ask = async () => {
    asked += 1;
    const count = asked;
    holder.dataset.state = "busy";
    const values = Object.fromEntries(spec.controls.map((control, k) => [control.name, sliders[k].value()]));
    let plot;
    try {
      plot = await post(`${base}/driven/${encodeURIComponent(spec.name)}`, { values }, "compute the plot");
    } catch (error) {
      if (count === asked) holder.dataset.state = "error";  // the message area says why
      return;
    }
    if (count !== asked) return;  // a later choice is on its way
    stopTraining();
    stopTraining = draw(plot, { panels, caption, tables: view.tables, holder, name: spec.name });
    holder.dataset.answers = String(count);
    holder.dataset.state = "ready";
  };
  const later = debounce(ask, ASK_AFTER_MS);
  for (const control of spec.controls) sliders.push(slider(spec, control, later));
  holder.append(el("h3", { id: `driven-${spec.name}-title`, class: "driven-title" }, spec.title),
    el("div", { class: "driven-controls" }, ...sliders.map((s) => s.row)), panels, caption, view.element);
  slot.append(holder);
  await ask();
}

// ---------------------------------------------------------------- gradient descent

/** The loss over (w, b) in bands (darker: lower), the descent's path over it; returns the svg. */
function contourPanel(plot, name) {
  const { surface, frames } = plot;
  const { w0, w1, b0, b1 } = surface.box;
  const cells = surface.cells;
  const left = PAD + 6;
  const sx = scale(w0, w1, left, W - 12);
  const sy = scale(b0, b1, H - PAD, TOP);
  const cw = (W - 12 - left) / cells, ch = (H - PAD - TOP) / cells;
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "fit-panel driven-contour", role: "img",
    "aria-label": "The loss over w and b as bands, darker where it is lower, with the path of the descent from its start" });
  const clipId = `driven-${name}-contour-clip`;
  const clip = svg("clipPath", { id: clipId });
  clip.append(svg("rect", { x: left, y: TOP, width: W - 12 - left, height: H - PAD - TOP }));
  root.append(clip);
  const levels = surface.levels.length + 1;
  // Each grid point's band shades the cell centred on it (cells at the edges are halves, clipped).
  surface.bands.forEach((band, k) => {
    const a = k % (cells + 1), b = (k - a) / (cells + 1);
    root.append(svg("rect", { x: left + (a - 0.5) * cw, y: TOP + (b - 0.5) * ch, width: cw, height: ch,
      class: "contour-band", "fill-opacity": 0.08 + 0.8 * (1 - band / (levels - 1)), "clip-path": `url(#${clipId})` }));
  });
  axes(root, "w", "b", left);
  root.append(
    svg("text", { x: left, y: H - PAD + 14, "text-anchor": "middle", class: "fit-tick" }, numberText(surface.box, "w0")),
    svg("text", { x: W - 12, y: H - PAD + 14, "text-anchor": "end", class: "fit-tick" }, numberText(surface.box, "w1")),
    svg("text", { x: left - 4, y: H - PAD, "text-anchor": "end", class: "fit-tick" }, numberText(surface.box, "b0")),
    svg("text", { x: left - 4, y: TOP + 10, "text-anchor": "end", class: "fit-tick" }, numberText(surface.box, "b1")),
    svg("polyline", { class: "descent-path", fill: "none", "clip-path": `url(#${clipId})`,
      points: frames.map((f) => `${sx(f.w)},${sy(f.b)}`).join(" ") }),
    svg("circle", { cx: sx(frames[0].w), cy: sy(frames[0].b), r: 4.5, class: "descent-start" }),
    svg("path", { class: "descent-lowest", d: `M${sx(surface.lowest.w) - 5} ${sy(surface.lowest.b)}h10M${sx(surface.lowest.w)} ${sy(surface.lowest.b) - 5}v10` }));
  return root;
}

function drawDescent(plot, { panels, caption, tables, name }) {
  const [numbers] = tables;
  const last = plot.frames[plot.frames.length - 1];
  const line = linePanel(plot);
  line.update(last);
  const loss = lossPanel({ steps: plot.steps, frames: plot.frames });
  loss.update(plot.frames.length - 1);
  panels.replaceChildren(ownClip(line.root, `driven-${name}-line-clip`), loss.root, contourPanel(plot, name));
  const chosen = plot.chosen;
  const start = `learning rate ${numberText(chosen, "lr")}, from w = ${numberText(chosen, "w")}, b = ${numberText(chosen, "b")}`;
  numbers.fill(`Gradient descent with ${start}: w, b and the loss after each step, as the plots draw them`,
    ["step", "w", "b", "loss"], plot.frames.map((f) => [String(f.step), numberText(f, "w"), numberText(f, "b"), numberText(f, "loss")]));
  caption.textContent = plot.diverged
    ? `With ${start}, the steps overshoot further each time: after step ${last.step} the numbers grow too large to compute.`
    : `With ${start}, after ${plural(last.step, "step")}: w = ${numberText(last, "w")}, b = ${numberText(last, "b")}, `
      + `loss = ${numberText(last, "loss")} (it started at ${numberText(plot.frames[0], "loss")}).`;
  return () => {};
}

// ---------------------------------------------------------------- a network learns

function drawNetwork(plot, { panels, caption, tables, holder }) {
  const { run } = plot;
  const [losses, sides] = tables;
  const plane = planePanel(plot);
  const loss = boundaryLossPanel(run);
  panels.replaceChildren(plane.root, loss.root);
  const chosen = plot.chosen;
  const named = `${numberText(chosen, "width")} neurons per hidden layer, learning rate ${numberText(chosen, "lr")}, `
    + `seed ${numberText(chosen, "seed")}`;
  losses.fill(`${named}: the loss and the share of the points on their side after each recorded step`,
    ["step", "loss", "points on their side (%)"],
    run.frames.map((f) => [String(f.step), numberText(f, "loss"), numberText(f, "accuracy")]));
  const end = run.frames.length - 1;
  const show = (step) => {
    plane.update(run.frames[step]);
    loss.update(step);
    holder.dataset.frame = String(step);
  };
  const finish = () => {
    const frame = run.frames[end];
    show(end);
    fillSides(sides, plot, frame);
    caption.textContent = `${named}: after ${plural(frame.step, "step")} the loss is ${numberText(frame, "loss")} and `
      + `${numberText(frame, "accuracy")}% of the points are on their side (it started at ${numberText(run.frames[0], "accuracy")}%).`;
    holder.dataset.trained = "true";
  };
  holder.dataset.trained = "false";
  if (reducedMotion()) { finish(); return () => {}; }
  // The boundary redrawn as it trains; the caption and the table say only where it ends (until then, what
  // is training, so an earlier choice's caption never stands for this one).
  caption.textContent = `Training ${named}: the boundary is redrawn as the network learns.`;
  let k = 0;
  show(0);
  const timer = setInterval(() => {
    k += 1;
    if (k >= end) { clearInterval(timer); finish(); } else show(k);
  }, TRAIN_FRAME_MS);
  return () => clearInterval(timer);
}

// ---------------------------------------------------------------- slopes: the nudge h

function drawSlope(plot, { panels, caption, tables, name }) {
  const [numbers] = tables;
  const curve = curvePanel(plot);
  const nudge = plot.chosen_nudge;
  curve.update(nudge);
  // The error for every h of the sweep, the chosen h among them (in order of h) and marked.
  const rows = [...plot.nudges, nudge].sort((a, b) => b.h - a.h);
  const errors = errorPanel({ ...plot, nudges: rows }, true);
  errors.update(rows.indexOf(nudge));
  panels.replaceChildren(ownClip(curve.root, `driven-${name}-curve-clip`), errors.root);
  const at = numberText(plot, "at");
  numbers.fill(`The estimate (f(${at} + h) - f(${at})) / h of the slope ${numberText(plot, "slope")} for every h, `
    + "and how far off it is, as the error plot draws them", ["h", "estimate", "error"],
  plot.nudges.map((n) => [numberText(n, "h"), numberText(n, "ratio"), numberText(n, "error")]));
  caption.textContent = `At ${plot.input} = ${at}, the tangent has slope ${numberText(plot, "slope")}. With h = `
    + `${numberText(nudge, "h")} the estimate (f(${at} + h) - f(${at})) / h is ${numberText(nudge, "ratio")}, off by `
    + `${numberText(nudge, "error")}.`;
  return () => {};
}
