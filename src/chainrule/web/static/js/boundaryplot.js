// The decision-boundary plot of a lesson's "see it work": a network learning the two moons. Left, the
// points over the two regions the network's score splits the plane into, with the boundary (score 0)
// between them; right, the loss after each step. Every number comes from the server
// (lesson.see_it_work.plot), computed by the engine: the frames hold the loss, the accuracy and the
// score on a grid of (cells + 1)^2 points, row by row from the top.
import { el } from "./api.js";
import { numberText } from "./graph.js";
import { svg, scale, frameStepper, choiceGroup } from "./fitplot.js";

const SIZE = 300;
const SUB = 3;  // shaded squares per cell side
const W = 320;
const H = 240;
const PAD = 34;
const TOP = 26;

/** Where the score crosses 0 inside each cell (marching squares on the grid), as one SVG path. */
function boundaryPath(scores, cells, step) {
  const at = (a, b) => scores[b * (cells + 1) + a];
  const parts = [];
  for (let b = 0; b < cells; b += 1) {
    for (let a = 0; a < cells; a += 1) {
      const corners = [[a, b], [a + 1, b], [a + 1, b + 1], [a, b + 1]];
      const values = corners.map(([u, v]) => at(u, v));
      const crossings = [];
      for (let k = 0; k < 4; k += 1) {
        const s0 = values[k], s1 = values[(k + 1) % 4];
        if ((s0 > 0) !== (s1 > 0)) {
          const t = s0 / (s0 - s1);
          const [u0, v0] = corners[k], [u1, v1] = corners[(k + 1) % 4];
          crossings.push([(u0 + (u1 - u0) * t) * step, (v0 + (v1 - v0) * t) * step]);
        }
      }
      for (let k = 0; k + 1 < crossings.length; k += 2) {
        parts.push(`M${crossings[k][0].toFixed(1)} ${crossings[k][1].toFixed(1)}L${crossings[k + 1][0].toFixed(1)} ${crossings[k + 1][1].toFixed(1)}`);
      }
    }
  }
  return parts.join(" ");
}

/** The plane: cells shaded by the side they fall on, the boundary, the points; return update(frame). */
function planePanel(plot) {
  const { x0, x1, y0, y1 } = plot.box;
  const cells = plot.cells;
  const step = SIZE / cells;
  const sx = scale(x0, x1, 0, SIZE);
  const sy = scale(y0, y1, SIZE, 0);
  const root = svg("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, class: "fit-panel boundary-plane", role: "img",
    "aria-label": "The points of the two moons, circles labelled -1 and squares labelled +1, over the two regions the network's score splits the plane into" });
  // Each cell is shaded in SUB x SUB squares, each by the sign of the score blended from the cell's corners
  // (as chainrule.plot shades its pictures), so the shading follows the boundary line closely.
  const shades = [];
  const fine = cells * SUB;
  for (let j = 0; j < fine; j += 1) {
    for (let i = 0; i < fine; i += 1) {
      const rect = svg("rect", { x: (i * step) / SUB, y: (j * step) / SUB, width: step / SUB + 0.5, height: step / SUB + 0.5,
        class: "boundary-cell" });
      shades.push(rect);
      root.append(rect);
    }
  }
  const line = svg("path", { class: "boundary-line", fill: "none" });
  root.append(line);
  plot.points.forEach(([x, y], i) => {
    const cx = sx(x), cy = sy(y);
    root.append(plot.labels[i] > 0
      ? svg("rect", { x: cx - 4, y: cy - 4, width: 8, height: 8, class: "boundary-point plus" })
      : svg("circle", { cx, cy, r: 4.5, class: "boundary-point minus" }));
  });
  const update = (frame) => {
    const at = (a, b) => frame.scores[b * (cells + 1) + a];
    let k = 0;
    for (let j = 0; j < fine; j += 1) {
      const v = (j + 0.5) / SUB, b = Math.min(Math.floor(v), cells - 1), fv = v - b;
      for (let i = 0; i < fine; i += 1) {
        const u = (i + 0.5) / SUB, a = Math.min(Math.floor(u), cells - 1), fu = u - a;
        const upper = at(a, b) + (at(a + 1, b) - at(a, b)) * fu;
        const lower = at(a, b + 1) + (at(a + 1, b + 1) - at(a, b + 1)) * fu;
        shades[k].setAttribute("class", `boundary-cell ${upper + (lower - upper) * fv > 0 ? "plus" : "minus"}`);
        k += 1;
      }
    }
    line.setAttribute("d", boundaryPath(frame.scores, cells, step));
  };
  return { root, update };
}

/** The loss of one run after each recorded step; return update(k). */
function lossPanel(run) {
  const sx = scale(0, run.steps, PAD, W - 12);
  const highest = run.frames.reduce((top, f) => (f.loss > top.loss ? f : top), run.frames[0]);
  const high = highest.loss || 1;
  const sy = scale(0, high, H - PAD, TOP);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "fit-panel", role: "img", "aria-label": "The loss after each step" });
  root.append(
    svg("line", { x1: PAD, y1: H - PAD, x2: W - 8, y2: H - PAD, class: "fit-axis" }),
    svg("line", { x1: PAD, y1: TOP - 6, x2: PAD, y2: H - PAD, class: "fit-axis" }),
    svg("text", { x: W - 8, y: H - 8, "text-anchor": "end", class: "fit-axis-label" }, "step"),
    svg("text", { x: 4, y: 13, class: "fit-axis-label" }, "loss"),
    svg("text", { x: PAD - 4, y: sy(0) + 4, "text-anchor": "end", class: "fit-tick" }, "0"),
    svg("text", { x: PAD + 4, y: sy(high) - 4, class: "fit-tick" }, numberText(highest, "loss")));
  const path = svg("polyline", { class: "fit-loss", fill: "none" });
  const dot = svg("circle", { r: 4, class: "fit-loss-dot" });
  root.append(path, dot);
  const update = (k) => {
    path.setAttribute("points", run.frames.slice(0, k + 1).map((f) => `${sx(f.step)},${sy(f.loss)}`).join(" "));
    dot.setAttribute("cx", sx(run.frames[k].step)); dot.setAttribute("cy", sy(run.frames[k].loss));
  };
  return { root, update };
}

export function renderBoundaryPlot(slot, plot) {
  const holder = el("div", { class: "fit-plot boundary-plot", id: "boundary-plot" });
  const caption = el("p", { class: "fit-caption", "aria-live": "polite" });
  const panels = el("div", { class: "fit-panels" });
  let run = plot.runs.find((r) => r.name === "network") || plot.runs[0];
  let plane = null;
  let loss = null;
  const show = (k) => {
    const frame = run.frames[k];
    plane.update(frame);
    loss.update(k);
    holder.dataset.run = run.name;
    caption.textContent = `${run.label[0].toUpperCase()}${run.label.slice(1)}, learning rate ${numberText(run, "lr")}, `
      + `step ${frame.step} of ${run.steps}: loss = ${numberText(frame, "loss")}, `
      + `${numberText(frame, "accuracy")}% of the points on their side.`;
  };
  const stepper = frameStepper(holder, run.frames.length - 1, show);
  const choose = (chosen) => {
    stepper.stop();
    run = chosen;
    plane = planePanel(plot);
    loss = lossPanel(run);
    panels.replaceChildren(plane.root, loss.root);
    stepper.setLast(run.frames.length - 1);
    stepper.goTo(0);
  };
  const choices = plot.runs.map((r) => ({ id: r.name, label: `${r.label} (${numberText(r, "lr")})`, run: r }));
  const group = choiceGroup("Model and learning rate", "boundary-run", choices,
    choices.find((c) => c.run === run), (choice) => choose(choice.run));
  holder.append(group, stepper.controls, panels,
    el("p", { class: "plot-legend" }, "Circles are labelled -1, squares +1. The shading shows the side of the "
      + "boundary each region is on; the dark line is where the network's score is 0."), caption);
  slot.append(holder);
  choose(run);
  return holder;
}
