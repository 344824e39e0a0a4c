// The nudge plot of a lesson's "see it work": a function nudged by smaller and smaller h. Left, the curve
// with the line through (x, f(x)) and (x + h, f(x + h)) beside the tangent; right, the error of each
// estimate against h, both on log scales. Every number comes from the server (lesson.see_it_work.plot),
// computed by the engine, with its text.
import { el } from "./api.js";
import { numberText } from "./graph.js";
import { svg, scale, axes, frameStepper, plotTableView, W, H, PAD, TOP } from "./fitplot.js";

const TINY = 1e-17;  // an error of exactly 0 still needs a place on a log scale
const ERROR_TICK_ROOM = 12;  // px more than a fit plot's left margin, for tick texts of five characters

/** The curve, the point, and the secant of the current nudge beside the tangent; return update(nudge). */
export function curvePanel(plot) {
  const xs = plot.curve.map((p) => p[0]), ys = plot.curve.map((p) => p[1]);
  const yMin = Math.min(...ys), yMax = Math.max(...ys);
  const margin = (yMax - yMin) * 0.1 || 1;
  const sx = scale(Math.min(...xs), Math.max(...xs), PAD + 6, W - 12);
  const yLow = yMin - margin, yHigh = yMax + margin;
  const sy = scale(yLow, yHigh, H - PAD, TOP);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "fit-panel nudge-curve", role: "img",
    "aria-label": `The curve of f near x = ${numberText(plot, "at")}, the tangent there, and the line through the two points of the nudge` });
  const clip = svg("clipPath", { id: "nudge-clip" });
  clip.append(svg("rect", { x: PAD, y: TOP, width: W - PAD - 8, height: H - PAD - TOP }));
  root.append(clip);
  axes(root, plot.input, "f");
  const clipped = { "clip-path": "url(#nudge-clip)" };
  root.append(svg("polyline", { ...clipped, class: "nudge-function", fill: "none",
    points: plot.curve.map(([x, y]) => `${sx(x)},${sy(y)}`).join(" ") }));
  const left = xs[0], right = xs[xs.length - 1];
  const through = (slope) => ({ x1: sx(left), y1: sy(plot.value + slope * (left - plot.at)),
    x2: sx(right), y2: sy(plot.value + slope * (right - plot.at)) });
  root.append(svg("line", { ...clipped, ...through(plot.slope), class: "nudge-tangent" }));
  const secant = svg("line", { ...clipped, class: "fit-line nudge-secant" });
  const moved = svg("circle", { r: 4.5, class: "nudge-moved" });
  root.append(secant, svg("circle", { cx: sx(plot.at), cy: sy(plot.value), r: 4.5, class: "fit-point" }), moved);
  const update = (nudge) => {
    for (const [key, value] of Object.entries(through(nudge.ratio))) secant.setAttribute(key, value);
    moved.setAttribute("cx", sx(plot.at + nudge.h));
    moved.setAttribute("cy", sy(nudge.after));
  };
  return { root, update };
}

/** The error of every estimate against h (log-log), revealed up to the current nudge (`whole`: all of it, a
 * driven plot's sweep); return update(k), which marks nudge k. */
export function errorPanel(plot, whole = false) {
  const logH = plot.nudges.map((n) => Math.log10(Math.abs(n.h)));
  const logE = plot.nudges.map((n) => Math.log10(Math.max(n.error, TINY)));
  const hAxis = plot.h_axis, eAxis = plot.error_axis;  // log scales and their ticks, from the server
  // The error ticks ("0.001", "1e-5") are wider than a fit plot's: the axis stands further in, so none is cut.
  const left = PAD + ERROR_TICK_ROOM;
  // h shrinks to the right; the last tick, centred under its point, ends inside the panel ("1e-15" is not cut).
  const sx = scale(hAxis.high, hAxis.low, left + 6, W - 24);
  const sy = scale(eAxis.low, eAxis.high, H - PAD, TOP);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "fit-panel nudge-errors", role: "img",
    "aria-label": "The error of each slope estimate against the size of h, both on log scales" });
  axes(root, "", "error (log scale)", left);
  root.append(svg("text", { x: W - 8, y: 13, "text-anchor": "end", class: "fit-axis-label" }, "h shrinks to the right"));
  for (const tick of eAxis.ticks) {
    root.append(svg("text", { x: left - 4, y: sy(tick.power) + 4, "text-anchor": "end", class: "fit-tick" }, tick.text));
  }
  for (const tick of hAxis.ticks) {
    root.append(svg("text", { x: sx(tick.power), y: H - PAD + 14, "text-anchor": "middle", class: "fit-tick" }, tick.text));
  }
  const path = svg("polyline", { class: "fit-loss", fill: "none" });
  const dot = svg("circle", { r: 4, class: "fit-loss-dot" });
  root.append(path, dot);
  const update = (k) => {
    path.setAttribute("points", logH.slice(0, whole ? logH.length : k + 1).map((h, i) => `${sx(h)},${sy(logE[i])}`).join(" "));
    dot.setAttribute("cx", sx(logH[k])); dot.setAttribute("cy", sy(logE[k]));
  };
  return { root, update };
}

export function renderNudgePlot(slot, plot) {
  const holder = el("div", { class: "fit-plot nudge-plot", id: "nudge-plot" });
  const caption = el("p", { class: "fit-caption", "aria-live": "polite" });
  const curve = curvePanel(plot);
  const errors = errorPanel(plot);
  const at = numberText(plot, "at");
  const view = plotTableView("The nudges");
  const [numbers] = view.tables;
  numbers.fill(`Each nudge h of f at ${plot.input} = ${at}: the estimate (f(${at} + h) - f(${at})) / h of the slope `
    + `${numberText(plot, "slope")} and how far off it is, as the two plots draw them`,
  ["h", `f(${at} + h)`, "estimate", "error"],
  plot.nudges.map((nudge) => [numberText(nudge, "h"), numberText(nudge, "after"), numberText(nudge, "ratio"), numberText(nudge, "error")]));
  const show = (k) => {
    const nudge = plot.nudges[k];
    curve.update(nudge);
    errors.update(k);
    numbers.mark(k);
    caption.textContent = `Nudge ${k + 1} of ${plot.nudges.length}, h = ${numberText(nudge, "h")}: `
      + `(f(${at} + h) - f(${at})) / h = ${numberText(nudge, "ratio")}. The slope is ${numberText(plot, "slope")}, `
      + `so this estimate is off by ${numberText(nudge, "error")}.`;
  };
  const stepper = frameStepper(holder, plot.nudges.length - 1, show, caption);
  holder.append(el("p", { class: "plot-legend" }, "The dashed line is the tangent, with the exact slope; the solid line "
    + "goes through the point and the nudged point."), stepper.controls,
  el("div", { class: "fit-panels" }, curve.root, errors.root), caption, view.element);
  slot.append(holder);
  stepper.goTo(0);
  return holder;
}
