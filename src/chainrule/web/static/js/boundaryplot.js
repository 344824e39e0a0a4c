// The decision-boundary plot of a lesson's "see it work": a network learning the two moons. Left, the
// points over the two regions the network's score splits the plane into, with the boundary (score 0)
// between them; right, the loss after each step. Every number comes from the server
// (lesson.see_it_work.plot), computed by the engine: the frames hold the loss, the accuracy and the
// score on a grid of (cells + 1)^2 points, row by row from the top.
import { el } from "./api.js";
import { numberText } from "./graph.js";
import { svg, scale, axes, frameStepper, plotTableView, W, H, PAD, TOP, choiceGroup } from "./fitplot.js";

const SIZE = 300;
const SUB = 6;  // pixels of shading per cell side
// The two sides' colours (RGBA): label -1 light blue, label +1 light orange, as chainrule.plot draws them.
const MINUS = [220, 230, 247, 255];
const PLUS = [251, 227, 214, 255];

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
        parts.push(`M${crossings[k][0]} ${crossings[k][1]}L${crossings[k + 1][0]} ${crossings[k + 1][1]}`);
      }
    }
  }
  return parts.join(" ");
}

/** The plane: cells shaded by the side they fall on, the boundary, the points; return update(frame). */
export function planePanel(plot) {
  const { x0, x1, y0, y1 } = plot.box;
  const cells = plot.cells;
  const step = SIZE / cells;
  const sx = scale(x0, x1, 0, SIZE);
  const sy = scale(y0, y1, SIZE, 0);
  const root = svg("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, class: "fit-panel boundary-plane", role: "img",
    "aria-label": "The points of the two moons, circles labelled -1 and squares labelled +1, over the two regions the network's score splits the plane into" });
  // The shading is one picture, SUB x SUB pixels per cell, each pixel on the side its score (blended from the
  // cell's corners, as chainrule.plot shades its pictures) falls on: one element, however fine.
  const fine = cells * SUB;
  const canvas = document.createElement("canvas");
  canvas.width = fine;
  canvas.height = fine;
  const context = canvas.getContext("2d");
  const pixels = context.createImageData(fine, fine);
  const shading = svg("image", { x: 0, y: 0, width: SIZE, height: SIZE, preserveAspectRatio: "none", class: "boundary-shading" });
  root.append(shading);
  const line = svg("path", { class: "boundary-line", fill: "none" });
  root.append(line);
  plot.points.forEach(([x, y], i) => {
    const cx = sx(x), cy = sy(y);
    root.append(plot.labels[i] > 0
      ? svg("rect", { x: cx - 4, y: cy - 4, width: 8, height: 8, class: "boundary-point plus" })
      : svg("circle", { cx, cy, r: 4.5, class: "boundary-point minus" }));
  });
  // A pixel's centre in cells across the grid, and the cell it falls in.
  const centre = (px) => (px + 0.5) / SUB;
  const cellOf = (px) => Math.min(Math.floor(centre(px)), cells - 1);
  const update = (frame) => {
    const at = (a, b) => frame.scores[b * (cells + 1) + a];
    let plus = 0;
    for (let j = 0; j < fine; j += 1) {
      const b = cellOf(j), fv = centre(j) - b;
      for (let i = 0; i < fine; i += 1) {
        const a = cellOf(i), fu = centre(i) - a;
        const upper = at(a, b) + (at(a + 1, b) - at(a, b)) * fu;
        const lower = at(a, b + 1) + (at(a + 1, b + 1) - at(a, b + 1)) * fu;
        const side = upper + (lower - upper) * fv > 0 ? PLUS : MINUS;
        if (side === PLUS) plus += 1;
        pixels.data.set(side, 4 * (j * fine + i));
      }
    }
    context.putImageData(pixels, 0, 0);
    shading.setAttribute("href", canvas.toDataURL());
    // Which sides the picture shows: "both", or the one side every region is on.
    root.dataset.sides = plus === 0 ? "minus" : plus === fine * fine ? "plus" : "both";
    line.setAttribute("d", boundaryPath(frame.scores, cells, step));
  };
  return { root, update };
}

/** The loss of one run after each recorded step; return update(k). */
export function lossPanel(run) {
  const sx = scale(0, run.steps, PAD, W - 12);
  const highest = run.frames.reduce((top, f) => (f.loss > top.loss ? f : top), run.frames[0]);
  const high = highest.loss || 1;
  const sy = scale(0, high, H - PAD, TOP);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "fit-panel", role: "img", "aria-label": "The loss after each step" });
  axes(root, "step", "loss");
  root.append(
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

/** Fill `table` (plotTableView's) with the side of the boundary at each point of the grid in `frame`. */
export function fillSides(table, plot, frame) {
  table.fill(`Step ${frame.step}: the side of the boundary at each point of a grid over the plane, + where the `
    + "network's score is above 0 (the squares' side, +1), − where it is not (the circles' side, -1)",
  ["", ...plot.columns.map((c) => `x = ${numberText(c, "x")}`)], plot.rows.map((r, b) => [`y = ${numberText(r, "y")}`,
    ...plot.columns.map((_, a) => (frame.scores[b * (plot.cells + 1) + a] > 0 ? "+" : "−"))]));
}

export function renderBoundaryPlot(slot, plot) {
  const holder = el("div", { class: "fit-plot boundary-plot", id: "boundary-plot" });
  const caption = el("p", { class: "fit-caption", "aria-live": "polite" });
  const panels = el("div", { class: "fit-panels" });
  let run = plot.runs.find((r) => r.name === "network") || plot.runs[0];
  let plane = null;
  let loss = null;
  // For a learner who cannot see the picture: the loss after each step, and the side of the boundary each
  // point of the grid is on at this step (its sign, as the shading shows it).
  const view = plotTableView("The network learning the two moons", 2);
  const [losses, sides] = view.tables;
  const named = (r) => `${r.label[0].toUpperCase()}${r.label.slice(1)}, learning rate ${numberText(r, "lr")}`;
  const show = (k) => {
    const frame = run.frames[k];
    plane.update(frame);
    loss.update(k);
    losses.mark(k);
    fillSides(sides, plot, frame);
    holder.dataset.run = run.name;
    caption.textContent = `${named(run)}, `
      + `step ${frame.step} of ${run.steps}: loss = ${numberText(frame, "loss")}, `
      + `${numberText(frame, "accuracy")}% of the points on their side.`;
  };
  const stepper = frameStepper(holder, run.frames.length - 1, show, caption);
  const choose = (chosen) => {
    stepper.stop();
    run = chosen;
    plane = planePanel(plot);
    loss = lossPanel(run);
    panels.replaceChildren(plane.root, loss.root);
    losses.fill(`${named(run)}: the loss and `
      + "the share of the points on their side after each recorded step, as the loss plot draws them",
    ["step", "loss", "points on their side (%)"],
    run.frames.map((f) => [String(f.step), numberText(f, "loss"), numberText(f, "accuracy")]));
    stepper.setLast(run.frames.length - 1);
    stepper.goTo(0);
  };
  const choices = plot.runs.map((r) => ({ id: r.name, label: `${r.label} (${numberText(r, "lr")})`, run: r }));
  const group = choiceGroup("Model and learning rate", "boundary-run", choices,
    choices.find((c) => c.run === run), (choice) => choose(choice.run));
  holder.append(group, stepper.controls, panels,
    el("p", { class: "plot-legend" }, "Circles are labelled -1, squares +1. The shading shows the side of the "
      + "boundary each region is on; the dark line is where the network's score is 0."), caption, view.element);
  slot.append(holder);
  choose(run);
  return holder;
}
